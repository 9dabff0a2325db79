// fast-check generators of schedules, shared by the property tests.
import fc from "fast-check";
import { type Interval, WEEKDAYS, type Weekday } from "../src/scheduling/schedule";

/** 0–2 non-overlapping intervals on a quarter-hour grid, closing up to 24:00. */
export const dayHours = fc.uniqueArray(fc.integer({ min: 0, max: 96 }), { maxLength: 4 }).map((cuts) => {
  const sorted = [...cuts].sort((a, b) => a - b);
  const hhmm = (q: number) => `${String(Math.floor(q / 4)).padStart(2, "0")}:${String((q % 4) * 15).padStart(2, "0")}`;
  const intervals: Interval[] = [];
  for (let i = 0; i + 1 < sorted.length; i += 2) intervals.push([hhmm(sorted[i]!), hhmm(sorted[i + 1]!)]);
  return intervals;
});

export const weeklyHours = fc
  .tuple(...WEEKDAYS.map(() => dayHours))
  .map((days) => Object.fromEntries(WEEKDAYS.map((day, i) => [day, days[i]!])) as Record<Weekday, Interval[]>);

export const ZONES = [
  "UTC",
  "America/New_York",
  "Europe/London",
  "Asia/Kolkata",
  "Australia/Lord_Howe",
  "America/Santiago",
  "Pacific/Chatham",
];
