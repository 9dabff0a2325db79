// What docs/api.md says about a generated input, worked out independently of
// the server's code: definitely valid, definitely invalid (and which fields a
// 422 must name), or not decided by the docs ("unknown", where the test
// then only checks that an answer is sane). Phone numbers are the one thing
// it does not work out itself: docs/api.md, "Phone numbers" names the library, libphonenumber,
// so it asks that library (normalizePhone) in the org's country.
import { normalizePhone } from "../../../src/lib/phones";

/** The country of every fuzzed org (org create's default). */
export const COUNTRY = "US";

/** A phone as the API stores and matches it (E.164), or null when it is no valid number. */
export const e164 = (text: string) => normalizePhone(text.trim(), COUNTRY);

export type Verdict = "valid" | "invalid" | "unknown";

export type FieldKind =
  | { type: "text"; max: number; required?: true }
  | { type: "email" }
  | { type: "code" }
  | { type: "amount" }
  | { type: "date" }
  | { type: "dateTime" }
  | { type: "limit" }
  /** hold-slot's holdMinutes (docs/api.md, "Holding a slot"): an integer from 1 to 15. */
  | { type: "minutes" }
  | { type: "accountId" }
  /** A phone to match or store (docs/api.md, "Phone numbers"): text of at most 40 characters that parses to a valid number. */
  | { type: "phone"; required?: true }
  /** One of fixed words, exactly as written (close's outcome, docs/api.md "Close"). */
  | { type: "choice"; values: readonly string[]; required?: true }
  /** A plan's `every` (docs/api.md, "Plans"): required, exactly `{count: 1–12, unit: "week" | "month"}`. */
  | { type: "every" }
  /** A plan's `visits`: an integer from 2 to 52. */
  | { type: "visits" }
  /** A boolean (cancel-plan's cancelVisits). */
  | { type: "flag" };

export interface BodySpec {
  fields: Record<string, FieldKind>;
  /** At least one of these must be present (contacts, docs/api.md, "Contacts"). */
  oneOf?: string[];
}

export interface Named {
  path: string;
  code?: string;
  /** The fields a did-you-mean hint of an unknown_field may name, when not the check's own (a query that takes none). */
  hintFrom?: string[];
}

export interface BodyVerdict {
  verdict: Verdict;
  /** Entries a 422 must hold. */
  must: Named[];
  /** The only paths a 422 may name (a path's first segment). */
  may: Set<string>;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;
const PLAIN_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const leap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const realDate = (y: number, m: number, d: number) =>
  m >= 1 && m <= 12 && d >= 1 && d <= (m === 2 && leap(y) ? 29 : DAYS[m - 1]!);

/** The first and last instants a request may name (docs/api.md, "Conventions"), written as the docs write them. */
export const FIRST_INSTANT = Date.parse("0001-01-01T00:00:00.000Z");
export const LAST_INSTANT = Date.parse("9999-12-31T23:59:59.999Z");
const inRange = (at: number) => at >= FIRST_INSTANT && at <= LAST_INSTANT;

/** The instant (ms, fractions truncated) of a date-time of the RFC 3339 form with a real date. */
export function instantOf(text: string): number {
  const trimmed = text.trim();
  const [, y, mo, d, h, mi, s = "0", fraction = "", oh = "0", om = "0"] = RFC3339.exec(trimmed)!;
  const sign = /-\d{2}:\d{2}$/.test(trimmed) ? -1 : 1;
  const at = new Date(0);
  at.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  at.setUTCHours(Number(h), Number(mi), Number(s), Number(fraction.padEnd(3, "0").slice(0, 3)));
  return at.getTime() - sign * (Number(oh) * 60 + Number(om)) * 60_000;
}

/**
 * docs/api.md, "Conventions": `YYYY-MM-DDTHH:MM[:SS[.fraction]]` then `Z` or `±HH:MM`,
 * a real calendar date and clock time; and (docs/api.md, "Conventions") an
 * instant that, once in UTC, lies within FIRST_INSTANT … LAST_INSTANT.
 */
export function dateTimeVerdict(text: string): Verdict {
  const m = RFC3339.exec(text.trim());
  if (!m) return "invalid";
  const [, y, mo, d, h, mi, s = "0", fraction = "", oh = "0", om = "0"] = m;
  const real = realDate(Number(y), Number(mo), Number(d)) && Number(h) <= 23 && Number(mi) <= 59 && Number(s) <= 60;
  if (!real || Number(oh) > 23 || Number(om) > 59) return "invalid";
  // Outside the range whatever reading the cases below get (a leap second read as the next minute or refused).
  if (!inRange(instantOf(text))) return "invalid";
  // Year 0000, a leap second and fractions past nanoseconds: RFC 3339 allows them, the docs do not decide.
  if (Number(y) === 0 || Number(s) === 60 || fraction.length > 9) return "unknown";
  return "valid";
}

/** A date-time outside the range, which docs/api.md ("Conventions") answers with invalid_format. */
export const isOutOfRange = (text: string) => {
  const m = RFC3339.exec(text.trim());
  return m !== null && realDate(Number(m[1]), Number(m[2]), Number(m[3])) && !inRange(instantOf(text));
};

function dateOrDateTimeVerdict(text: string): Verdict {
  const m = PLAIN_DATE.exec(text.trim());
  if (!m) return dateTimeVerdict(text);
  // A plain date is 00:00 UTC: year 0000 lies before the range, whatever else it is.
  if (Number(m[1]) === 0) return "invalid";
  return realDate(Number(m[1]), Number(m[2]), Number(m[3])) ? "valid" : "invalid";
}

function emailVerdict(email: string): Verdict {
  if (/\s/.test(email) || email.split("@").length !== 2) return "invalid";
  return /^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/.test(email) ? "valid" : "unknown";
}

const isClean = (s: string) => s.isWellFormed() && !s.includes("\u0000");
const isRequired = (kind: FieldKind) =>
  kind.type === "dateTime" ||
  kind.type === "every" ||
  ((kind.type === "text" || kind.type === "phone" || kind.type === "choice") && kind.required === true);

/** A plan's `every`: an object of exactly an integer count of 1–12 and a unit week or month. */
function everyVerdict(value: unknown): Verdict {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "invalid";
  const keys = Object.keys(value);
  const { count, unit } = value as Record<string, unknown>;
  if (keys.length !== 2 || !keys.includes("count") || !keys.includes("unit")) return "invalid";
  if (!Number.isInteger(count) || (count as number) < 1 || (count as number) > 12) return "invalid";
  return unit === "week" || unit === "month" ? "valid" : "invalid";
}

/** Explicit null, absence and (for strings) "" after trimming all mean "absent" (docs/api.md ("Errors", "Validation")). */
export const isAbsent = (value: unknown) =>
  value === undefined || value === null || (typeof value === "string" && value.trim() === "");

/** The most a string field holds, in UTF-16 code units (docs/api.md, "Length limits"), or undefined for other kinds. */
export function limitOf(kind: FieldKind): number | undefined {
  switch (kind.type) {
    case "text":
      return kind.max;
    case "email":
      return 320;
    case "phone":
      return 40;
    case "accountId":
      return 200;
    default:
      return undefined;
  }
}

/**
 * The code a 422 must give an invalid string, where the docs name one: too
 * long (trimmed, in UTF-16 code units: an emoji counts 2) is too_long, a lone
 * surrogate or NUL is invalid_string (both at once: the docs do not say which).
 */
export function textCode(value: string, max: number): string | undefined {
  const long = value.trim().length > max;
  if (long) return isClean(value) ? "too_long" : undefined;
  return isClean(value) ? undefined : "invalid_string";
}

/** What a 422 must say of a field the oracle found invalid: its path, and its code where the docs name one. */
function invalidEntry(name: string, kind: FieldKind, value: unknown): Named {
  const max = limitOf(kind);
  if (typeof value === "string" && max !== undefined) {
    if (value.trim().length > max || !isClean(value)) {
      const code = textCode(value, max);
      return code ? { path: name, code } : { path: name };
    }
    // A phone that is text of the right length but no valid number: invalid_phone (docs/api.md, "Phone numbers").
    if (kind.type === "phone" && value.trim() !== "") return { path: name, code: "invalid_phone" };
  }
  if ((kind.type === "dateTime" || kind.type === "date") && typeof value === "string" && isOutOfRange(value))
    return { path: name, code: "invalid_format" };
  return { path: name };
}

export function fieldVerdict(kind: FieldKind, value: unknown): Verdict {
  if (value === undefined || value === null) return isRequired(kind) ? "invalid" : "valid";
  switch (kind.type) {
    case "text":
    case "email":
    case "phone":
    case "accountId": {
      if (typeof value !== "string" || !isClean(value)) return "invalid";
      const text = value.trim();
      // UTF-16 code units (JavaScript's length), as the docs count.
      if (text.length > limitOf(kind)!) return "invalid";
      if (text === "") return isRequired(kind) ? "invalid" : "valid";
      if (kind.type === "phone") return e164(text) === null ? "invalid" : "valid";
      return kind.type === "email" ? emailVerdict(text) : "valid";
    }
    case "code":
      return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 2147483647 ? "valid" : "invalid";
    case "amount":
      // JSON can carry 1e999, which parses to Infinity: the docs ask for a finite number.
      return typeof value === "number" && Number.isFinite(value) && value >= 0 ? "valid" : "invalid";
    case "limit":
      return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 100 ? "valid" : "invalid";
    case "minutes":
      return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 15 ? "valid" : "invalid";
    case "date":
      if (typeof value !== "string") return "invalid";
      return value.trim() === "" ? "valid" : dateOrDateTimeVerdict(value);
    case "dateTime":
      return typeof value === "string" ? dateTimeVerdict(value) : "invalid";
    case "choice":
      return typeof value === "string" && kind.values.includes(value) ? "valid" : "invalid";
    case "every":
      return everyVerdict(value);
    case "visits":
      return Number.isInteger(value) && (value as number) >= 2 && (value as number) <= 52 ? "valid" : "invalid";
    case "flag":
      return typeof value === "boolean" ? "valid" : "invalid";
  }
}

/** The verdict on a JSON object body against an operation's fields. */
export function bodyVerdict(spec: BodySpec, body: Record<string, unknown>): BodyVerdict {
  const must: Named[] = [];
  const may = new Set<string>(Object.keys(body));
  let invalid = false;
  let unknown = false;
  for (const key of Object.keys(body)) {
    if (!Object.hasOwn(spec.fields, key)) {
      must.push({ path: key, code: "unknown_field" });
      invalid = true;
    }
  }
  for (const [name, kind] of Object.entries(spec.fields)) {
    const value = Object.hasOwn(body, name) ? body[name] : undefined;
    const verdict = fieldVerdict(kind, value);
    if (verdict === "invalid") {
      // Listed beside the other failing fields (docs/api.md, "Validation": every failing field);
      // an object's errors name its members (every.count), which `may` allows.
      if (kind.type !== "every" || value === undefined || value === null) must.push(invalidEntry(name, kind, value));
      may.add(name);
      invalid = true;
    } else if (verdict === "unknown") unknown = true;
  }
  if (spec.oneOf) {
    may.add("");
    if (!invalid && !unknown && spec.oneOf.every((field) => isAbsent(body[field]))) {
      must.push({ path: "", code: "required_one_of" });
      invalid = true;
    }
  }
  return { verdict: invalid ? "invalid" : unknown ? "unknown" : "valid", must, may };
}

/**
 * Docs "Validation": every operation checks its query string, and one that
 * takes no parameter refuses any, each `unknown_field` (with no hint: the
 * query has no field to hint at), whatever its value. A parameter without a
 * name (`?=x`) is left open.
 */
export function noQueryVerdict(query: string): BodyVerdict {
  const names = [...new Set(new URLSearchParams(query).keys())];
  const named = names.filter((name) => name !== "");
  return {
    verdict: named.length > 0 ? "invalid" : names.length > 0 ? "unknown" : "valid",
    must: named.map((path) => ({ path, code: "unknown_field", hintFrom: [] })),
    may: new Set(named),
  };
}

/** docs/api.md, "MCP": an Idempotency-Key is 1–255 printable ASCII characters. */
export const isValidIdempotencyKey = (key: string) => /^[\x20-\x7e]{1,255}$/.test(key);
