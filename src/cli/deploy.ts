// `npm run deploy`: the one command a Cloudflare dashboard build (Workers
// Builds, or a Deploy to Cloudflare button) or an operator runs. Nothing in
// wrangler.toml is edited and no id is copied:
//   1. the D1 database named in wrangler.toml is created if the account has none;
//   2. the webhook queues (and dead-letter queue) are created if missing;
//   3. pending migrations are applied to the database;
//   4. the worker is deployed — after the migrations, so new code never meets
//      an old schema (a migration never drops or renames what the old code
//      reads, so it keeps working on the new one until it is replaced:
//      docs/development.md, "Schema changes");
//   5. a missing WEBHOOK_SECRET_KEY is reported (the worker then sends no
//      webhook and logs why; everything else serves).

import { databaseBinding, findDatabaseId, readConfig, remoteConfig, wrangler } from "./cloudflare";
import { CliError } from "./errors";

function step(title: string, args: string[]) {
  process.stderr.write(`\n▸ ${title}: wrangler ${args.join(" ")}\n`);
  const { status } = wrangler(args);
  if (status !== 0) throw new CliError(`${title} failed (wrangler exited with ${status})`);
}

/** Every queue wrangler.toml names: producers, consumers and dead-letter queues. */
function queueNames(): string[] {
  const { queues } = readConfig();
  const names = [
    ...(queues.producers ?? []).map((p: { queue: string }) => p.queue),
    ...(queues.consumers ?? []).flatMap((c: { queue: string; dead_letter_queue?: string }) => [
      c.queue,
      ...(c.dead_letter_queue ? [c.dead_letter_queue] : []),
    ]),
  ];
  return [...new Set(names)];
}

function main() {
  const { name } = databaseBinding();
  let id = findDatabaseId(name);
  if (!id) {
    step(`create the D1 database "${name}"`, ["d1", "create", name]);
    id = findDatabaseId(name);
    if (!id) throw new CliError(`the D1 database "${name}" was created but cannot be found`);
  }
  for (const queue of queueNames()) {
    if (wrangler(["queues", "info", queue], true).status !== 0)
      step(`create the queue "${queue}"`, ["queues", "create", queue]);
  }
  step("apply pending migrations", ["d1", "migrations", "apply", "DB", "--remote", "--config", remoteConfig(id)]);
  step("deploy the worker", ["deploy"]);
  const secrets = wrangler(["secret", "list", "--format", "json"], true);
  const names = secrets.status === 0 ? (JSON.parse(secrets.stdout) as { name: string }[]).map((s) => s.name) : [];
  if (!names.includes("WEBHOOK_SECRET_KEY")) {
    process.stderr.write(
      "\n⚠ WEBHOOK_SECRET_KEY is not set: the API serves, but no webhook is sent until it is.\n" +
        "  openssl rand -base64 32 | npx wrangler secret put WEBHOOK_SECRET_KEY\n",
    );
  }
}

try {
  main();
} catch (error) {
  process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
