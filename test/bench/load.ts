// `npm run load`: the full load run — 50 concurrent connections of mixed
// traffic (reads, writes, bookings, reschedules and cancels) against a real `wrangler dev` for up to 30 s (override with
// LOAD_SECONDS, LOAD_CONNECTIONS, LOAD_ORGS), then every check of
// test/bench/load-run.ts. Prints the figures line; exits non-zero on any violation.
import { figures, type LoadReport, runLoad } from "./load-run";

const seconds = Math.min(30, Number(process.env.LOAD_SECONDS ?? 30));
const connections = Number(process.env.LOAD_CONNECTIONS ?? 50);
const orgs = Number(process.env.LOAD_ORGS ?? 16);

function violations(r: LoadReport): string[] {
  const found: string[] = [];
  if (r.serverErrors > 0) found.push(`${r.serverErrors} responses were 5xx`);
  if (r.networkErrors > 0) found.push(`${r.networkErrors} requests got no answer`);
  if (r.tooManyRequests > 0) found.push(`${r.tooManyRequests} requests were refused with 429`);
  if (r.negativeRemaining > 0) found.push(`${r.negativeRemaining} slot objects had a negative remaining`);
  if (r.contested === 0) found.push("no booking or reschedule was refused as full: the slots never raced");
  if ((r.byKindStatus["reschedule-incident"][200] ?? 0) === 0) found.push("no reschedule was answered 200");
  if ((r.byKindStatus["cancel-incident"][200] ?? 0) === 0) found.push("no cancel was answered 200");
  for (const [name, list] of Object.entries({
    unexpected: r.unexpected,
    "lost write": r.lostWrites,
    "unacknowledged row": r.unacknowledged,
    "incident not as its last 200": r.wrongState,
    overbooked: r.overbooked,
    "refusal not explained": r.wrongRefusals,
    "remaining read back wrong": r.remainingWrong,
  })) {
    for (const item of list.slice(0, 20)) found.push(`${name}: ${item}`);
    if (list.length > 20) found.push(`${name}: … and ${list.length - 20} more`);
  }
  return found;
}

const report = await runLoad({
  durationMs: seconds * 1000,
  connections,
  orgs,
  maxRequests: 200_000,
  log: (line) => process.stderr.write(`${line}\n`),
});
console.log(figures(report));
const found = violations(report);
for (const line of found) console.error(`VIOLATION ${line}`);
process.exitCode = found.length === 0 ? 0 : 1;
