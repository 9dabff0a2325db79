// The GET operations as the fuzz sees them: query strings for the contact,
// incident and event lists (limits, filters, real, foreign and tampered
// cursors, unknown and repeated parameters), path segments for one account
// or incident, and the query strings of the services and the call context,
// which take no parameter.
import fc from "fast-check";
import { expect } from "vitest";
import { EVENT_TYPES } from "../../../drizzle/schema";
import { DAY, HOUR, iso } from "../../support/time";
import { UTC_FORM } from "./forms";
import { type Answer, type Fixture, type IssuedCursor, type IssuedEventCursor, utcAppointment } from "./harness";
import { expectValidationFailed } from "./operations";
import {
  type BodyVerdict,
  dateTimeVerdict,
  e164,
  instantOf,
  isOutOfRange,
  type Named,
  noQueryVerdict,
  textCode,
  type Verdict,
} from "./oracle";
import {
  astralAt,
  astralOver,
  edgeDateTime,
  junkDateTime,
  junkPhone,
  junkString,
  junkValue,
  Sym,
  slot,
  validDateTime,
  validEdgeDateTime,
  validEmail,
  validPhone,
} from "./values";

export const QUERY_FIELDS = ["limit", "cursor", "accountId", "email", "phone", "updatedSince"];
export const INCIDENT_QUERY_FIELDS = ["limit", "cursor", "from", "to", "status", "accountId", "phone", "updatedSince"];
export const EVENT_QUERY_FIELDS = ["limit", "cursor", "type"];

const b64url = (ascii: string) => btoa(ascii).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");

const limitValue = fc.oneof(
  fc.constantFrom(
    "0",
    "-1",
    "1e9",
    "10",
    "1.5",
    "200",
    "201",
    "1",
    "50",
    " 5",
    "007",
    "",
    "NaN",
    "0x10",
    "１０",
    "1000000000000",
    "2",
  ),
  fc.integer({ min: -5, max: 300 }).map(String),
);
const cursorValue = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      new Sym("plainCursor"),
      new Sym("accountCursor"),
      new Sym("contactPhoneCursor"),
      new Sym("foreignCursor"),
      new Sym("incidentCursor"),
    ),
    weight: 3,
  },
  { arbitrary: fc.nat().map((n) => new Sym("flippedCursor", n)), weight: 2 },
  { arbitrary: fc.nat().map((n) => new Sym("forgedCursor", n)), weight: 2 },
  fc.base64String({ maxLength: 80 }),
  fc.string({ maxLength: 40 }),
  fc.constantFrom("x".repeat(1025), " ".repeat(1025), "", " ", "\t", "eyJ0IjowfQ", "null", "%", "a+b/c=="),
  fc
    .record({
      t: fc.oneof(fc.integer(), fc.double(), fc.constant(-1)),
      i: fc.oneof(fc.constant("ct_00000000000000000000000000"), fc.string()),
      s: fc.string({ maxLength: 16 }),
    })
    .map((cursor) => b64url(JSON.stringify(cursor))),
);
const accountIdValue = fc.oneof(
  fc.constantFrom(
    new Sym("ownAccountId", 0),
    new Sym("ownAccountId", 1),
    new Sym("foreignAccountId"),
    new Sym("foreignContactId"),
  ),
  junkString,
  astralAt(200),
  astralOver(200),
);
/** A value of a query parameter sent empty or blank (docs "Validation": empty_value, or its own check's error). */
const blank = fc.constantFrom("", " ", "\t", "\u00A0", "  \n ");
const otherName = fc.oneof(
  fc.constantFrom(
    "Limit",
    "LIMIT",
    "page",
    "offset",
    "orgId",
    "org_id",
    "sort",
    "__proto__",
    "",
    "cursor ",
    "limit[]",
    "email\u0000",
  ),
  fc.string({ maxLength: 6 }),
);

/** A phone filter: the org's own phones in any spelling (mostly), another org's, other numbers, junk. */
const phoneFilter = fc.oneof(
  { arbitrary: fc.nat().map((n) => new Sym("ownPhone", n)), weight: 4 },
  { arbitrary: fc.nat().map((n) => new Sym("foreignPhone", n)), weight: 1 },
  { arbitrary: validPhone, weight: 1 },
  { arbitrary: fc.oneof(junkPhone, junkString, astralOver(40)), weight: 2 },
);

const pair = fc.oneof(
  { arbitrary: fc.tuple(fc.constant("limit"), limitValue), weight: 3 },
  { arbitrary: fc.tuple(fc.constant("cursor"), cursorValue), weight: 3 },
  { arbitrary: fc.tuple(fc.constant("accountId"), accountIdValue), weight: 2 },
  {
    arbitrary: fc.tuple(fc.constant("email"), fc.oneof(validEmail, junkString, astralAt(320), astralOver(320))),
    weight: 2,
  },
  { arbitrary: fc.tuple(fc.constant("phone"), phoneFilter), weight: 2 },
  {
    arbitrary: fc.tuple(
      fc.constant("updatedSince"),
      fc.oneof(junkDateTime, validDateTime, validEdgeDateTime, edgeDateTime),
    ),
    weight: 2,
  },
  { arbitrary: fc.tuple(fc.constantFrom(...QUERY_FIELDS), blank), weight: 1 },
  { arbitrary: fc.tuple(otherName, fc.oneof(junkString, blank)), weight: 1 },
);

/** list_contacts tool arguments: the query's parameters as an object, some with values of other JSON types. */
export const listArgCases = fc.array(
  fc.oneof(
    { arbitrary: pair, weight: 4 },
    { arbitrary: fc.tuple(fc.constantFrom(...QUERY_FIELDS), junkValue), weight: 1 },
  ),
  { maxLength: 5 },
);

/** get_account tool arguments: an id (own, foreign, junk of any type, or none) and maybe other members. */
export const accountArgCases = fc.record(
  {
    id: fc.oneof(
      fc.constantFrom(
        new Sym("ownAccountId", 0),
        new Sym("ownAccountId", 1),
        new Sym("foreignAccountId"),
        new Sym("foreignContactId"),
      ),
      junkValue,
    ),
    // Other members become query parameters, which a GET by id refuses: mostly none.
    extra: fc.oneof(
      { arbitrary: fc.constant({}), weight: 3 },
      {
        arbitrary: fc.dictionary(fc.constantFrom("orgId", "limit", "x", "__proto__"), junkValue, { maxKeys: 2 }),
        weight: 1,
      },
    ),
  },
  { requiredKeys: ["extra"] },
);

/** Raw query text that no URLSearchParams would produce. */
const RAW_SUFFIXES = [
  "&%ZZ=1",
  "&limit=%E0%A4%A",
  "&=",
  "&&",
  "&a",
  "&limit=1&limit=2",
  "&cursor=%00",
  "&email=%F0%9F%A6%97%40x.co",
  "&limit=%31%30",
  "&limit=+5",
];

export interface ListCase {
  pairs: [string, unknown][];
  suffix: string | null;
}

export const listCases: fc.Arbitrary<ListCase> = fc.record({
  pairs: fc.array(pair, { maxLength: 5 }),
  suffix: fc.oneof(
    { arbitrary: fc.constant(null), weight: 12 },
    { arbitrary: fc.constantFrom(...RAW_SUFFIXES), weight: 1 },
  ),
});

function limitVerdict(value: string): Verdict {
  if (/^[1-9]\d*$/.test(value)) return Number(value) <= 200 ? "valid" : "invalid";
  if (/^\d+$/.test(value)) return Number(value) >= 1 && Number(value) <= 200 ? "unknown" : "invalid";
  // Whitespace around a number: the docs do not say.
  return value.trim() !== value ? "unknown" : "invalid";
}

/** A query value's verdict, and the code a 422 must give it where the docs name one. */
interface ValueCheck {
  verdict: Verdict;
  code?: string;
}

/** Free text of at most `max` UTF-16 code units (trimmed): too_long, invalid_string (docs/api.md, "Validation"). */
const textCheck = (value: string, max: number): ValueCheck => {
  const code = textCode(value, max);
  return code || value.trim().length > max ? { verdict: "invalid", ...(code ? { code } : {}) } : { verdict: "valid" };
};

/** A phone filter (docs/api.md, "Phone numbers"): text of at most 40 code units that is a valid number, else invalid_phone. */
function phoneCheck(value: string): ValueCheck {
  const text = textCheck(value, 40);
  if (text.verdict === "invalid") return text;
  return e164(value) !== null ? { verdict: "valid" } : { verdict: "invalid", code: "invalid_phone" };
}

/** Parameters whose values are any text: a blank one fails nothing but the empty-value rule. */
const TEXT_PARAMETERS = ["cursor", "accountId", "email", "phone"];

function queryFieldCheck(name: string, value: string): ValueCheck {
  // Docs "Validation": an empty or blank value is refused; a parameter whose own check fails on it (not an
  // integer, not one of the enumerated values, not a date-time) may say so instead of empty_value.
  if (value.trim() === "") {
    const ownCheck = !TEXT_PARAMETERS.includes(name);
    return ownCheck ? { verdict: "invalid" } : { verdict: "invalid", code: "empty_value" };
  }
  switch (name) {
    case "limit":
      return { verdict: limitVerdict(value) };
    case "cursor":
      // Any text passes the schema; whether it is a cursor of this list (a longer one never is) is decided after.
      return { verdict: value.trim() !== value ? "unknown" : "valid" };
    case "accountId":
      return textCheck(value, 200);
    case "email":
      return textCheck(value, 320);
    case "phone":
      return phoneCheck(value);
    case "status":
      // docs/api.md, "Incidents": scheduled, cancelled, completed or no_show; spacing is left open (strings are trimmed).
      if (["scheduled", "cancelled", "completed", "no_show"].includes(value)) return { verdict: "valid" };
      return { verdict: value.trim() !== value ? "unknown" : "invalid" };
    case "type":
      // docs/webhooks.md, "Events": one of the five event types; spacing is left open, as for status.
      if ((EVENT_TYPES as readonly string[]).includes(value)) return { verdict: "valid" };
      return { verdict: value.trim() !== value ? "unknown" : "invalid" };
    default: {
      // Docs "Conventions": an instant outside 0001–9999 in UTC is invalid_format.
      const verdict = dateTimeVerdict(value);
      return verdict === "invalid" && isOutOfRange(value) ? { verdict, code: "invalid_format" } : { verdict };
    }
  }
}

/** Each parameter of a query string against a list's fields: unknown and repeated parameters, then each value. */
function paramsVerdict(pairs: [string, string][], fields: string[]) {
  const byName = new Map<string, string[]>();
  for (const [name, value] of pairs) byName.set(name, [...(byName.get(name) ?? []), value]);
  const must: Named[] = [];
  const may = new Set(byName.keys());
  let invalid = false;
  let unknown = false;
  for (const [name, values] of byName) {
    // A parameter without a name ("?=x") may be ignored: the docs do not say.
    const check: { verdict: Verdict | "unknown_field"; code?: string } =
      name === ""
        ? { verdict: "unknown" }
        : !fields.includes(name)
          ? { verdict: "unknown_field" }
          : values.length > 1
            ? { verdict: "invalid" }
            : queryFieldCheck(name, values[0]!);
    const { verdict } = check;
    if (verdict === "unknown_field") must.push({ path: name, code: "unknown_field" });
    else if (verdict === "invalid") must.push(check.code ? { path: name, code: check.code } : { path: name });
    invalid ||= verdict === "invalid" || verdict === "unknown_field";
    unknown ||= verdict === "unknown";
  }
  return { byName, must, may, invalid, unknown, single: (name: string) => byName.get(name)?.[0] };
}

/** The bytes of base64url text as a forgiving decoder (atob) reads them, or null when it is none. */
function bytesOf(text: string): string | null {
  try {
    return atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  } catch {
    return null;
  }
}

/**
 * Another spelling of `token`: the same payload, and a MAC of the same length
 * whose last character differs only in the bits base64 leaves unused (atob
 * reads the same bytes). The docs do not say whether that is the same cursor.
 */
function respelled(cursor: string, token: string): boolean {
  const [payload, mac, ...rest] = cursor.split(".");
  const [issuedPayload, issuedMac] = token.split(".");
  return (
    cursor !== token &&
    rest.length === 0 &&
    payload === issuedPayload &&
    mac !== undefined &&
    mac.length === issuedMac!.length &&
    /^[A-Za-z0-9_-]+$/.test(mac) &&
    bytesOf(mac) === bytesOf(issuedMac!)
  );
}

/**
 * A cursor against the org and filters it was issued for (docs "Pagination":
 * signed whole): those issued with exactly these filters (a filter may be
 * spelled otherwise: the same number, the same trimmed id) are valid; any
 * other — another org's or filters', one character flipped, one decoded,
 * changed and encoded again — is invalid_cursor. Only another base64
 * spelling of an issued MAC is left open (a known deviation, reported).
 */
function cursorVerdict(
  cursor: string,
  filters: Record<string, string | undefined>,
  issued: { token: string; filters: Record<string, string> }[],
): Verdict {
  const same = (name: string, given: string | undefined, wanted: string | undefined) => {
    if (given === undefined || wanted === undefined) return given === wanted;
    if (name === "phone") return e164(given) === wanted;
    if (["from", "to", "updatedSince"].includes(name)) return instantOf(given) === instantOf(wanted);
    return given.trim() === wanted;
  };
  const fitting = issued.filter((c) =>
    Object.keys(filters).every((name) => same(name, filters[name], c.filters[name])),
  );
  if (fitting.some((c) => c.token === cursor)) return "valid";
  return fitting.some((c) => respelled(cursor, c.token)) ? "unknown" : "invalid";
}

/** docs/api.md, "Contacts" and 8.2 on a contact list's query string: each parameter, then the cursor against its org and filters. */
export function listVerdict(pairs: [string, string][], fx: Fixture): BodyVerdict {
  const { must, may, single, ...v } = paramsVerdict(pairs, QUERY_FIELDS);
  let { invalid, unknown } = v;
  const cursor = single("cursor");
  if (!invalid && !unknown && cursor !== undefined) {
    const filters = Object.fromEntries(["accountId", "email", "phone", "updatedSince"].map((f) => [f, single(f)]));
    const verdict = cursorVerdict(cursor, filters, [
      { token: fx.cursors.plain, filters: {} },
      { token: fx.cursors.account, filters: { accountId: fx.accounts[0]!.id } },
      { token: fx.cursors.phone, filters: { phone: fx.phones[0] } },
    ]);
    if (verdict === "unknown") unknown = true;
    else if (verdict === "invalid") {
      must.push({ path: "cursor", code: "invalid_cursor" });
      invalid = true;
    }
  }
  return { verdict: invalid ? "invalid" : unknown ? "unknown" : "valid", must, may };
}

const CONTACT_KEYS = [
  "id",
  "firstName",
  "lastName",
  "email",
  "mobilePhone",
  "businessPhone",
  "accountId",
  "buildingLocation",
  "street1",
  "street2",
  "city",
  "postalCode",
  "state",
  "country",
  "createdAt",
  "updatedAt",
];

/**
 * A 200 page: this org's contacts only, at most `limit`, matching the
 * filters, in the documented shape. For a query the oracle found valid and
 * without a cursor, exactly the first `limit` matching contacts, oldest first.
 */
export function expectPage(answer: Answer, pairs: [string, string][], fx: Fixture, verdict: Verdict = "unknown") {
  expect(answer.status, answer.text).toBe(200);
  const value = (name: string) => pairs.find(([n]) => n === name)?.[1];
  const limit = Number(value("limit") ?? 50);
  const { data, hasMore, nextCursor } = answer.body;
  expect(data.length).toBeLessThanOrEqual(Number.isFinite(limit) ? limit : 50);
  expect(hasMore).toBe(nextCursor !== null);
  expect(nextCursor === null || typeof nextCursor === "string").toBe(true);
  const phone = value("phone")?.trim() ? e164(value("phone")!) : undefined;
  for (const contact of data) {
    expect(Object.keys(contact).sort()).toEqual([...CONTACT_KEYS].sort());
    expect(fx.contacts.has(contact.id), `${contact.id} is not a contact of this org`).toBe(true);
    const accountId = value("accountId");
    if (accountId?.trim()) expect(contact.accountId).toBe(accountId.trim());
    const email = value("email");
    if (email?.trim()) expect(contact.email?.toLowerCase()).toBe(email.trim().toLowerCase());
    if (phone) expect(fx.contacts.get(contact.id)!.phones, `${contact.id} has not ${phone}`).toContain(phone);
  }
  if (verdict !== "valid" || value("cursor") !== undefined) return;
  // docs/api.md, "Validation": strings are trimmed, and an empty one is absent.
  const filter = (name: string) => value(name)?.trim() || undefined;
  const since = filter("updatedSince") === undefined ? undefined : instantOf(filter("updatedSince")!);
  const [accountId, email] = [filter("accountId"), filter("email")?.toLowerCase()];
  const matching = [...fx.contacts]
    .filter(
      ([, c]) =>
        (accountId === undefined || c.accountId === accountId) &&
        (email === undefined || c.email?.toLowerCase() === email) &&
        (phone === undefined || c.phones.includes(phone!)) &&
        (since === undefined || c.updatedAt >= since),
    )
    .sort(([a, x], [b, y]) => x.createdAt - y.createdAt || (a < b ? -1 : a > b ? 1 : 0))
    .map(([id]) => id);
  expect(data.map((c: { id: string }) => c.id)).toEqual(matching.slice(0, limit));
  expect(hasMore).toBe(matching.length > limit);
}

export interface AccountCase {
  segment: Sym | string;
  variant: "none" | "upper" | "space" | "suffix" | "truncate" | "prefix";
  /** Sent as is, not percent-encoded. */
  raw: boolean;
  query: string;
}

const RAW_SEGMENTS = [
  "..",
  "%2e%2e",
  "%2F",
  "a%2Fb",
  "%ZZ",
  "%00",
  "%",
  "..%2f..%2fcontacts",
  "%20",
  "acct_%00",
  ";",
  "a;b=c",
  "%F0%9F%A6%97",
  "%ED%A0%80",
];
/** Query strings of a GET by id, which takes no parameter: none (mostly), unknown ones, empty and repeated ones. */
const query = fc.oneof(
  { arbitrary: fc.constantFrom("", "?"), weight: 8 },
  {
    arbitrary: fc.constantFrom(
      "?x=1",
      "?id=acct_x",
      "?orgId=org_x",
      "?x=",
      "?x=%20",
      "?force=true",
      "?limit=1",
      "?cursor=",
      "?x=1&x=2",
      "?id=&orgId=",
      "?__proto__=1",
      "?=x",
    ),
    weight: 2,
  },
);

/**
 * The answer of a GET by id sent with `query`: a 422 naming each parameter
 * unknown_field when it has any (checked before the id is looked up), else
 * what `found` expects. A segment that routes elsewhere (`routed` false:
 * "", "." or "..", or a raw one that may) is answered by routing, 404.
 */
export function expectByIdAnswer(answer: Answer, query: string, routed: boolean | "maybe", found: () => void) {
  const { verdict, must, may } = noQueryVerdict(query);
  const routing = answer.status === 404 && answer.body.code === "not_found";
  if (routed === false || (routed === "maybe" && routing)) return found();
  if (verdict === "invalid") return expectValidationFailed(answer, must, may);
  if (verdict === "unknown" && answer.status === 422) return expectValidationFailed(answer, [], may);
  found();
}

export const accountCases: fc.Arbitrary<AccountCase> = fc.oneof(
  {
    arbitrary: fc.record({
      segment: fc.constantFrom(new Sym("ownAccountId", 0), new Sym("ownAccountId", 1)),
      variant: fc.constantFrom("none", "none", "none", "upper", "space", "suffix", "truncate", "prefix"),
      raw: fc.constant(false),
      query,
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      segment: fc.constantFrom(new Sym("foreignAccountId"), new Sym("foreignContactId")),
      variant: fc.constant("none"),
      raw: fc.constant(false),
      query,
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({ segment: junkString, variant: fc.constant("none"), raw: fc.constant(false), query }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      segment: fc.constantFrom(...RAW_SEGMENTS),
      variant: fc.constant("none"),
      raw: fc.constant(true),
      query,
    }),
    weight: 1,
  },
) as fc.Arbitrary<AccountCase>;

export function accountSegment(id: string, variant: AccountCase["variant"]): string {
  switch (variant) {
    case "none":
      return id;
    case "upper":
      return id.toUpperCase();
    case "space":
      return ` ${id}`;
    case "suffix":
      return `${id}x`;
    case "truncate":
      return id.slice(0, -1);
    case "prefix":
      return `${id.slice(0, id.indexOf("_") + 1)}${id}`;
  }
}

const ACCOUNT_KEYS = [
  "id",
  "name",
  "accountType",
  "email",
  "mobilePhone",
  "businessPhone",
  "buildingLocation",
  "street1",
  "street2",
  "city",
  "postalCode",
  "state",
  "country",
  "createdAt",
  "updatedAt",
];

/** 200 with exactly this account for one of the org's own ids; any other id is a 404. */
export function expectAccountAnswer(answer: Answer, sentId: string | null, fx: Fixture) {
  const own = fx.accounts.find((account) => account.id === sentId);
  if (!own) {
    expect(answer.status, answer.text).toBe(404);
    expect(["account_not_found", "not_found"]).toContain(answer.body.code);
    return;
  }
  expect(answer.status, answer.text).toBe(200);
  expect(answer.body).toMatchObject({ id: own.id, name: own.name });
  expect(Object.keys(answer.body).sort()).toEqual([...ACCOUNT_KEYS].sort());
}

// The incident list (docs/api.md, "Incidents"): filters from, to, status, accountId, phone, updatedSince.

const instantValue = fc.oneof(
  { arbitrary: slot, weight: 2 },
  { arbitrary: validDateTime, weight: 1 },
  { arbitrary: validEdgeDateTime, weight: 1 },
  { arbitrary: edgeDateTime, weight: 1 },
  { arbitrary: junkDateTime, weight: 2 },
);
const incidentCursorValue = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      new Sym("incidentCursor"),
      new Sym("incidentStatusCursor"),
      new Sym("incidentPhoneCursor"),
      new Sym("foreignIncidentCursor"),
      new Sym("plainCursor"),
      new Sym("contactPhoneCursor"),
    ),
    weight: 4,
  },
  { arbitrary: fc.nat().map((n) => new Sym("flippedIncidentCursor", n)), weight: 2 },
  { arbitrary: fc.nat().map((n) => new Sym("forgedIncidentCursor", n)), weight: 2 },
  { arbitrary: cursorValue, weight: 1 },
);
const statusValue = fc.oneof(
  { arbitrary: fc.constantFrom("scheduled", "cancelled"), weight: 3 },
  { arbitrary: fc.constantFrom("SCHEDULED", " cancelled", "", "canceled", "active", "scheduled,cancelled"), weight: 1 },
  { arbitrary: junkString, weight: 1 },
);
const incidentOtherName = fc.oneof(
  fc.constantFrom("From", "TO", "state", "date", "since", "orgId", "id", "sort", "cursor ", "status[]", "phone_number"),
  fc.string({ maxLength: 6 }),
);

const incidentPair = fc.oneof(
  { arbitrary: fc.tuple(fc.constant("limit"), limitValue), weight: 3 },
  { arbitrary: fc.tuple(fc.constant("cursor"), incidentCursorValue), weight: 3 },
  { arbitrary: fc.tuple(fc.constantFrom("from", "to", "updatedSince"), instantValue), weight: 3 },
  { arbitrary: fc.tuple(fc.constant("status"), statusValue), weight: 2 },
  { arbitrary: fc.tuple(fc.constant("accountId"), accountIdValue), weight: 2 },
  { arbitrary: fc.tuple(fc.constant("phone"), phoneFilter), weight: 3 },
  { arbitrary: fc.tuple(fc.constantFrom(...INCIDENT_QUERY_FIELDS), blank), weight: 1 },
  { arbitrary: fc.tuple(incidentOtherName, fc.oneof(junkString, blank)), weight: 1 },
);

export const incidentListCases: fc.Arbitrary<ListCase> = fc.record({
  pairs: fc.array(incidentPair, { maxLength: 5 }),
  suffix: fc.oneof(
    { arbitrary: fc.constant(null), weight: 12 },
    {
      arbitrary: fc.constantFrom(
        ...RAW_SUFFIXES,
        "&status=scheduled&status=cancelled",
        "&from=2026-01-01T00:00:00%2B01:00",
      ),
      weight: 1,
    },
  ),
});

/** list_incidents tool arguments: the query's parameters as an object, some with values of other JSON types. */
export const incidentListArgCases = fc.array(
  fc.oneof(
    { arbitrary: incidentPair, weight: 4 },
    { arbitrary: fc.tuple(fc.constantFrom(...INCIDENT_QUERY_FIELDS), junkValue), weight: 1 },
  ),
  { maxLength: 5 },
);

const FILTERS = ["from", "to", "status", "accountId", "phone", "updatedSince"];
const issuedWith = (cursor: IssuedCursor, filters: Record<string, string>) => ({ token: cursor.token, filters });

/** docs/api.md, "Incidents" on an incident list's query string: each parameter, then the cursor against its org and filters. */
export function incidentListVerdict(pairs: [string, string][], fx: Fixture): BodyVerdict {
  const { must, may, single, ...v } = paramsVerdict(pairs, INCIDENT_QUERY_FIELDS);
  let { invalid, unknown } = v;
  const cursor = single("cursor");
  if (!invalid && !unknown && cursor !== undefined) {
    const { plain, status, phone } = fx.cursors.incidents;
    const verdict = cursorVerdict(cursor, Object.fromEntries(FILTERS.map((f) => [f, single(f)])), [
      issuedWith(plain, {}),
      issuedWith(status, { status: "scheduled" }),
      issuedWith(phone, { phone: fx.phones[0] }),
    ]);
    if (verdict === "unknown") unknown = true;
    else if (verdict === "invalid") {
      must.push({ path: "cursor", code: "invalid_cursor" });
      invalid = true;
    }
  }
  return { verdict: invalid ? "invalid" : unknown ? "unknown" : "valid", must, may };
}

const byStart = (a: { dateTime: string; id: string }, b: { dateTime: string; id: string }) =>
  Date.parse(a.dateTime) - Date.parse(b.dateTime) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * A 200 page of incidents: this org's only, each exactly as it is now (the
 * GET object), at most `limit`, in (start, id) order. For a query the oracle
 * found valid, exactly the page the filters and the cursor's position give.
 */
export function expectIncidentPage(answer: Answer, pairs: [string, string][], fx: Fixture, verdict: Verdict) {
  expect(answer.status, answer.text).toBe(200);
  const value = (name: string) => pairs.find(([n]) => n === name)?.[1];
  const limit = Number(value("limit") ?? 50);
  const { data, hasMore, nextCursor } = answer.body;
  expect(Object.keys(answer.body).sort()).toEqual(["data", "hasMore", "nextCursor"]);
  expect(data.length).toBeLessThanOrEqual(Number.isFinite(limit) ? limit : 50);
  expect(hasMore).toBe(nextCursor !== null);
  expect(nextCursor === null || typeof nextCursor === "string").toBe(true);
  for (const incident of data)
    expect(incident, "not this org's incident as it is").toEqual(fx.incidents.get(incident.id));
  expect([...data].sort(byStart)).toEqual(data);
  if (verdict !== "valid") return;
  // docs/api.md, "Validation": strings are trimmed, and an empty one is absent.
  const filter = (name: string) => value(name)?.trim() || undefined;
  const at = (name: string) => (filter(name) === undefined ? undefined : instantOf(filter(name)!));
  const [from, to, since] = [at("from"), at("to"), at("updatedSince")];
  const phone = filter("phone") === undefined ? undefined : e164(filter("phone")!);
  const [status, accountId] = [filter("status"), filter("accountId")];
  const cursor = Object.values(fx.cursors.incidents).find((c) => c.token === value("cursor"));
  const matching = [...fx.incidents.values()]
    .filter((incident) => {
      const start = Date.parse(incident.dateTime);
      return (
        (from === undefined || start >= from) &&
        (to === undefined || start < to) &&
        (status === undefined || incident.status === status) &&
        (accountId === undefined || incident.accountId === accountId) &&
        (phone === undefined || incident.phone === phone) &&
        (since === undefined || Date.parse(incident.updatedAt) >= since) &&
        (cursor === undefined ||
          start > cursor.after.at ||
          (start === cursor.after.at && incident.id > cursor.after.id))
      );
    })
    .sort(byStart);
  expect(data).toEqual(matching.slice(0, limit));
  expect(hasMore).toBe(matching.length > limit);
}

/** An incident path segment: one of the org's ids (maybe spoiled), another org's, junk, or raw text. */
export const incidentCases: fc.Arbitrary<AccountCase> = fc.oneof(
  {
    arbitrary: fc.record({
      segment: fc.nat().map((n) => new Sym("ownIncidentId", n)),
      variant: fc.constantFrom("none", "none", "none", "upper", "space", "suffix", "truncate", "prefix"),
      raw: fc.constant(false),
      query,
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      segment: fc.nat().map((n) => new Sym("foreignIncidentId", n)),
      variant: fc.constant("none"),
      raw: fc.constant(false),
      query,
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      segment: fc.oneof(junkString, fc.constantFrom("inc_00000000000000000000000000", "cancel", "reschedule")),
      variant: fc.constant("none"),
      raw: fc.constant(false),
      query,
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      segment: fc.constantFrom(...RAW_SEGMENTS),
      variant: fc.constant("none"),
      raw: fc.constant(true),
      query,
    }),
    weight: 1,
  },
) as fc.Arbitrary<AccountCase>;

/** get_incident tool arguments: an id (own, foreign, junk of any type, or none) and maybe other members. */
export const incidentArgCases = fc.record(
  {
    id: fc.oneof(
      fc.nat().map((n) => new Sym("ownIncidentId", n)),
      fc.nat().map((n) => new Sym("foreignIncidentId", n)),
      junkValue.filter((v) => !["", ".", ".."].includes(v as string)),
    ),
    // Other members become query parameters, which a GET by id refuses: mostly none.
    extra: fc.oneof(
      { arbitrary: fc.constant({}), weight: 3 },
      {
        arbitrary: fc.dictionary(fc.constantFrom("orgId", "limit", "status", "x", "__proto__"), junkValue, {
          maxKeys: 2,
        }),
        weight: 1,
      },
    ),
  },
  { requiredKeys: ["extra"] },
);

/** 200 with exactly this incident as it is now for one of the org's own ids; any other id is a 404. */
export function expectIncidentAnswer(answer: Answer, sentId: string | null, fx: Fixture) {
  const own = sentId === null ? undefined : fx.incidents.get(sentId);
  if (!own) {
    expect(answer.status, answer.text).toBe(404);
    // A segment that is not one ("", "." and ".." turn the URL into another path) is an unknown path.
    expect(["incident_not_found", "not_found"]).toContain(answer.body.code);
    return;
  }
  expect(answer.status, answer.text).toBe(200);
  expect(answer.body).toEqual(own);
}

// The events list (docs/webhooks.md, "Events"): filters type, limit 1–200, a cursor that is never null.

const eventCursorValue = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      new Sym("eventCursor"),
      new Sym("eventTypeCursor"),
      new Sym("eventEndCursor"),
      new Sym("foreignEventCursor"),
      new Sym("plainCursor"),
      new Sym("incidentCursor"),
    ),
    weight: 4,
  },
  { arbitrary: fc.nat().map((n) => new Sym("flippedEventCursor", n)), weight: 2 },
  { arbitrary: fc.nat().map((n) => new Sym("forgedEventCursor", n)), weight: 2 },
  { arbitrary: cursorValue, weight: 1 },
);
const typeValue = fc.oneof(
  { arbitrary: fc.constantFrom(...EVENT_TYPES), weight: 4 },
  {
    arbitrary: fc.constantFrom(
      "LEAD.CREATED",
      " incident.created",
      "",
      "lead",
      "incident.*",
      "lead.created,contact.created",
      "incident.updated",
      "incident_created",
      "account.created",
    ),
    weight: 1,
  },
  { arbitrary: junkString, weight: 1 },
);
const eventOtherName = fc.oneof(
  fc.constantFrom("Type", "types", "event", "since", "after", "seq", "orgId", "status", "cursor ", "type[]", "id"),
  fc.string({ maxLength: 6 }),
);

const eventPair = fc.oneof(
  { arbitrary: fc.tuple(fc.constant("limit"), limitValue), weight: 3 },
  { arbitrary: fc.tuple(fc.constant("cursor"), eventCursorValue), weight: 3 },
  { arbitrary: fc.tuple(fc.constant("type"), typeValue), weight: 3 },
  { arbitrary: fc.tuple(fc.constantFrom(...EVENT_QUERY_FIELDS), blank), weight: 1 },
  { arbitrary: fc.tuple(eventOtherName, fc.oneof(junkString, blank)), weight: 1 },
);

export const eventListCases: fc.Arbitrary<ListCase> = fc.record({
  pairs: fc.array(eventPair, { maxLength: 4 }),
  suffix: fc.oneof(
    { arbitrary: fc.constant(null), weight: 12 },
    { arbitrary: fc.constantFrom(...RAW_SUFFIXES, "&type=lead.created&type=contact.created"), weight: 1 },
  ),
});

/** list_events tool arguments: the query's parameters as an object, some with values of other JSON types. */
export const eventListArgCases = fc.array(
  fc.oneof(
    { arbitrary: eventPair, weight: 4 },
    { arbitrary: fc.tuple(fc.constantFrom(...EVENT_QUERY_FIELDS), junkValue), weight: 1 },
  ),
  { maxLength: 4 },
);

const eventCursors = (fx: Fixture): IssuedEventCursor[] => Object.values(fx.cursors.events);

/** docs/webhooks.md, "Events" on an events list's query string: each parameter, then the cursor against its org and type. */
export function eventListVerdict(pairs: [string, string][], fx: Fixture): BodyVerdict {
  const { must, may, single, ...v } = paramsVerdict(pairs, EVENT_QUERY_FIELDS);
  let { invalid, unknown } = v;
  const cursor = single("cursor");
  if (!invalid && !unknown && cursor !== undefined) {
    const verdict = cursorVerdict(
      cursor,
      { type: single("type") },
      eventCursors(fx).map((c) => ({
        token: c.token,
        filters: c.type ? { type: c.type } : ({} as Record<string, string>),
      })),
    );
    if (verdict === "unknown") unknown = true;
    else if (verdict === "invalid") {
      must.push({ path: "cursor", code: "invalid_cursor" });
      invalid = true;
    }
  }
  return { verdict: invalid ? "invalid" : unknown ? "unknown" : "valid", must, may };
}

/** JSON with object members in name order: two values are equal exactly when their canonical texts are. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );

/**
 * A 200 page of events: the org's own only (each one its requests' answers
 * predicted, in the Event shape, stamped while its request ran), in commit
 * order, at most `limit`, of the filtered type, and a nextCursor that is never
 * null. For a query the oracle found valid, exactly the events after the
 * cursor's position, hasMore, and — where the page ends where an issued
 * cursor of the same filter points — that very cursor.
 */
export function expectEventPage(answer: Answer, pairs: [string, string][], fx: Fixture, verdict: Verdict) {
  expect(answer.status, answer.text).toBe(200);
  const value = (name: string) => pairs.find(([n]) => n === name)?.[1];
  const limit = Number(value("limit") ?? 50);
  const { data, hasMore, nextCursor } = answer.body;
  expect(Object.keys(answer.body).sort()).toEqual(["data", "hasMore", "nextCursor"]);
  expect(data.length).toBeLessThanOrEqual(Number.isFinite(limit) ? limit : 50);
  expect(typeof hasMore).toBe("boolean");
  expect(nextCursor, "nextCursor is never null").toEqual(expect.any(String));
  const known = fx.events.map(({ type, data, previous }) => canonical({ type, data, previous }));
  const places: number[] = [];
  const ids = new Set<string>();
  for (const event of data) {
    const { id, type, timestamp, actor, data: resource, previous, ...rest } = event;
    expect(rest, "members beyond the Event schema").toEqual({});
    // The fixture's requests were made with an office key, over HTTP or MCP, reporting no call.
    expect(actor).toEqual({
      keyId: expect.stringMatching(/^key_/),
      role: "office",
      channel: expect.stringMatching(/^(http|mcp)$/),
      callId: null,
      callerPhone: null,
    });
    expect(id).toMatch(/^evt_[0-9a-z]{26}$/);
    expect(ids.has(id), `${id} listed twice`).toBe(false);
    ids.add(id);
    const place = known.indexOf(canonical({ type, data: resource, previous }));
    expect(place, `not an event of this org's requests: ${JSON.stringify(event)}`).toBeGreaterThanOrEqual(0);
    const { before, after } = fx.events[place]!;
    expect(Date.parse(timestamp), `${timestamp} outside its request`).toBeGreaterThanOrEqual(before);
    expect(Date.parse(timestamp), `${timestamp} outside its request`).toBeLessThanOrEqual(after);
    expect(new Date(Date.parse(timestamp)).toISOString()).toBe(timestamp);
    places.push(place);
  }
  expect(
    [...places].sort((a, b) => a - b),
    "not in commit order",
  ).toEqual(places);
  if (verdict !== "valid") return;
  // docs/api.md, "Validation": strings are trimmed, and an empty one is absent.
  const type = value("type")?.trim() || undefined;
  const given = value("cursor");
  const from = given === undefined ? 0 : eventCursors(fx).find((c) => c.token === given)!.after;
  const matching = fx.events.flatMap((e, i) => (i >= from && (type === undefined || e.type === type) ? [i] : []));
  expect(places).toEqual(matching.slice(0, limit));
  expect(hasMore).toBe(matching.length > limit);
  // The position the next call starts from: after the last event listed, or where this one started.
  const end = places.length > 0 ? places.at(-1)! + 1 : from;
  if (places.length === 0 && given !== undefined) expect(nextCursor, "an empty page repeats its cursor").toBe(given);
  const same = eventCursors(fx).find((c) => c.after === end && c.type === type);
  if (same) expect(nextCursor, "the cursor issued for the same position").toBe(same.token);
}

/** Query strings of GET /api/v1/services, which takes no parameter: those of a GET by id. */
export const serviceQueries = query;

/** list_services arguments: mostly none; any member becomes a query parameter, which the operation refuses. */
export const serviceArgCases = fc.oneof(
  { arbitrary: fc.constant({}), weight: 3 },
  {
    arbitrary: fc.dictionary(fc.constantFrom("id", "orgId", "active", "x", "__proto__"), junkValue, { maxKeys: 2 }),
    weight: 1,
  },
);

/** 200 with exactly the org's active services (never another org's). */
export function expectServicesAnswer(answer: Answer, fx: Fixture) {
  expect(answer.status, answer.text).toBe(200);
  expect(answer.body).toEqual(fx.services);
}

/** Query strings of GET /api/v1/ai-agent/context, which takes no parameter either: those of a GET by id. */
export const contextQueries = query;

/** get_call_context arguments: mostly none; any member becomes a query parameter, which the operation refuses. */
export const contextArgCases = fc.oneof(
  { arbitrary: fc.constant({}), weight: 3 },
  {
    arbitrary: fc.dictionary(fc.constantFrom("orgId", "timeZone", "date", "x", "__proto__"), junkValue, {
      maxKeys: 2,
    }),
    weight: 1,
  },
);

const DAY_NAMES = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];
/** The lower-case English name of the UTC day that holds `at`. */
const dayName = (at: number) => DAY_NAMES[new Date(at).getUTCDay()]!;

/**
 * 200 with exactly the org's call context (docs/api.md, "Call context") at a
 * `now` read while the request ran (between `before` and `after`): the org,
 * UTC, `now` in its UTC and local forms, its date and weekday, the 7 dates
 * from it open around the clock, its one service, and as the next slot the
 * next whole hour with both places (nothing of the fixture's is booked or
 * held that soon: its incident in progress ends when that hour starts).
 */
export function expectContextAnswer(answer: Answer, fx: Fixture, before: number, after: number) {
  expect(answer.status, answer.text).toBe(200);
  const { now, ...rest } = answer.body;
  expect(now, answer.text).toMatch(UTC_FORM);
  const at = Date.parse(now);
  expect(iso(at)).toBe(now);
  expect(at, `${now} outside its request`).toBeGreaterThanOrEqual(before);
  expect(at, `${now} outside its request`).toBeLessThanOrEqual(after);
  const today = Math.floor(at / DAY) * DAY;
  const next = Math.ceil(at / HOUR) * HOUR;
  expect(rest, answer.text).toEqual({
    ...fx.context,
    localNow: `${now.slice(0, 19)}+00:00`,
    localDate: now.slice(0, 10),
    weekday: dayName(at),
    openingHours: Array.from({ length: 7 }, (_, i) => ({
      date: iso(today + i * DAY).slice(0, 10),
      weekday: dayName(today + i * DAY),
      intervals: [["00:00", "24:00"]],
    })),
    nextAvailable: { ...utcAppointment(next), remaining: 2, serviceId: null, arrivalWindow: null },
  });
}
