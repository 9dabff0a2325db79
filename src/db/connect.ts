// The CLI reaches D1 through wrangler's own platform proxy, so it reads and
// writes exactly the state `wrangler dev` uses (`.wrangler/state` or
// `--persist-to DIR`), or, with --remote, the deployed database through the
// remote binding of wrangler.toml's `admin-remote` environment.

import path from "node:path";
import { fileURLToPath } from "node:url";
import { getPlatformProxy } from "wrangler";

export interface Target {
  remote: boolean;
  persistTo?: string;
}

export const projectRoot = fileURLToPath(new URL("../..", import.meta.url));

export async function connect(target: Target) {
  const proxy = await getPlatformProxy<{ DB: D1Database }>({
    configPath: path.join(projectRoot, "wrangler.toml"),
    ...(target.remote
      ? { environment: "admin-remote", remoteBindings: true }
      : {
          remoteBindings: false,
          persist: {
            path: path.join(path.resolve(target.persistTo ?? path.join(projectRoot, ".wrangler/state")), "v3"),
          },
        }),
  });
  return { d1: proxy.env.DB, dispose: () => proxy.dispose() };
}
