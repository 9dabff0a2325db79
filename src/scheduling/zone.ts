// Wall-clock ↔ instant conversions, by Temporal's rules (temporal-polyfill
// until runtimes ship Temporal natively).
import { Temporal } from "temporal-polyfill";

export type PlainDate = Temporal.PlainDate;

/**
 * The instant of `minutes` after midnight on local `date`, by the "compatible"
 * rule: a time in a DST gap moves forward by the gap, an ambiguous time takes
 * the earlier instant. 1440 ("24:00") is midnight at the start of the next day.
 */
export function localToInstant(date: PlainDate, minutes: number, timeZone: string): number {
  const day = minutes >= 1440 ? date.add({ days: 1 }) : date;
  const m = minutes % 1440;
  return day
    .toPlainDateTime({ hour: Math.floor(m / 60), minute: m % 60 })
    .toZonedDateTime(timeZone, { disambiguation: "compatible" }).epochMilliseconds;
}

export function localDateOf(instant: number, timeZone: string): PlainDate {
  return Temporal.Instant.fromEpochMilliseconds(instant).toZonedDateTimeISO(timeZone).toPlainDate();
}

/** "2026-11-23T09:00:00-05:00": wall-clock time with its numeric offset (never "Z"). */
export function localIso(instant: number, timeZone: string): string {
  return Temporal.Instant.fromEpochMilliseconds(instant)
    .toZonedDateTimeISO(timeZone)
    .toString({ smallestUnit: "second", timeZoneName: "never" });
}
