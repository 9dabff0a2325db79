// Wall-clock ↔ instant conversions in an IANA zone, by Temporal's rules, on
// the runtime's own time-zone data (Intl). Written here rather than taken from
// temporal-polyfill, which cost a sixth of the worker's gzip budget and 11 ms
// of its startup (docs/decisions.md); test/unit/zone.test.ts holds this
// module to the polyfill over every zone the runtime knows.

import { MINUTE, toIso } from "../lib/datetime";

const SECOND = 1000;
const DAY = 1440 * MINUTE;

/** A calendar date: days since 1970-01-01, proleptic Gregorian. */
export type LocalDate = number;

/** Per zone: its formatter, and the offset at the start of each UTC day asked about (ms, keyed by day number). */
interface Zone {
  formatter: Intl.DateTimeFormat;
  dayStarts: Map<number, number>;
}

// Zones are validated, so the map of zones is bounded; days are not (instants
// come from clients), so the days of all zones are forgotten when too many.
const DAYS_KEPT = 10_000;
const zones = new Map<string, Zone>();
let daysKept = 0;

/** Empties every cache of this module: for benchmarks and tests, to time or check a fresh isolate's first call. */
export function forgetZoneCaches() {
  zones.clear();
  offsetTables.clear();
  daysKept = 0;
}

/** A zone's caches; building its formatter costs far more than using it. */
function zoneOf(timeZone: string): Zone {
  let zone = zones.get(timeZone);
  if (!zone) {
    const formatter = new Intl.DateTimeFormat("en-US", {
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
    zone = { formatter, dayStarts: new Map() };
    zones.set(timeZone, zone);
  }
  return zone;
}

/** The zone's UTC offset at `instant` by Intl, in milliseconds (whole seconds: the tz database has no finer offsets). */
function intlOffsetAt(instant: number, formatter: Intl.DateTimeFormat): number {
  const at = Math.floor(instant / SECOND) * SECOND;
  const field: Partial<Record<Intl.DateTimeFormatPartTypes, string>> = {};
  for (const { type, value } of formatter.formatToParts(at)) field[type] = value;
  const year = Number(field.year);
  const wall = new Date(0);
  wall.setUTCFullYear(field.era === "BC" ? 1 - year : year, Number(field.month) - 1, Number(field.day));
  wall.setUTCHours(Number(field.hour), Number(field.minute), Number(field.second));
  return wall.getTime() - at;
}

/** The offset at the start of UTC day `day`, remembered. */
function dayStartOffset(zone: Zone, day: number): number {
  let offset = zone.dayStarts.get(day);
  if (offset === undefined) {
    offset = intlOffsetAt(day * DAY, zone.formatter);
    if (daysKept >= DAYS_KEPT) {
      for (const { dayStarts } of zones.values()) dayStarts.clear();
      daysKept = 0;
    }
    zone.dayStarts.set(day, offset);
    daysKept++;
  }
  return offset;
}

/**
 * The zone's UTC offset at `instant`, in milliseconds. Intl costs microseconds
 * a call, so the offset is read once per UTC day: when a day starts with the
 * same offset as the next, the whole day has it; when they differ, the day
 * holds a change and Intl answers. This takes no zone to change its offset
 * twice within 24 hours (and so back unseen): no two changes of any zone are
 * within days of each other (test/unit/zone.test.ts, over the runtime's
 * changes from 1900 to 2100).
 */
function offsetAt(instant: number, timeZone: string): number {
  const zone = zoneOf(timeZone);
  const day = Math.floor(instant / DAY);
  const offset = dayStartOffset(zone, day);
  return offset === dayStartOffset(zone, day + 1) ? offset : intlOffsetAt(instant, zone.formatter);
}

/** Per zone and span of UTC days, offsetsJson's answer. */
const offsetTables = new Map<string, string>();

/**
 * The zone's offsets over the UTC days [fromDay, untilDay), as JSON for SQL
 * (src/db/local-times.ts): `[[from, offset ms, "+hh:mm"], …]`, the first
 * from the span's start, then one per change, each found to the second
 * (offsetAt's rule: no zone changes twice within a day). Remembered.
 */
export function offsetsJson(fromDay: number, untilDay: number, timeZone: string): string {
  const key = `${timeZone} ${fromDay} ${untilDay}`;
  let table = offsetTables.get(key);
  if (table === undefined) {
    const zone = zoneOf(timeZone);
    const rows: [number, number, string][] = [];
    for (let day = fromDay, offset = Number.NaN; day <= untilDay; day++) {
      const next = dayStartOffset(zone, day);
      if (next !== offset && day > fromDay) {
        // The change lies in the day before: the first second with the new offset.
        let [before, after] = [(day - 1) * DAY, day * DAY];
        while (after - before > SECOND) {
          const middle = before + Math.floor((after - before) / 2 / SECOND) * SECOND;
          if (intlOffsetAt(middle, zone.formatter) === next) after = middle;
          else before = middle;
        }
        rows.push([after, next, offsetSuffix(next)]);
      } else if (day === fromDay) rows.push([day * DAY, next, offsetSuffix(next)]);
      offset = next;
    }
    table = JSON.stringify(rows);
    if (offsetTables.size >= 1_000) offsetTables.clear();
    offsetTables.set(key, table);
  }
  return table;
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
  return `${toIso(instant + offset).slice(0, -5)}${offsetSuffix(offset)}`;
}

const suffixes = new Map<number, string>();

/** "+05:30" of an offset in ms, to the minute ("+00:00" for less than half a minute either way); a few per zone, remembered. */
function offsetSuffix(offset: number): string {
  let suffix = suffixes.get(offset);
  if (suffix === undefined) {
    const minutes = Math.round(Math.abs(offset) / MINUTE);
    const sign = offset < 0 && minutes > 0 ? "-" : "+";
    const hh = String(Math.floor(minutes / 60)).padStart(2, "0");
    const mm = String(minutes % 60).padStart(2, "0");
    suffix = `${sign}${hh}:${mm}`;
    // Offsets are whole seconds within a day: the map stays small, but is bounded all the same.
    if (suffixes.size >= 1_000) suffixes.clear();
    suffixes.set(offset, suffix);
  }
  return suffix;
}
