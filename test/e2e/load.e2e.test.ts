// The short form of the load run (the full one is `npm run load`): 50
// concurrent connections of mixed reads, writes, and bookings, reschedules and
// cancels racing for a few slots against a real `wrangler dev`, for 8 s.
// Afterwards (test/bench/load-checks.ts): no 5xx, no lost write, every
// incident in D1 as its last 200 answer left it, never more scheduled
// incidents in a slot than places — in D1, by the answers, at any moment —
// every refusal explained by a full slot or a cancel, remaining read back as
// capacity minus D1's scheduled incidents, and no 429 (the load is spread over
// orgs within the rate limit). The figures line goes to stderr.
import { describe, expect, it } from "vitest";
import { figures, runLoad } from "../bench/load-run";
import { oneHeavyAtATime } from "./harness";

describe("mixed traffic under load", () => {
  it("50 connections for 8 s with reschedules and cancels: no 5xx, no lost write, no overbooked slot, no 429", async () => {
    const report = await oneHeavyAtATime(() =>
      runLoad({
        durationMs: 8_000,
        connections: 50,
        orgs: 5,
        maxRequests: 20_000,
        baselineMs: 1_000,
        // Each step's time, shown if the test fails (a CI run once overran its timeout with no word of where).
        log: (line) => console.error(`${new Date().toISOString()} ${line}`),
      }),
    );
    process.stderr.write(`${figures(report)}\n`);
    expect(report.requests).toBeGreaterThan(0);
    for (const kind of Object.keys(report.byKind) as (keyof typeof report.byKind)[])
      expect(report.byKind[kind], kind).toBeGreaterThan(0);
    // The changes really ran: incidents were moved and cancelled, and some reschedules lost a race.
    expect(report.byKindStatus["reschedule-incident"][200] ?? 0).toBeGreaterThan(0);
    expect(report.byKindStatus["cancel-incident"][200] ?? 0).toBeGreaterThan(0);
    expect(report.byKindStatus["reschedule-incident"][409] ?? 0).toBeGreaterThan(0);
    expect(report.cancelled).toBeGreaterThan(0);
    expect(report.serverErrors).toBe(0);
    expect(report.networkErrors).toBe(0);
    expect(report.unexpected).toEqual([]);
    expect(report.lostWrites).toEqual([]);
    expect(report.unacknowledged).toEqual([]);
    expect(report.wrongState).toEqual([]);
    expect(report.overbooked).toEqual([]);
    expect(report.wrongRefusals).toEqual([]);
    expect(report.negativeRemaining).toBe(0);
    expect(report.remainingWrong).toEqual([]);
    expect(report.tooManyRequests).toBe(0);
    // The slots really raced: bookings or reschedules were refused from slots fought over until full.
    expect(report.contested).toBeGreaterThan(0);
  }, 400_000); // its own run takes 20 to 90 s; the rest is the wait for bench.e2e, if that runs meanwhile
});
