// When a plan's next visit is decided (src/scheduling/plans.ts): the
// look-ahead, whether a due date is decidable at an instant, the instant it
// becomes so, and a plan once some of its visits are decided — exact values
// in America/New_York across DST (it begins on Sunday 2026-03-08).
import { describe, expect, it } from "vitest";
import { afterDecided, type Cadence, decidable, decideAtOf, lookaheadDays } from "../../src/scheduling/plans";
import { DEFAULT_SCHEDULE, type Schedule } from "../../src/scheduling/schedule";

const NY: Schedule = { ...DEFAULT_SCHEDULE, timeZone: "America/New_York", horizonDays: 30 };
const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());

describe("lookaheadDays: 14 days, or the horizon when shorter", () => {
  it.each([
    [30, 14],
    [14, 14],
    [7, 7],
  ])("horizon %d: %d", (horizonDays, expected) => {
    expect(lookaheadDays({ ...NY, horizonDays })).toBe(expected);
  });
});

describe("decidable: due on or before the local today plus the look-ahead", () => {
  it.each<[string, number, string, boolean]>([
    ["2026-03-14", 30, "2026-03-01T04:59:59.999Z", true],
    ["2026-03-15", 30, "2026-03-01T04:59:59.999Z", false],
    ["2026-03-15", 30, "2026-03-01T05:00:00.000Z", true],
    ["2026-03-16", 30, "2026-03-01T05:00:00.000Z", false],
    ["2026-03-08", 7, "2026-03-01T05:00:00.000Z", true],
    ["2026-03-09", 7, "2026-03-01T05:00:00.000Z", false],
  ])("%s, horizon %d, at %s: %s", (date, horizonDays, now, expected) => {
    expect(decidable(date, { ...NY, horizonDays }, Date.parse(now))).toBe(expected);
  });
});

describe("decideAtOf: the local midnight the look-ahead before the due date", () => {
  it.each<[string, number, string]>([
    ["2026-03-22", 30, "2026-03-08T05:00:00.000Z"],
    ["2026-03-23", 30, "2026-03-09T04:00:00.000Z"],
    ["2026-03-22", 7, "2026-03-15T04:00:00.000Z"],
  ])("%s, horizon %d: %s", (date, horizonDays, expected) => {
    const schedule = { ...NY, horizonDays };
    const at = decideAtOf(date, schedule);
    expect(iso(at)).toBe(expected);
    expect([decidable(date, schedule, at - 1), decidable(date, schedule, at)]).toEqual([false, true]);
  });
});

describe("afterDecided: completed after its last visit, else the next due date and when it is decidable", () => {
  const monthly: Cadence = { everyCount: 1, everyUnit: "month", visits: 3, firstVisitDate: "2026-01-31" };
  const fortnightly: Cadence = { everyCount: 2, everyUnit: "week", visits: null, firstVisitDate: "2026-03-02" };
  it.each<[string, Cadence, number, string, string | null, string | null]>([
    ["the second of three, clamped to February's end", monthly, 1, "active", "2026-02-28", "2026-02-14T05:00:00.000Z"],
    ["all three made", monthly, 3, "completed", null, null],
    ["more than all", monthly, 4, "completed", null, null],
    ["the sixth of an open-ended plan, after DST", fortnightly, 5, "active", "2026-05-11", "2026-04-27T04:00:00.000Z"],
  ])("%s", (_, plan, made, status, nextDueDate, decideAt) => {
    const after = afterDecided(plan, made, NY);
    expect({ ...after, decideAt: iso(after.decideAt) }).toEqual({ status, visitsMade: made, nextDueDate, decideAt });
  });
});
