// fast-check generators of request values for the fuzz suites: hostile values
// (wrong types, huge and malformed strings, impossible date-times, absurd
// numbers, nested junk) and valid ones, so that generated bodies mix the two.
import fc from "fast-check";
import { HOUR, MINUTE } from "../../support/time";

/** A value resolved against the org under test when the request is sent (its ids, cursors, slot times). */
export class Sym {
  constructor(
    readonly kind: SymKind,
    readonly n = 0,
  ) {}
}
export type SymKind =
  | "ownAccountId"
  | "ownAccountName"
  | "foreignAccountId"
  | "foreignAccountName"
  | "foreignContactId"
  | "plainCursor"
  | "accountCursor"
  | "foreignCursor"
  | "flippedCursor"
  | "slot"
  /** One of the org's incidents (the n-th, in the order they were booked), or a booking made just before the request. */
  | "ownIncidentId"
  | "ownPlanId"
  | "foreignPlanId"
  | "freshIncidentId"
  | "foreignIncidentId"
  /** The start of the slot the n-th incident holds now (so that a reschedule there is a no-op). */
  | "heldSlot"
  /** A slot of the org that its bookings fill (capacity 2, both places taken). */
  | "fullSlot"
  /** One of the org's holds (the n-th, in the order they were made), as is or spoiled the n-th way; another org's. */
  | "ownHoldId"
  | "spoiledHoldId"
  | "foreignHoldId"
  /** The start of the place the n-th hold of the org keeps (or kept). */
  | "holdSlot"
  /** One of the phones the org's contacts, accounts and incidents carry, written in the n-th spelling. */
  | "ownPhone"
  | "foreignPhone"
  /** Cursors of the incident list: without filters, for status=scheduled, for phone = the org's first phone. */
  | "incidentCursor"
  | "incidentStatusCursor"
  | "incidentPhoneCursor"
  | "foreignIncidentCursor"
  | "flippedIncidentCursor"
  /** The contact list's cursor for phone = the org's first phone. */
  | "contactPhoneCursor"
  /** Cursors of the events list: after the first event, after the first incident.created (type=incident.created), after the last. */
  | "eventCursor"
  | "eventTypeCursor"
  | "eventEndCursor"
  | "foreignEventCursor"
  | "flippedEventCursor"
  /**
   * A real cursor of the contact, incident or event list decoded, one member
   * changed (t, i, the MAC, a member added, …; the n-th way) and encoded again.
   */
  | "forgedCursor"
  | "forgedIncidentCursor"
  | "forgedEventCursor";

export const LONE_SURROGATES = ["\uD800", "\uDBFF", "\uDC00", "\uDFFF", "a\uD83Db", "\uDE00x"];

const SPECIAL_STRINGS = [
  "",
  " ",
  "\t\n\r",
  "\u00A0",
  "\uFEFF",
  "\u200B",
  "\u0000",
  "a\u0000b",
  "🦗🐜🕷️",
  "👩‍👩‍👧‍👦",
  "\u202Eevil\u202C",
  "مرحبا بالعالم",
  "שלום",
  "e\u0301",
  "Ǆ",
  "İstanbul",
  "ß",
  "null",
  "undefined",
  "true",
  "0",
  "-1",
  "1e9",
  "NaN",
  "[]",
  "{}",
  "<script>alert(1)</script>",
  "' OR 1=1 --",
  "Robert'); DROP TABLE contacts;--",
  "%00",
  "\\u0000",
  "../../etc/passwd",
  "__proto__",
  "constructor",
  "a@b.co",
  "A@B.CO",
  "a@b",
  "@b.co",
  "a b@c.de",
  "a@b@c.de",
  "ü@ñ.de",
  "$" + "{jndi:ldap://x}",
  "{{7*7}}",
  "\u{10FFFF}",
  "\u{1F600}".repeat(3),
  ...LONE_SURROGATES,
];

/** Characters outside the BMP (2 UTF-16 code units each) and inside it, none of them trimmed. */
const ASTRAL = ["🦗", "😀", "𝄞", "🐜", "\u{1F3FD}", "\u{20000}"];
const PIECES = [...ASTRAL, "👩‍👩‍👧‍👦", "é", "e\u0301", "ß", "İ", "中", "a", "@", "."];

/** Pieces, then astral characters, then one BMP character if need be: exactly `units` UTF-16 code units, trimmed. */
function filled(pieces: string[], units: number, astral: string, last: string): string {
  let text = "";
  for (const piece of pieces) if (text.length + piece.length <= units) text += piece;
  while (text.length + 2 <= units) text += astral;
  return text.length < units ? text + last : text;
}

/**
 * A string exactly at a limit of `max` UTF-16 code units (docs/api.md,
 * "Length limits": an emoji counts 2) made mostly of astral characters, so
 * that it holds far fewer code points than `max`; maybe padded with spaces
 * that trimming removes.
 */
export const astralAt = (max: number) =>
  fc
    .record({
      pieces: fc.array(fc.constantFrom(...PIECES), { maxLength: 6 }),
      astral: fc.constantFrom(...ASTRAL),
      last: fc.constantFrom("x", "é", "中"),
      pad: fc.constantFrom("", " ", "\t "),
    })
    .map(({ pieces, astral, last, pad }) => `${pad}${filled(pieces, max, astral, last)}${pad}`);

/**
 * A string one or two code units over a limit of `max`, but with at most
 * `max` code points (what counting code points, or characters, would take):
 * at the limit plus one BMP character, all astral, or a BMP run ending in one
 * astral character.
 */
export const astralOver = (max: number) =>
  fc.oneof(
    astralAt(max).map((text) => `${text.trim()}x`),
    fc.constantFrom(...ASTRAL).map((astral) => astral.repeat(Math.floor(max / 2) + 1)),
    fc.constantFrom(...ASTRAL).map((astral) => `${"x".repeat(max - 1)}${astral}`),
    fc.constantFrom(...ASTRAL).map((astral) => ` ${astral.repeat(Math.ceil(max / 2))}y `),
  );

/** Lengths around every limit of docs/api.md ("Errors", "Validation"), and past the 64 KiB body limit. */
const LENGTHS = [20, 21, 40, 41, 199, 200, 201, 320, 321, 500, 501, 1024, 1025, 5000, 70_000];

const longString = fc
  .tuple(fc.constantFrom(...LENGTHS), fc.constantFrom("x", "é", "🦗", " ", "\u0000", "ab "))
  .map(([n, unit]) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n));

const character = fc.oneof(
  fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 1 }),
  fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
  fc.constantFrom("\u0000", "\u202E", "\u200F", " ", "\t", "@", ".", "🦗"),
);

export const junkString = fc.oneof(
  { arbitrary: fc.constantFrom(...SPECIAL_STRINGS), weight: 3 },
  { arbitrary: fc.string({ unit: character, maxLength: 30 }), weight: 3 },
  { arbitrary: longString, weight: 1 },
  {
    arbitrary: fc
      .tuple(fc.constantFrom(" ", "\t", "\u00A0", "\n"), fc.string({ maxLength: 10 }))
      .map(([ws, s]) => `${ws}${s}${ws}`),
    weight: 1,
  },
);

export const junkNumber = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    -1,
    1,
    1.5,
    10,
    100,
    101,
    200,
    201,
    1e9,
    2147483647,
    2147483648,
    -2147483648,
    Number.MAX_SAFE_INTEGER,
    2 ** 53 + 2,
    1e308,
    5e-324,
    Number.NaN,
    Number.POSITIVE_INFINITY,
  ),
  fc.integer(),
  fc.double(),
);

/** Date-times a client might send: naive, in DST gaps, impossible, other formats, and well-formed ones. */
export const DATE_TIME_CONSTANTS = [
  "2026-03-08T02:30:00", // naive, and in New York's spring-forward gap
  "2026-03-08T02:30:00-05:00",
  "2026-03-08T02:30:00-04:00",
  "2026-11-01T01:30:00", // naive and ambiguous in New York
  "2026-11-01T01:30:00-04:00",
  "2026-03-29T01:30:00+01:00", // London's gap, with an offset
  "2026-02-30T10:00:00Z",
  "2026-02-29T10:00:00Z",
  "2028-02-29T10:00:00Z",
  "2100-02-29T00:00:00Z",
  "2000-02-29T00:00:00Z",
  "2026-04-31T10:00:00Z",
  "2026-13-01T00:00:00Z",
  "2026-00-10T00:00:00Z",
  "2026-11-00T00:00:00Z",
  "2026-11-23T24:00:00Z",
  "2026-11-23T23:60:00Z",
  "2026-11-23T14:00:00+24:00",
  "2026-11-23T14:00:00+23:59",
  "2026-11-23T14:00:00-00:00",
  "2026-11-23T14:00:00+05:30",
  "2026-11-23T14:00:00+0530",
  "2026-11-23T14:00:00+05",
  "2026-11-23t14:00:00z",
  "2026-11-23 14:00:00Z",
  "2026-11-23T14:00Z",
  "2026-11-23T14Z",
  "2026-11-23T14:00:00.Z",
  "2026-11-23T14:00:00.123456789Z",
  "2026-11-23T14:00:00.000000001+14:00",
  "2026-11-23",
  "20261123T140000Z",
  "2026-W48-1T14:00:00Z",
  "2026-327T14:00:00Z",
  "+002026-11-23T14:00:00Z",
  "0001-01-01T00:00:00Z",
  "9999-12-31T23:59:59.999-12:00",
  // The ends of the range (docs/api.md, "Conventions"), reached through offsets.
  "9999-12-31T23:00:00-14:00",
  "9999-12-31T09:59:59.999-14:00",
  "9999-12-31T10:00:00-14:00",
  "9999-12-31T23:59:59.999Z",
  "9999-12-31T23:59:59.999999999Z",
  "9999-12-31T23:59:59.999-00:01",
  "9999-12-31T23:59:59+23:59",
  "0001-01-01T00:00:00+00:01",
  "0001-01-01T14:00:00+14:00",
  "0001-01-01T13:59:59.999+14:00",
  "0001-01-01T00:00:00-23:59",
  "0000-12-31T23:59:59.999Z",
  "0000-12-31T23:00:00-14:00",
  "10000-01-01T00:00:00+14:00",
  "275760-09-13T00:00:00Z",
  "Mon, 23 Nov 2026 14:00:00 GMT",
  "1790000000000",
  "now",
  " 2026-11-23T14:00:00Z ",
  "\u00002026-11-23T14:00:00Z",
  "２０２６-11-23T14:00:00Z",
  "2026-11-23T14:00:00Z\u0000",
];

const two = (n: number) => String(n).padStart(2, "0");

/** Date-time strings assembled from parts that are often out of range. */
const assembledDateTime = fc
  .record({
    year: fc.oneof(fc.integer({ min: 1900, max: 2200 }), fc.constantFrom(1000, 9999)),
    month: fc.integer({ min: 0, max: 13 }),
    day: fc.integer({ min: 0, max: 32 }),
    hour: fc.integer({ min: 0, max: 25 }),
    minute: fc.integer({ min: 0, max: 61 }),
    second: fc.option(fc.integer({ min: 0, max: 61 })),
    fraction: fc.option(fc.stringMatching(/^[0-9]{1,9}$/)),
    zone: fc.constantFrom(
      "Z",
      "z",
      "+00:00",
      "-05:00",
      "+05:30",
      "+14:00",
      "-12:00",
      "+24:00",
      "+23:60",
      "",
      "+0530",
      "UTC",
      " Z",
    ),
    separator: fc.constantFrom("T", "t", " "),
  })
  .map(({ year, month, day, hour, minute, second, fraction, zone, separator }) => {
    const seconds = second === null ? "" : `:${two(second)}${fraction === null ? "" : `.${fraction}`}`;
    return `${year}-${two(month)}-${two(day)}${separator}${two(hour)}:${two(minute)}${seconds}${zone}`;
  });

/** Valid date-times: in range, with a zone. */
export const validDateTime = fc
  .record({
    at: fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2100, 0, 1) }),
    offset: fc.constantFrom(0, 330, -300, 840, -720, 60),
    zulu: fc.constantFrom("Z", "z", "+00:00"),
    precision: fc.constantFrom(0, 1, 3),
  })
  .map(({ at, offset, zulu, precision }) => {
    const local = new Date(at + offset * MINUTE).toISOString();
    const body = precision === 0 ? local.slice(0, 19) : precision === 1 ? local.slice(0, 16) : local.slice(0, 23);
    const zone =
      offset === 0
        ? zulu
        : `${offset < 0 ? "-" : "+"}${two(Math.floor(Math.abs(offset) / 60))}:${two(Math.abs(offset) % 60)}`;
    return `${body}${zone}`;
  });

export const slot = fc.integer({ min: -30, max: 760 }).map((hours) => new Sym("slot", hours));

/** The first and last instants of the range (docs/api.md, "Conventions"). */
const FIRST = Date.parse("0001-01-01T00:00:00.000Z");
const LAST = Date.parse("9999-12-31T23:59:59.999Z");

/** "±HH:MM" (or "Z") of an offset in minutes. */
const zoneOf = (offset: number, zulu = "Z") =>
  offset === 0
    ? zulu
    : `${offset < 0 ? "-" : "+"}${two(Math.floor(Math.abs(offset) / 60))}:${two(Math.abs(offset) % 60)}`;

/**
 * The local time `local` (ms, written in UTC fields) with `digits` of
 * fraction (0, or 3 and more: digits past the millisecond are truncated, so
 * nines change nothing) and the offset `offset` in minutes.
 */
export const writtenAt = (local: number, offset: number, digits: number, zulu = "Z") => {
  const text = new Date(local).toISOString();
  const fraction = digits === 0 ? "" : `${text.slice(19, 23)}${"9".repeat(digits - 3)}`;
  return `${text.slice(0, 19)}${fraction}${zoneOf(offset, zulu)}`;
};

/** Instants (or local times) within 30 hours of either end of the range, and the ends themselves. */
const nearRangeEnds = fc.oneof(
  fc.integer({ min: FIRST, max: FIRST + 30 * HOUR }),
  fc.integer({ min: LAST - 30 * HOUR, max: LAST }),
  fc.constantFrom(FIRST, LAST),
);

/**
 * Date-times written near the ends of the range with any offset up to
 * ±14:00: in UTC some lie just inside the range, some just outside (year 0000
 * or 10000). What is written always has a four-digit year.
 */
export const edgeDateTime = fc
  .record({
    local: nearRangeEnds,
    offset: fc.oneof(fc.integer({ min: -840, max: 840 }), fc.constantFrom(-840, -1, 0, 1, 840)),
    digits: fc.constantFrom(0, 3, 9),
  })
  .map(({ local, offset, digits }) => writtenAt(digits === 0 ? local - (local % 1000) : local, offset, digits));

/** Offsets (minutes) valid date-times are written with: both extremes, half and three-quarter hours, a minute. */
export const OFFSETS = [-840, -720, -570, -330, -1, 0, 1, 345, 765, 840];

/** `at` written with the offset `offset` (minutes) when its local time stays within the years 0001–9999, else in Z. */
export const atOffset = (at: number, offset: number, digits = 3) => {
  const fits = at + offset * MINUTE >= FIRST && at + offset * MINUTE <= LAST;
  return writtenAt(
    at + (fits ? offset : 0) * MINUTE,
    fits ? offset : 0,
    at % 1000 === 0 ? digits : Math.max(3, digits),
  );
};

/** Valid date-times within 30 hours of either end of the range, written with offsets up to ±14:00. */
export const validEdgeDateTime = fc
  .record({
    at: nearRangeEnds,
    offset: fc.constantFrom(...OFFSETS),
    digits: fc.constantFrom(0, 3, 9),
  })
  .map(({ at, offset, digits }) => atOffset(at, offset, digits));

export const junkDateTime = fc.oneof(
  fc.constantFrom(...DATE_TIME_CONSTANTS),
  assembledDateTime,
  validDateTime,
  edgeDateTime,
);

const junkKey = fc.oneof(
  fc.constantFrom("a", "", "__proto__", "constructor", "toString", "$where", "0"),
  fc.string({ maxLength: 8 }),
);

/** Any JSON-able value a broken or hostile client might put in a field. */
export const junkValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: junkString, weight: 5 },
  { arbitrary: junkNumber, weight: 3 },
  { arbitrary: junkDateTime, weight: 3 },
  { arbitrary: fc.constantFrom(null, true, false, [], {}, [null], { "": null }), weight: 2 },
  { arbitrary: fc.anything({ maxDepth: 3, maxKeys: 4, withNullPrototype: false }), weight: 2 },
  { arbitrary: fc.dictionary(junkKey, fc.anything({ maxDepth: 2 }), { maxKeys: 4 }), weight: 1 },
  { arbitrary: fc.array(junkString, { maxLength: 4 }), weight: 1 },
);

const alnum = (min: number, max: number) => fc.stringMatching(new RegExp(`^[a-z0-9]{${min},${max}}$`));

export const validEmail = fc
  .tuple(alnum(1, 12), alnum(1, 10), fc.stringMatching(/^[a-z]{2,6}$/), fc.boolean())
  .map(([local, domain, tld, upper]) => {
    const email = `${local}@${domain}.${tld}`;
    return upper ? email.toUpperCase() : email;
  });

/** A well-formed string without NUL whose trimmed length is at most `max` (sometimes exactly `max`, sometimes padded). */
export const validText = (max: number) =>
  fc.oneof(
    {
      arbitrary: fc
        .string({ unit: "grapheme", maxLength: Math.min(max, 24) })
        .filter((s) => !s.includes("\u0000") && s.trim().length <= max),
      weight: 6,
    },
    {
      arbitrary: fc.constantFrom("x".repeat(max), ` ${"y".repeat(max)}\t`, "Ünïcödé", "مرحبا", "🦗 Pest & Co.", "   "),
      weight: 1,
    },
    { arbitrary: astralAt(max), weight: 1 },
  );

/** Names of fields near the known ones and of internal columns: what mass assignment and typos look like. */
export const UNKNOWN_KEYS = [
  "firstname",
  "FIRSTNAME",
  "first_name",
  "e-mail",
  "Email",
  "datetime",
  "date_time",
  "clientname",
  "Limit",
  "id",
  "orgId",
  "org_id",
  "createdAt",
  "updatedAt",
  "created_at",
  "keyHash",
  "key_hash",
  "apiKey",
  "status",
  "emailLower",
  "nameLower",
  "startsAt",
  "endsAt",
  "__proto__",
  "constructor",
  "",
  " ",
  "extra",
  "😀",
];

/**
 * Phone numbers as callers and agents write them: valid US numbers in many
 * spellings (read in the org's country, US), international ones with "+",
 * and near misses (too short, too long, letters, unassigned prefixes). The
 * exchange 555 is left to the fixtures' own phones, so that a generated
 * number never is one of another org's.
 */
const digits = (n: number) => fc.stringMatching(new RegExp(`^[0-9]{${n}}$`));
const usNumber = fc
  .tuple(
    fc.integer({ min: 200, max: 999 }),
    fc.integer({ min: 200, max: 999 }).filter((x) => x !== 555),
    digits(4),
  )
  .map(([area, exchange, line]) => [String(area), String(exchange), line] as const);
const US_SPELLINGS: ((n: readonly [string, string, string]) => string)[] = [
  ([a, e, l]) => `+1${a}${e}${l}`,
  ([a, e, l]) => `+1 ${a} ${e} ${l}`,
  ([a, e, l]) => `(${a}) ${e}-${l}`,
  ([a, e, l]) => `${a}-${e}-${l}`,
  ([a, e, l]) => `${a}.${e}.${l}`,
  ([a, e, l]) => `1${a}${e}${l}`,
  ([a, e, l]) => ` ${a}${e}${l} `,
  ([a, e, l]) => `+1-${a}-${e}-${l} ext. 7`,
];
export const validPhone = fc.oneof(
  fc.tuple(usNumber, fc.nat(US_SPELLINGS.length - 1)).map(([n, i]) => US_SPELLINGS[i]!(n)),
  fc.constantFrom("+33 6 12 34 56 78", "+49 30 1234567", "+61 2 9876 5432", "+81 3-1234-5678", "+1 800 234 0100"),
);
export const junkPhone = fc.oneof(
  fc.constantFrom(
    "911",
    "0",
    "+",
    "+1",
    "1234567890",
    "+1 555 555 5555",
    "+1917234567",
    "+19172345678000",
    "020 7946 1000",
    "+999 123",
    "phone",
    "ask for Bob",
    "+1 (917) 234-5678 and +1 (917) 234-5679",
    "\u0000+19172345678",
    "+1\u00009172345678",
    "+1 917 234 5678".padEnd(41, "0"),
  ),
  digits(3),
  digits(12),
  validPhone.map((p) => `${p}x`.replace(/\d/, "")),
);
