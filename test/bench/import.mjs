// `npm run bench:import [-- ROWS]`: times `accounts import` of ROWS generated
// accounts (default 100,000) into a fresh temporary state folder, through the
// real admin CLI, against a baseline: the same CLI's `key list`, which pays
// the same start-up (Node, tsx, workerd) but writes nothing.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const rows = Number(process.argv[2] ?? 100_000);
const dir = mkdtempSync(path.join(tmpdir(), "fs-import-bench-"));
const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", CI: "true" };
const run = (args) =>
  execFileSync("npx", args, { env, encoding: "utf8", maxBuffer: 1 << 30, stdio: ["ignore", "pipe", "ignore"] });
const admin = (...args) => run(["tsx", "src/cli/main.ts", ...args, "--persist-to", dir, "--json"]);
const timed = (fn) => {
  const started = process.hrtime.bigint();
  const result = fn();
  return { result, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
};

try {
  run(["wrangler", "d1", "migrations", "apply", "DB", "--local", "--persist-to", dir]);
  const { orgId } = JSON.parse(admin("org", "create", "--name", "Bench"));
  const file = path.join(dir, "accounts.csv");
  const lines = ["name,accountType,email,businessPhone,street1,city,postalCode,state,country"];
  for (let i = 0; i < rows; i++) {
    lines.push(
      `"Account ${i}, Inc.",${i % 3},billing${i}@example.com,+1 555 ${String(i).padStart(7, "0")},${i} Main Street,Springfield,${String(i % 99999).padStart(5, "0")},IL,US`,
    );
  }
  writeFileSync(file, `${lines.join("\n")}\n`);

  const baseline = timed(() => admin("key", "list", "--org", orgId));
  const imported = timed(() => JSON.parse(admin("accounts", "import", "--org", orgId, "--file", file)));
  if (imported.result.imported !== rows || imported.result.accounts.length !== rows)
    throw new Error("the import did not report every row");
  const figures = {
    rows,
    importSeconds: +imported.seconds.toFixed(2),
    baselineSeconds: +baseline.seconds.toFixed(2),
    ratioToBaseline: +(imported.seconds / baseline.seconds).toFixed(2),
    rowsPerSecond: Math.round(rows / imported.seconds),
  };
  console.log(JSON.stringify(figures));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
