// The dispatch board under fuzzing (docs/api.md, "The dispatch board"):
// query strings of GET /api/v1/board and arguments of get_board, and what
// each must answer. The fixture's org is in crew mode, in UTC and open around
// the clock, so a valid date's board is one row: the whole day as its duty,
// the fixture's visits of that date but cancelled ones, its live holds.
import fc from "fast-check";
import { expect } from "vitest";
import type { Answer, Fixture } from "./harness";
import { isLive } from "./harness";
import type { BodyVerdict, Named } from "./oracle";
import { junkString, junkValue } from "./values";

export const BOARD_QUERY_FIELDS = ["date"];

/** A date of one of the fixture's incidents, resolved against the fixture. */
export class FixtureDay {
  constructor(readonly n: number) {}
}

const validDate = fc
  .date({ min: new Date("0001-01-01T00:00:00Z"), max: new Date("9999-12-31T00:00:00Z"), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 10));

const dateValue = fc.oneof(
  { arbitrary: fc.nat().map((n) => new FixtureDay(n)), weight: 5 },
  { arbitrary: validDate, weight: 2 },
  { arbitrary: validDate.map((d) => ` ${d}\t`), weight: 1 },
  {
    arbitrary: fc.constantFrom(
      "2026-02-30",
      "2026-13-01",
      "2026-1-05",
      "26-01-05",
      "2026/01/05",
      "20260105",
      "2026-01-05T00:00:00Z",
      "0000-01-01",
      "+002026-01-05",
      "today",
      "2026-01-05\u0000",
    ),
    weight: 2,
  },
  { arbitrary: fc.constantFrom("", " ", "\t", "\u00A0"), weight: 1 },
  { arbitrary: junkString, weight: 2 },
);

const otherName = fc.oneof(
  fc.constantFrom("Date", "DATE", "da_te", "day", "dates", "date[]", "orgId", "timeZone", "__proto__", ""),
  fc.string({ maxLength: 6 }),
);

const pair = fc.oneof(
  { arbitrary: fc.tuple(fc.constant("date"), dateValue), weight: 6 },
  { arbitrary: fc.tuple(otherName, fc.oneof(junkString, dateValue)), weight: 1 },
);

/** Query parameters of GET /api/v1/board: mostly one date, sometimes none, two, or other names. */
export const boardQueryCases = fc.array(pair, { maxLength: 3 });

/** get_board tool arguments: the query's parameters as an object, some with values of other JSON types. */
export const boardArgCases = fc.array(
  fc.oneof({ arbitrary: pair, weight: 4 }, { arbitrary: fc.tuple(fc.constant("date"), junkValue), weight: 1 }),
  { maxLength: 3 },
);

/** A generated value as sent: a fixture day becomes the date of one of its incidents. */
export function boardValue(value: unknown, fx: Fixture): unknown {
  if (!(value instanceof FixtureDay)) return value;
  const incidents = [...fx.incidents.values()];
  return incidents[value.n % incidents.length]!.dateTime.slice(0, 10);
}

/** Whether `text` is a calendar date YYYY-MM-DD of the years 0001–9999. */
function isDate(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m || m[1] === "0000") return false;
  const date = new Date(0);
  date.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return date.toISOString().slice(0, 10) === text;
}

/**
 * docs/api.md, "Validation" and "The dispatch board": a parameter other
 * than `date` is unknown_field; `date` repeated is refused, empty or blank is
 * empty_value, anything but a date (trimmed) invalid_format. A parameter
 * without a name is left open. Valid: the date asked (null: today).
 */
export function boardVerdict(pairs: [string, string][]): BodyVerdict & { date: string | null } {
  const byName = new Map<string, string[]>();
  for (const [name, value] of pairs) byName.set(name, [...(byName.get(name) ?? []), value]);
  const must: Named[] = [];
  let unknown = false;
  for (const [name, values] of byName) {
    if (name === "") unknown = true;
    else if (name !== "date") must.push({ path: name, code: "unknown_field" });
    else if (values.length > 1) must.push({ path: name });
    else if (values[0]!.trim() === "") must.push({ path: name, code: "empty_value" });
    else if (!isDate(values[0]!.trim())) must.push({ path: name, code: "invalid_format" });
  }
  const verdict = must.length > 0 ? "invalid" : unknown ? "unknown" : "valid";
  return { verdict, must, may: new Set(byName.keys()), date: byName.get("date")?.[0]?.trim() ?? null };
}

const DAY = 86_400_000;
const iso = (t: number) => new Date(t).toISOString();
const utcTimes = (start: number, end: number) => ({
  start: iso(start),
  end: iso(end),
  localStart: `${iso(start).slice(0, -5)}+00:00`,
  localEnd: `${iso(end).slice(0, -5)}+00:00`,
});

/**
 * The board of `date` (null: the UTC date during the request, between
 * `before` and `after`): one row without a technician, the whole day on
 * duty, the fixture's visits of that date but cancelled ones by start then
 * id, and its holds of that date live during the request.
 */
export function expectBoard(answer: Answer, fx: Fixture, date: string | null, before: number, after: number) {
  expect(answer.status, answer.text).toBe(200);
  const body = answer.body as {
    date: string;
    timeZone: string;
    rows: { technician: unknown; duty: unknown; visits: unknown[]; holds: { start: string }[] }[];
  };
  expect(date === null ? [iso(before).slice(0, 10), iso(after).slice(0, 10)] : [date]).toContain(body.date);
  const start = Date.parse(`${body.date}T00:00:00Z`);
  const visits = [...fx.incidents.values()]
    .filter((v) => v.status !== "cancelled" && v.appointment.start.startsWith(body.date))
    .sort((a, b) => (a.dateTime < b.dateTime ? -1 : a.dateTime > b.dateTime ? 1 : a.id < b.id ? -1 : 1));
  expect(body.timeZone).toBe("UTC");
  expect(body.rows, answer.text).toHaveLength(1);
  const [row] = body.rows;
  expect({ ...row, holds: [] }, answer.text).toEqual({
    technician: null,
    duty: [utcTimes(start, start + DAY)],
    visits,
    holds: [],
  });
  const ofDay = [...fx.holds.values()].filter((h) => iso(h.start).startsWith(body.date));
  const view = (h: (typeof ofDay)[number]) => ({
    start: iso(h.start),
    end: iso(h.end),
    expiresAt: iso(h.expiresAt),
    serviceId: null,
  });
  for (const hold of ofDay.filter((h) => isLive(h, after))) expect(row!.holds).toContainEqual(view(hold));
  for (const listed of row!.holds)
    expect(
      ofDay.filter((h) => isLive(h, before)).map(view),
      `${JSON.stringify(listed)} is no live hold of the day`,
    ).toContainEqual(listed);
}
