// The form of an answer, member by member (docs/api.md, "Conventions" and
// "Length limits"): every date-time in UTC as `YYYY-MM-DDTHH:MM:SS.sssZ`, a
// slot's local times as `YYYY-MM-DDTHH:MM:SS±HH:MM`, every string within its
// limit in UTF-16 code units, and every resource the test wrote reading back
// exactly as written; the call context's local clock (`localNow`) in the local
// form, its dates (`localDate`, `date`) as `YYYY-MM-DD`. The whole answer is
// walked, so no member is missed.
import { expect } from "vitest";
import { MINUTE } from "../../support/time";

export const UTC_FORM = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const LOCAL_FORM = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/;

export const DATE_FORM = /^\d{4}-\d{2}-\d{2}$/;

/** Members that hold a date-time in UTC (or null). */
const DATE_TIME_KEY = /^(dateTime|start|end|timestamp|estimatedCloseDate|now)$|At$/;
const LOCAL_KEYS = new Set(["localStart", "localEnd", "localNow"]);
/** Members that hold a local date (the call context's). */
const DATE_KEYS = new Set(["localDate", "date", "firstVisitDate", "nextDueDate", "dueDate"]);
/** A string that looks like a date or a date-time, whatever member holds it (a year of 4 or more digits, signed or not). */
const LOOKS_LIKE_A_DATE = /^[+-]?\d{4,}-\d{2}-\d{2}(?:[Tt ]|$)/;

/** docs/api.md, "Length limits", by the member that holds the string. */
export const LIMITS: Record<string, number> = {
  name: 200,
  firstName: 200,
  lastName: 200,
  title: 200,
  companyName: 200,
  city: 200,
  state: 200,
  country: 200,
  buildingLocation: 200,
  clientName: 200,
  insectName: 200,
  accountId: 200,
  email: 320,
  phone: 40,
  mobilePhone: 40,
  businessPhone: 40,
  street1: 500,
  street2: 500,
  postalCode: 20,
  notes: 2000,
  cancelReason: 500,
};

/** What a walk saw: date-times in each form, strings checked against a limit, resources compared with what was written. */
export interface Seen {
  utc: number;
  local: number;
  limited: number;
  written: number;
}

export const nothingSeen = (): Seen => ({ utc: 0, local: 0, limited: 0, written: 0 });

/**
 * Walks `value` (an answer body) and checks every member: date-times, local
 * times and limits as above; an object whose `id` is in `written` holds each
 * of those members exactly; a slot's local times name its instants (to the
 * minute: the offset is written to the minute).
 */
export function expectForm(value: unknown, written: Map<string, Record<string, unknown>>, seen: Seen, path = "$") {
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) expectForm(item, written, seen, `${path}[${i}]`);
    return;
  }
  if (value === null || typeof value !== "object") return;
  const object = value as Record<string, unknown>;
  for (const [key, member] of Object.entries(object)) {
    const at = `${path}.${key}`;
    if (typeof member === "string") expectString(key, member, at, seen);
    else if (DATE_TIME_KEY.test(key) && member !== null)
      expect.fail(`${at} is ${JSON.stringify(member)}, not a date-time`);
    else expectForm(member, written, seen, at);
  }
  for (const [local, utc] of [
    ["localStart", "start"],
    ["localEnd", "end"],
  ] as const) {
    if (typeof object[local] !== "string") continue;
    const apart = Math.abs(Date.parse(object[local] as string) - Date.parse(object[utc] as string));
    expect(apart, `${path}.${local} ${object[local]} is not ${object[utc]}`).toBeLessThan(MINUTE);
  }
  // The local clock names the same instant to the second (docs/api.md, "Call context").
  if (typeof object.localNow === "string") {
    const second = Math.floor(Date.parse(object.now as string) / 1000) * 1000;
    expect(Date.parse(object.localNow), `${path}.localNow ${object.localNow} is not ${object.now}`).toBe(second);
  }
  const expected = typeof object.id === "string" ? written.get(object.id) : undefined;
  if (expected) {
    seen.written++;
    for (const [key, member] of Object.entries(expected)) expect(object[key], `${path}.${key}`).toEqual(member);
  }
}

function expectString(key: string, member: string, at: string, seen: Seen) {
  if (DATE_KEYS.has(key)) {
    expect(member, at).toMatch(DATE_FORM);
    // A real date (no 2026-02-30).
    expect(new Date(`${member}T00:00:00Z`).toISOString().slice(0, 10), at).toBe(member);
  } else if (LOCAL_KEYS.has(key)) {
    expect(member, at).toMatch(LOCAL_FORM);
    expect(Number.isFinite(Date.parse(member)), `${at} ${member} is no date`).toBe(true);
    seen.local++;
  } else if (DATE_TIME_KEY.test(key) || LOOKS_LIKE_A_DATE.test(member)) {
    expect(member, at).toMatch(UTC_FORM);
    // A real instant, written as toISOString writes it (no 2026-02-30, no 24:00).
    const instant = Date.parse(member);
    expect(Number.isFinite(instant), `${at} ${member} is no date`).toBe(true);
    expect(new Date(instant).toISOString(), at).toBe(member);
    seen.utc++;
  }
  const limit = LIMITS[key];
  if (limit !== undefined) {
    expect(member.length, `${at} is ${member.length} UTF-16 code units`).toBeLessThanOrEqual(limit);
    seen.limited++;
  }
}
