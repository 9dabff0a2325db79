// The deployed resources, found by name rather than by ids copied into
// wrangler.toml. `wrangler deploy` creates or finds the D1 database by its
// `database_name`; the commands that need its id — remote migrations and
// `admin --remote` — look it up with `wrangler d1 list --json` and run
// against a generated config (.wrangler/remote/wrangler.json) that carries it.
import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { unstable_readConfig } from "wrangler";
import { CliError } from "./errors";

export const projectRoot = fileURLToPath(new URL("../..", import.meta.url));
export const CONFIG_PATH = path.join(projectRoot, "wrangler.toml");

// WRANGLER_LOG "log": `--json` output is a log line, which the CLI's own
// quieter setting (connect.ts) would otherwise suppress in the child.
const ENV = {
  ...process.env,
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  CI: "true",
  WRANGLER_LOG: "log",
};

/** Runs wrangler; with `capture`, its stdout is returned instead of shown. */
export function wrangler(args: string[], capture = false): SpawnSyncReturns<string> {
  return spawnSync("npx", ["wrangler", ...args], {
    cwd: projectRoot,
    env: ENV,
    encoding: "utf8",
    stdio: ["inherit", capture ? "pipe" : "inherit", "inherit"],
  });
}

/** The committed configuration, as wrangler reads it. */
export const readConfig = () => unstable_readConfig({ config: CONFIG_PATH });

/** The `DB` binding of wrangler.toml: its database name and migrations folder. */
export function databaseBinding() {
  const binding = readConfig().d1_databases.find((d: { binding: string }) => d.binding === "DB");
  if (!binding?.database_name)
    throw new CliError("wrangler.toml has no [[d1_databases]] binding DB with a database_name");
  return { name: binding.database_name, migrationsDir: binding.migrations_dir ?? "migrations" };
}

/** The id of the account's D1 database called `name`, or undefined when there is none. */
export function findDatabaseId(name: string): string | undefined {
  const listed = wrangler(["d1", "list", "--json"], true);
  if (listed.status !== 0)
    throw new CliError("`wrangler d1 list` failed: log in with `npx wrangler login` (or set CLOUDFLARE_API_TOKEN)");
  const databases = JSON.parse(listed.stdout) as { uuid: string; name: string }[];
  return databases.find((database) => database.name === name)?.uuid;
}

/**
 * Writes the config the remote commands use: wrangler.toml's database with
 * its id, as a remote binding. Answers its path.
 */
export function remoteConfig(databaseId: string): string {
  const config = readConfig();
  const { name, migrationsDir } = databaseBinding();
  const file = path.join(projectRoot, ".wrangler", "remote", "wrangler.json");
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const generated = {
    name: config.name,
    compatibility_date: config.compatibility_date,
    compatibility_flags: config.compatibility_flags,
    d1_databases: [
      {
        binding: "DB",
        database_name: name,
        database_id: databaseId,
        migrations_dir: path.resolve(projectRoot, migrationsDir),
        remote: true,
      },
    ],
  };
  fs.writeFileSync(file, `${JSON.stringify(generated, null, 2)}\n`);
  return file;
}

/** The generated remote config for the deployed database, which must exist. */
export function deployedDatabaseConfig(): string {
  const { name } = databaseBinding();
  const id = findDatabaseId(name);
  if (!id) throw new CliError(`the account has no D1 database "${name}" yet: deploy first (npm run deploy)`);
  return remoteConfig(id);
}
