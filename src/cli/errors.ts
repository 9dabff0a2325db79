/** A problem with the operator's input: printed as a message, never as a stack. */
export class CliError extends Error {}

/** An unexpected error as the CLI reports it: its message and its cause's, and the fix for a missing table. */
export function describeUnexpected(error: unknown): string {
  const text =
    error instanceof Error
      ? `${error.message} ${error.cause instanceof Error ? error.cause.message : ""}`
      : String(error);
  if (/no such table/.test(text))
    return `${text.trim()} — apply the migrations first: npx wrangler d1 migrations apply DB --local`;
  return text.trim();
}

// Local state is one SQLite file that a running `wrangler dev` also writes;
// a write of ours that meets its lock fails whole and wrote nothing (workerd
// logs SQLITE_BUSY and throws only "internal error; reference = …"), and
// every command is a single batch or reads before one write, so the command
// is simply run again.
const LOCKED = /SQLITE_BUSY|database is locked|internal error; reference = /;

/** Runs `run`, again (up to `attempts` in all) while it fails on the local database's lock. */
export async function whileLocked<T>(run: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      const text = error instanceof Error ? `${error.message} ${String(error.cause ?? "")}` : String(error);
      if (attempt >= attempts || !LOCKED.test(text)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}
