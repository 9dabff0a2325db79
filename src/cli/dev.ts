// `npm run dev`: migrate the local database, seed the demo org (idempotent),
// then serve on http://127.0.0.1:8787. Extra arguments go to `wrangler dev`.
import { spawnSync } from "node:child_process";

const env = {
  ...process.env,
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  CI: process.env.CI ?? "true",
};
const step = (args: string[]) => {
  const { status } = spawnSync("npx", args, { stdio: "inherit", env });
  if (status !== 0) process.exit(status ?? 1);
};

step(["wrangler", "d1", "migrations", "apply", "DB", "--local"]);
step(["tsx", "src/cli/main.ts", "demo", "seed", "--local"]);
step(["wrangler", "dev", "--ip", "127.0.0.1", "--port", "8787", ...process.argv.slice(2)]);
