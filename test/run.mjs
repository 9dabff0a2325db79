// `npm test`: type check, lint, then every vitest project; prints the closing
// `N passed, N failed` line CI reads, and exits non-zero on any failure.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";

const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" };
const run = (command, args) => spawnSync(command, args, { stdio: "inherit", env }).status === 0;

let passed = 0;
let failed = 0;
for (const [name, args] of [
  ["typecheck", ["tsc", "--noEmit"]],
  ["lint", ["biome", "check", "--error-on-warnings", "."]],
]) {
  const ok = run("npx", args);
  console.log(`${ok ? "✓" : "✗"} ${name}`);
  ok ? passed++ : failed++;
}

const report = ".test-results/vitest.json";
mkdirSync(".test-results", { recursive: true });
rmSync(report, { force: true });
const vitestOk = run("npx", [
  "vitest",
  "run",
  "--reporter=default",
  "--reporter=json",
  `--outputFile.json=${report}`,
  ...process.argv.slice(2),
]);
try {
  const results = JSON.parse(readFileSync(report, "utf8"));
  passed += results.numPassedTests;
  failed += results.numFailedTests;
  if (!vitestOk && results.numFailedTests === 0) failed++; // a suite that failed to load
} catch {
  failed++; // vitest crashed before writing its report
}
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 && vitestOk ? 0 : 1;
