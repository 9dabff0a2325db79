// Serves the floor worker (index.ts) for the benchmarks (npm run bench, npm run bench:profile).
import path from "node:path";
import { DevServer, d1Execute, freePort, ROOT } from "../../e2e/harness";

export const FLOOR_DIR = path.join(ROOT, "test/bench/floor");

/** The floor worker under its own `wrangler dev`, with the one account it reads and the table its writes fill. */
export async function startFloor(dir: string): Promise<DevServer> {
  const config = path.join(FLOOR_DIR, "wrangler.toml");
  await d1Execute(
    dir,
    "CREATE TABLE accounts (org_id TEXT NOT NULL, id TEXT NOT NULL, name TEXT NOT NULL, city TEXT, PRIMARY KEY (org_id, id)); INSERT INTO accounts VALUES ('org_floor', 'acct_floor', 'Floor Ltd', 'Leeds'); CREATE TABLE leads (org_id TEXT NOT NULL, id TEXT NOT NULL, first_name TEXT, last_name TEXT, email TEXT, created_at INTEGER NOT NULL, PRIMARY KEY (org_id, id));",
    config,
  );
  return DevServer.start(dir, await freePort(), ["--config", config]);
}
