import { describe, expect, it } from "vitest";
import { MAX_INSTANT, MIN_INSTANT, parseDateOrDateTime, parseDateTime, toIso } from "../../src/lib/datetime";

describe("parseDateTime", () => {
  it.each([
    ["2026-11-23T14:00:00Z", "2026-11-23T14:00:00.000Z"],
    ["2026-11-23T09:00:00-05:00", "2026-11-23T14:00:00.000Z"],
    ["2026-11-23t14:00z", "2026-11-23T14:00:00.000Z"],
    ["2026-11-23T19:30:00+05:30", "2026-11-23T14:00:00.000Z"],
    ["2026-11-23T14:00:00.1234567Z", "2026-11-23T14:00:00.123Z"],
    ["2026-11-23T14:00:00.5+00:00", "2026-11-23T14:00:00.500Z"],
    ["2024-02-29T00:00:00Z", "2024-02-29T00:00:00.000Z"],
    ["0099-01-01T00:00:00Z", "0099-01-01T00:00:00.000Z"],
    ["2026-01-01T00:30:00+01:00", "2025-12-31T23:30:00.000Z"],
    // The two ends of the range, reached through offsets.
    ["0001-01-01T00:00:00-00:01", "0001-01-01T00:01:00.000Z"],
    ["0001-01-01T05:00:00+05:00", "0001-01-01T00:00:00.000Z"],
    ["9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"],
    ["9999-12-31T09:59:59.999-14:00", "9999-12-31T23:59:59.999Z"],
  ])("%s → %s", (input, expected) => {
    expect(new Date(parseDateTime(input)!).toISOString()).toBe(expected);
  });

  it.each([
    "2026-11-23T14:00:00", // no zone: its hour would be a guess
    "2026-02-30T10:00:00Z",
    "2025-02-29T10:00:00Z",
    "2026-13-01T10:00:00Z",
    "2026-11-23T24:00:00Z",
    "2026-11-23T14:60:00Z",
    "2026-11-23T14:00:60Z",
    "2026-11-23T14:00:00+24:00",
    "2026-11-23T14:00:00+05",
    "2026-11-23 14:00:00Z",
    "2026-11-23",
    "",
    "0000-01-01T00:00:00Z",
    // In range as written, outside it in UTC: toISOString would write "0000-…" or "+010000-…".
    "0001-01-01T00:00:00+00:01",
    "9999-12-31T23:00:00-14:00",
    "9999-12-31T23:59:59.999-00:01",
    "tomorrow at noon",
  ])("refuses %j", (input) => {
    expect(parseDateTime(input)).toBeNull();
  });
});

describe("parseDateOrDateTime", () => {
  it("reads a plain date as 00:00 UTC", () => {
    expect(new Date(parseDateOrDateTime("2026-12-01")!).toISOString()).toBe("2026-12-01T00:00:00.000Z");
  });
  it("reads both ends of the range as plain dates, and refuses no instant it can write", () => {
    expect(new Date(parseDateOrDateTime("0001-01-01")!).toISOString()).toBe("0001-01-01T00:00:00.000Z");
    expect(new Date(parseDateOrDateTime("9999-12-31")!).toISOString()).toBe("9999-12-31T00:00:00.000Z");
  });
  it("refuses an impossible plain date", () => {
    expect(parseDateOrDateTime("2026-02-30")).toBeNull();
  });
});

describe("toIso", () => {
  it("writes what toISOString writes, at the ends of the range, around 1970 and across a random spread", () => {
    const instants = [MIN_INSTANT, MAX_INSTANT, -1, 0, 1, 86_399_999, 86_400_000, -86_400_001, 951_782_400_000];
    for (let i = 0; i < 20_000; i++)
      instants.push(Math.floor(MIN_INSTANT + Math.random() * (MAX_INSTANT - MIN_INSTANT)));
    for (const instant of instants) expect(toIso(instant)).toBe(new Date(instant).toISOString());
  });

  it("leaves to toISOString what the range does not hold (and what it refuses)", () => {
    for (const instant of [MAX_INSTANT + 1, MIN_INSTANT - 1, 8.64e15])
      expect(toIso(instant)).toBe(new Date(instant).toISOString());
    expect(() => toIso(Number.NaN)).toThrow(RangeError);
  });
});
