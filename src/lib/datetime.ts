// RFC 3339 date-times as docs/api.md ("Conventions") accepts them: a zone is
// required, impossible dates are refused, sub-millisecond digits are truncated,
// and the instant, once in UTC, lies within the years 0001–9999: every instant
// stored is one toISOString writes as YYYY-MM-DDTHH:MM:SS.sssZ.
/** A minute in milliseconds: how every count of minutes (slots, services, holds, windows) becomes a span of instants. */
export const MINUTE = 60_000;
export const DAY = 1440 * MINUTE;

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;

function daysInMonth(year: number, month: number): number {
  return [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
}

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function utcMillis(y: number, mo: number, d: number, h = 0, mi = 0, s = 0, ms = 0): number | null {
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return null;
  if (h > 23 || mi > 59 || s > 59) return null;
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not map years 0–99 to 1900–1999.
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, s, ms);
  return date.getTime();
}

/** The first and last instants an API date-time can be: 0001-01-01T00:00:00.000Z … 9999-12-31T23:59:59.999Z. */
export const MIN_INSTANT = -62135596800000;
export const MAX_INSTANT = 253402300799999;

const inRange = (millis: number | null) =>
  millis !== null && millis >= MIN_INSTANT && millis <= MAX_INSTANT ? millis : null;

/** Epoch milliseconds of an RFC 3339 date-time with a zone (within the years 0001–9999 in UTC), or null. */
export function parseDateTime(text: string): number | null {
  const m = DATE_TIME.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s = "0", frac = "", , sign, oh = "0", om = "0"] = m;
  if (Number(oh) > 23 || Number(om) > 59) return null;
  const local = utcMillis(+y!, +mo!, +d!, +h!, +mi!, +s, Number(frac.padEnd(3, "0").slice(0, 3)));
  if (local === null) return null;
  const offset = (Number(oh) * 60 + Number(om)) * MINUTE;
  return inRange(sign === "-" ? local + offset : sign === "+" ? local - offset : local);
}

/** Like parseDateTime, but also accepts a plain `YYYY-MM-DD` (read as 00:00 UTC). */
export function parseDateOrDateTime(text: string): number | null {
  const m = DATE_ONLY.exec(text);
  return m ? utcMillis(+m[1]!, +m[2]!, +m[3]!) : parseDateTime(text);
}

const DAY_MS = 86_400_000;
const TWO_DIGITS = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, "0"));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, n) => String(n).padStart(3, "0"));
// "YYYY-MM-DDT" by day number: a page of 50 rows writes 100 instants, and
// toISOString cost four times this (test/unit/datetime.test.ts holds the two
// equal). Bounded: emptied when full.
const datePrefixes = new Map<number, string>();

/** `new Date(millis).toISOString()`, for an instant within the years 0001–9999. */
export function toIso(millis: number): string {
  if (!(millis >= MIN_INSTANT && millis <= MAX_INSTANT) || !Number.isInteger(millis))
    return new Date(millis).toISOString();
  const day = Math.floor(millis / DAY_MS);
  let date = datePrefixes.get(day);
  if (date === undefined) {
    date = new Date(day * DAY_MS).toISOString().slice(0, 11);
    if (datePrefixes.size >= 10_000) datePrefixes.clear();
    datePrefixes.set(day, date);
  }
  let rest = millis - day * DAY_MS;
  const ms = rest % 1000;
  rest = (rest - ms) / 1000;
  const seconds = rest % 60;
  rest = (rest - seconds) / 60;
  const minutes = rest % 60;
  const hours = (rest - minutes) / 60;
  return `${date}${TWO_DIGITS[hours]}:${TWO_DIGITS[minutes]}:${TWO_DIGITS[seconds]}.${THREE_DIGITS[ms]}Z`;
}
export const toIsoOrNull = (millis: number | null): string | null => (millis === null ? null : toIso(millis));
