// The short form of the load run (the full one is `npm run load`): 50
// concurrent connections of mixed reads, writes and bookings racing for a few
// slots against a real `wrangler dev`, for 8 s. Afterwards: no 5xx, no lost
// write, every slot booked exactly min(attempts, capacity) — never beyond it —
// in D1 and by the answers, no negative remaining, and no 429 (the load is
// spread over orgs within the rate limit). The figures line goes to stderr.
import { describe, expect, it } from "vitest";
import { figures, runLoad } from "../bench/load-run";

describe("mixed traffic under load", () => {
  it("50 connections for 8 s: no 5xx, no lost write, no overbooked slot, no 429", async () => {
    const report = await runLoad({
      durationMs: 8_000,
      connections: 50,
      orgs: 5,
      maxRequests: 20_000,
      baselineMs: 1_000,
    });
    process.stderr.write(`${figures(report)}\n`);
    expect(report.requests).toBeGreaterThan(0);
    for (const kind of Object.keys(report.byKind) as (keyof typeof report.byKind)[])
      expect(report.byKind[kind], kind).toBeGreaterThan(0);
    expect(report.serverErrors).toBe(0);
    expect(report.networkErrors).toBe(0);
    expect(report.unexpected).toEqual([]);
    expect(report.lostWrites).toEqual([]);
    expect(report.unacknowledged).toEqual([]);
    expect(report.overbooked).toEqual([]);
    expect(report.underbooked).toEqual([]);
    expect(report.negativeRemaining).toBe(0);
    expect(report.remainingWrong).toEqual([]);
    expect(report.tooManyRequests).toBe(0);
    // The bookings really raced: slots were fought over until full.
    expect(report.contested).toBeGreaterThan(0);
  }, 90_000);
});
