// Weekly hours the tests use again and again.
import { type Interval, WEEKDAYS, type Weekday } from "../src/scheduling/schedule";

/** The same opening hours on all seven days. */
export const everyDay = (...intervals: Interval[]) =>
  Object.fromEntries(WEEKDAYS.map((day) => [day, intervals])) as Record<Weekday, Interval[]>;

/** Open around the clock, every day: slots then depend on nothing but the clock. */
export const OPEN_ALWAYS = everyDay(["00:00", "24:00"]);
