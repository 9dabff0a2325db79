// Wall-clock ↔ instant conversions in an IANA zone, by Temporal's rules, on
// the runtime's own time-zone data (Intl). Written here rather than taken from
// temporal-polyfill, which cost a sixth of the worker's gzip budget and 11 ms
// of its startup (docs/decisions.md); test/unit/zone.test.ts holds this
// module to the polyfill over every zone the runtime knows.

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const DAY = 1440 * MINUTE;

/** A calendar date: days since 1970-01-01, proleptic Gregorian. */
export type LocalDate = number;

const formatters = new Map<string, Intl.DateTimeFormat>();

/** One formatter per zone (building one costs far more than using it); zones are validated, so the map is bounded. */
function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      era: "short",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** The zone's UTC offset at `instant`, in milliseconds (whole seconds: the tz database has no finer offsets). */
function offsetAt(instant: number, timeZone: string): number {
  const at = Math.floor(instant / SECOND) * SECOND;
  const field: Partial<Record<Intl.DateTimeFormatPartTypes, string>> = {};
  for (const { type, value } of formatterOf(timeZone).formatToParts(at)) field[type] = value;
  const year = Number(field.year);
  const wall = new Date(0);
  wall.setUTCFullYear(field.era === "BC" ? 1 - year : year, Number(field.month) - 1, Number(field.day));
  wall.setUTCHours(Number(field.hour), Number(field.minute), Number(field.second));
  return wall.getTime() - at;
}

/** The instants whose wall-clock time in the zone is `wall` (none in a gap, two in an overlap), ascending. */
function possibleInstants(wall: number, timeZone: string): number[] {
  const offsets = new Set([offsetAt(wall - DAY, timeZone), offsetAt(wall + DAY, timeZone)]);
  return [...offsets]
    .map((offset) => wall - offset)
    .filter((instant) => instant + offsetAt(instant, timeZone) === wall)
    .sort((a, b) => a - b);
}

/**
 * The instant of `minutes` after midnight on local `date`, by Temporal's
 * "compatible" rule: an ambiguous time takes the earlier instant, a time in a
 * gap moves forward by the gap. 1440 ("24:00") is midnight at the start of the
 * next day.
 */
export function localToInstant(date: LocalDate, minutes: number, timeZone: string): number {
  const wall = date * DAY + minutes * MINUTE;
  const possible = possibleInstants(wall, timeZone);
  if (possible.length > 0) return possible[0]!;
  const before = offsetAt(wall - DAY, timeZone);
  const gap = offsetAt(wall + DAY, timeZone) - before;
  // (Were the zone to change twice within two days, the offset before the gap still gives an instant.)
  return possibleInstants(wall + gap, timeZone).at(-1) ?? wall - before;
}

export function localDateOf(instant: number, timeZone: string): LocalDate {
  return Math.floor((instant + offsetAt(instant, timeZone)) / DAY);
}

/** "2026-11-23" (years beyond 0000–9999 as ±YYYYYY, as Temporal writes them). */
export const dateString = (date: LocalDate): string => new Date(date * DAY).toISOString().slice(0, -14);

/** ISO weekday: 1 is Monday, 7 is Sunday (1970-01-01 was a Thursday). */
export const weekday = (date: LocalDate): number => ((((date + 3) % 7) + 7) % 7) + 1;

/** "2026-11-23T09:00:00-05:00": wall-clock time to the second with its offset to the minute (never "Z"). */
export function localIso(instant: number, timeZone: string): string {
  const offset = offsetAt(instant, timeZone);
  const minutes = Math.round(Math.abs(offset) / MINUTE);
  const sign = offset < 0 && minutes > 0 ? "-" : "+";
  const hh = String(Math.floor(minutes / 60)).padStart(2, "0");
  const mm = String(minutes % 60).padStart(2, "0");
  return `${new Date(instant + offset).toISOString().slice(0, -5)}${sign}${hh}:${mm}`;
}
