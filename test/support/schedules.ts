// Weekly hours the tests use again and again, and fast-check generators of
// schedules for the property tests. No worker code runs here: e2e uses it too.
import fc from "fast-check";
import { type Interval, type Schedule, WEEKDAYS, type Weekday } from "../../src/scheduling/schedule";
import { type VisitRequest, visitOf } from "../../src/scheduling/visits";

/** The same opening hours on all seven days. */
export const everyDay = (...intervals: Interval[]) =>
  Object.fromEntries(WEEKDAYS.map((day) => [day, intervals])) as Record<Weekday, Interval[]>;

/** Open around the clock, every day: slots then depend on nothing but the clock. */
export const OPEN_ALWAYS = everyDay(["00:00", "24:00"]);

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

/** The request of a visit of no service: one slot long, crew mode, no place. */
export const slotRequest = (schedule: Schedule): VisitRequest => ({
  schedule,
  visit: visitOf(schedule, null),
  technicians: [],
  postalCode: null,
});
