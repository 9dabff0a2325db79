// The CLI reaches D1 through wrangler's own platform proxy, so it reads and
// writes exactly the state `wrangler dev` uses (`.wrangler/state` or
// `--persist-to DIR`), or, with --remote, the deployed database through a
// remote binding, found by its name (src/cli/cloudflare.ts).

import path from "node:path";
import { getPlatformProxy } from "wrangler";
import type { KeyEnv } from "../webhooks/key";
import { CONFIG_PATH, deployedDatabaseConfig, projectRoot } from "./cloudflare";

export interface Target {
  remote: boolean;
  persistTo?: string;
}

export async function connect(target: Target) {
  // wrangler's informational lines ("Using secrets defined in .dev.vars") go
  // to stdout, which --json keeps for the one JSON object; warnings go to stderr.
  process.env.WRANGLER_LOG ??= "warn";
  const proxy = await getPlatformProxy<{ DB: D1Database } & KeyEnv>({
    ...(target.remote
      ? { configPath: deployedDatabaseConfig(), remoteBindings: true }
      : {
          configPath: CONFIG_PATH,
          remoteBindings: false,
          persist: {
            path: path.join(path.resolve(target.persistTo ?? path.join(projectRoot, ".wrangler/state")), "v3"),
          },
        }),
  });
  // The webhook key: locally the one `wrangler dev` uses (.dev.vars); for the
  // deployed database the operator's own, from the environment (the Worker
  // secret cannot be read back), and never the local default.
  const keyEnv: KeyEnv = target.remote
    ? { WEBHOOK_SECRET_KEY: process.env.WEBHOOK_SECRET_KEY }
    : { WEBHOOK_SECRET_KEY: proxy.env.WEBHOOK_SECRET_KEY, LOCAL_DEVELOPMENT: proxy.env.LOCAL_DEVELOPMENT };
  return { d1: proxy.env.DB, keyEnv, dispose: () => proxy.dispose() };
}
