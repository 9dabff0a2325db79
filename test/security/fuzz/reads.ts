// The two GET operations as the fuzz sees them: query strings for the contact
// list (limits, filters, real, foreign and tampered cursors, unknown and
// repeated parameters) and path segments for one account.
import fc from "fast-check";
import { expect } from "vitest";
import type { Answer, Fixture } from "./harness";
import { type BodyVerdict, dateTimeVerdict, type Named, type Verdict } from "./oracle";
import { junkDateTime, junkString, junkValue, Sym, validDateTime, validEmail } from "./values";

export const QUERY_FIELDS = ["limit", "cursor", "accountId", "email", "updatedSince"];

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
  { arbitrary: fc.constantFrom(new Sym("plainCursor"), new Sym("accountCursor"), new Sym("foreignCursor")), weight: 3 },
  { arbitrary: fc.nat().map((n) => new Sym("flippedCursor", n)), weight: 2 },
  fc.base64String({ maxLength: 80 }),
  fc.string({ maxLength: 40 }),
  fc.constantFrom("x".repeat(1025), "", " ", "eyJ0IjowfQ", "null", "%", "a+b/c=="),
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
);
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

const pair = fc.oneof(
  { arbitrary: fc.tuple(fc.constant("limit"), limitValue), weight: 3 },
  { arbitrary: fc.tuple(fc.constant("cursor"), cursorValue), weight: 3 },
  { arbitrary: fc.tuple(fc.constant("accountId"), accountIdValue), weight: 2 },
  { arbitrary: fc.tuple(fc.constant("email"), fc.oneof(validEmail, junkString)), weight: 2 },
  { arbitrary: fc.tuple(fc.constant("updatedSince"), fc.oneof(junkDateTime, validDateTime)), weight: 2 },
  { arbitrary: fc.tuple(otherName, junkString), weight: 1 },
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
    extra: fc.dictionary(fc.constantFrom("orgId", "limit", "x", "__proto__"), junkValue, { maxKeys: 2 }),
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
  // Whitespace around a number, or an empty value: the contract does not say.
  return value.trim() !== value || value === "" ? "unknown" : "invalid";
}

const isClean = (s: string) => s.isWellFormed() && !s.includes("\u0000");

function queryFieldVerdict(name: string, value: string): Verdict {
  switch (name) {
    case "limit":
      return limitVerdict(value);
    case "cursor":
      if (value.length > 1024) return "invalid";
      return value === "" || value.trim() !== value ? "unknown" : "valid";
    case "accountId":
      return isClean(value) && value.trim().length <= 200 ? "valid" : "unknown";
    case "email":
      return isClean(value) && value.trim().length <= 320 ? "valid" : "unknown";
    default:
      return value.trim() === "" ? "unknown" : dateTimeVerdict(value);
  }
}

const oneCharApart = (a: string, b: string) =>
  a.length === b.length && [...a].filter((ch, i) => ch !== b[i]).length <= 1;

/** Contract 4.3 on a query string: unknown and repeated parameters, each value, then the cursor against its org and filters. */
export function listVerdict(pairs: [string, string][], fx: Fixture): BodyVerdict {
  const byName = new Map<string, string[]>();
  for (const [name, value] of pairs) byName.set(name, [...(byName.get(name) ?? []), value]);
  const must: Named[] = [];
  const may = new Set(byName.keys());
  let invalid = false;
  let unknown = false;
  for (const [name, values] of byName) {
    // A parameter without a name ("?=x") may be ignored: the contract does not say.
    const verdict =
      name === ""
        ? "unknown"
        : !QUERY_FIELDS.includes(name)
          ? "unknown_field"
          : values.length > 1
            ? "invalid"
            : queryFieldVerdict(name, values[0]!);
    if (verdict === "unknown_field") must.push({ path: name, code: "unknown_field" });
    else if (verdict === "invalid") must.push({ path: name });
    invalid ||= verdict === "invalid" || verdict === "unknown_field";
    unknown ||= verdict === "unknown";
  }
  const single = (name: string) => byName.get(name)?.[0];
  const cursor = single("cursor");
  if (!invalid && !unknown && cursor !== undefined) {
    const filters = ["accountId", "email", "updatedSince"].map(single);
    const noFilters = filters.every((f) => f === undefined);
    const matches =
      (cursor === fx.cursors.plain && noFilters) ||
      (cursor === fx.cursors.account &&
        single("accountId")?.trim() === fx.accounts[0]!.id &&
        filters.slice(1).every((f) => f === undefined));
    // A flipped character may still decode to a position of this org's list (cursors are not signed, only scoped).
    if (oneCharApart(cursor, fx.cursors.plain) || filters.some((f) => f?.trim() === "")) unknown = true;
    else if (!matches) {
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

/** A 200 page: this org's contacts only, at most `limit`, matching the filters, in the contract's shape. */
export function expectPage(answer: Answer, pairs: [string, string][], fx: Fixture) {
  expect(answer.status, answer.text).toBe(200);
  const value = (name: string) => pairs.find(([n]) => n === name)?.[1];
  const limit = Number(value("limit") ?? 50);
  const { data, hasMore, nextCursor } = answer.body;
  expect(data.length).toBeLessThanOrEqual(Number.isFinite(limit) ? limit : 50);
  expect(hasMore).toBe(nextCursor !== null);
  expect(nextCursor === null || typeof nextCursor === "string").toBe(true);
  for (const contact of data) {
    expect(Object.keys(contact).sort()).toEqual([...CONTACT_KEYS].sort());
    expect(fx.contacts.has(contact.id), `${contact.id} is not a contact of this org`).toBe(true);
    const accountId = value("accountId");
    if (accountId !== undefined) expect(contact.accountId).toBe(accountId.trim());
    const email = value("email");
    if (email !== undefined) expect(contact.email?.toLowerCase()).toBe(email.trim().toLowerCase());
  }
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
const query = fc.constantFrom("", "", "", "?x=1", "?id=acct_x", "?orgId=org_x");

export const accountCases: fc.Arbitrary<AccountCase> = fc.oneof(
  {
    arbitrary: fc.record({
      segment: fc.constantFrom(new Sym("ownAccountId", 0), new Sym("ownAccountId", 1)),
      variant: fc.constantFrom("none", "none", "none", "upper", "space", "suffix", "truncate", "prefix"),
      raw: fc.constant(false),
      query,
    }),
    weight: 3,
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
      return `acct_${id}`;
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
