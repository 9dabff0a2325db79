// `npm run dev`: migrate the local database, seed the demo org (idempotent),
// then serve on http://127.0.0.1:8787. Extra arguments go to `wrangler dev`.
// wrangler dev runs no Cron Triggers by itself: this script fires the
// minute's one (the webhook sweep, which also sends `webhook replay`s) through
// wrangler's local trigger URL, as Cloudflare would.
import { spawn, spawnSync } from "node:child_process";
import { DEMO, demoDate } from "../db/demo";
import { dateString } from "../scheduling/zone";

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
console.log(
  `The demo's dispatch board: http://127.0.0.1:8787/board?date=${dateString(demoDate(Date.now()))} (${DEMO.orgId}, ${DEMO.apiKey})`,
);
// The minute's Cron Trigger, run through wrangler's /__scheduled route (--test-scheduled): its
// /cdn-cgi/handler/scheduled answers an exception when the Worker has static assets (workers-sdk#9882).
const server = spawn(
  "npx",
  ["wrangler", "dev", "--ip", "127.0.0.1", "--port", "8787", "--test-scheduled", ...process.argv.slice(2)],
  { stdio: "inherit", env },
);
const tick = setInterval(() => {
  fetch("http://127.0.0.1:8787/__scheduled?cron=*+*+*+*+*").catch(() => {});
}, 60_000);
server.on("exit", (code) => {
  clearInterval(tick);
  process.exit(code ?? 1);
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => server.kill(signal));
