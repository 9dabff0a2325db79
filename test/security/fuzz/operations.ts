// The five POST operations as the fuzz sees them: their fields (for the
// oracle), generators of valid bodies and of hostile values per field, what a
// valid body must answer, and the check of any answer against the oracle.
import fc from "fast-check";
import { expect } from "vitest";
import { type Answer, type Fixture, type Foreign, resolveObject } from "./harness";
import { type BodySpec, bodyVerdict, type FieldKind, isAbsent, isValidIdempotencyKey, type Named } from "./oracle";
import {
  junkDateTime,
  junkNumber,
  junkString,
  junkValue,
  Sym,
  slot,
  UNKNOWN_KEYS,
  validDateTime,
  validEmail,
  validText,
} from "./values";

export interface PostOp {
  name: string;
  path: string;
  tool: string;
  spec: BodySpec;
  valid: fc.Arbitrary<Record<string, unknown>>;
  /** Hostile values aimed at one field, besides the generic ones. */
  junk: Partial<Record<string, fc.Arbitrary<unknown>>>;
  /** Checks the answer to a body whose every field is valid, and records what it stored. */
  outcome(fx: Fixture, body: Record<string, unknown>, answer: Answer): void;
}

const text = (max: number): FieldKind => ({ type: "text", max });
const ADDRESS = {
  buildingLocation: text(200),
  street1: text(500),
  street2: text(500),
  city: text(200),
  postalCode: text(20),
  state: text(200),
  country: text(200),
};
const PHONES = { mobilePhone: text(40), businessPhone: text(40) };
const REACHABLE = ["firstName", "lastName", "email", "mobilePhone", "businessPhone"];

const nullable = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: arb, weight: 4 }, { arbitrary: fc.constant(null), weight: 1 });
const nonBlank = (max: number) => validText(max).filter((s) => s.trim() !== "");
const code = fc.integer({ min: 0, max: 2147483647 });
const validAddress = {
  buildingLocation: validText(200),
  street1: validText(500),
  street2: validText(500),
  city: validText(200),
  postalCode: validText(20),
  state: validText(200),
  country: validText(200),
};
const codeJunk = fc.oneof(junkNumber, fc.constantFrom("1", "0x10", 2147483648, -1, 0.5));

/** The stored text of a valid string field: trimmed, and null when absent (contract 3). */
const stored = (value: unknown) => (typeof value === "string" && value.trim() !== "" ? value.trim() : null);

function expectEchoed(fields: string[], body: Record<string, unknown>, answer: Answer) {
  for (const field of fields) expect(answer.body[field], `${field} of ${answer.text}`).toBe(stored(body[field]));
}

function expectNew(set: { has(id: string): boolean }, id: unknown, prefix: string) {
  expect(id).toEqual(expect.stringMatching(new RegExp(`^${prefix}_[0-9a-z]{26}$`)));
  expect(set.has(id as string), `${id} was answered before`).toBe(false);
}

const LEAD_TEXT = [
  "firstName",
  "lastName",
  "title",
  "companyName",
  "email",
  "mobilePhone",
  "businessPhone",
  ...Object.keys(ADDRESS),
];

export const createLead: PostOp = {
  name: "POST /api/v1/leads",
  path: "/api/v1/leads",
  tool: "create_lead",
  spec: {
    fields: {
      firstName: text(200),
      lastName: text(200),
      title: text(200),
      companyName: text(200),
      email: { type: "email" },
      ...PHONES,
      leadSource: { type: "code" },
      accountType: { type: "code" },
      rating: { type: "code" },
      estimatedValue: { type: "amount" },
      estimatedCloseDate: { type: "date" },
      ...ADDRESS,
    },
  },
  valid: fc.record(
    {
      firstName: nullable(validText(200)),
      lastName: validText(200),
      title: validText(200),
      companyName: validText(200),
      email: nullable(validEmail),
      mobilePhone: validText(40),
      businessPhone: validText(40),
      leadSource: nullable(code),
      accountType: code,
      rating: code,
      estimatedValue: nullable(fc.double({ min: 0, max: 1e12, noNaN: true })),
      estimatedCloseDate: fc.oneof(validDateTime, fc.constantFrom("2026-12-15", "2028-02-29", "")),
      ...validAddress,
    },
    { requiredKeys: [] },
  ),
  junk: {
    email: fc.oneof(
      junkString,
      validEmail.map((e) => `${e}.`),
    ),
    leadSource: codeJunk,
    accountType: codeJunk,
    rating: codeJunk,
    estimatedValue: fc.oneof(junkNumber, fc.constantFrom("100", -0.01, -1e-300)),
    estimatedCloseDate: fc.oneof(junkDateTime, fc.constantFrom("2026-02-30", "2026-13-01", "0000-01-01", "2026-1-1")),
  },
  outcome(fx, body, answer) {
    expect(answer.status, answer.text).toBe(200);
    expectNew(fx.leads, answer.body.id, "lead");
    fx.leads.add(answer.body.id);
    expectEchoed(LEAD_TEXT, body, answer);
    for (const field of ["leadSource", "accountType", "rating"]) expect(answer.body[field]).toBe(body[field] ?? null);
  },
};

export const createContact: PostOp = {
  name: "POST /api/v1/contacts",
  path: "/api/v1/contacts",
  tool: "create_contact",
  spec: {
    fields: {
      firstName: text(200),
      lastName: text(200),
      email: { type: "email" },
      ...PHONES,
      accountId: { type: "accountId" },
      ...ADDRESS,
    },
    oneOf: REACHABLE,
  },
  valid: fc.record(
    {
      firstName: nonBlank(200),
      lastName: nullable(validText(200)),
      email: nullable(validEmail),
      mobilePhone: validText(40),
      businessPhone: validText(40),
      accountId: nullable(fc.constantFrom(new Sym("ownAccountId", 0), new Sym("ownAccountId", 1))),
      ...validAddress,
    },
    { requiredKeys: ["firstName"] },
  ),
  junk: {
    accountId: fc.oneof(
      fc.constantFrom(new Sym("foreignAccountId"), new Sym("foreignContactId"), new Sym("ownAccountName")),
      junkString,
    ),
    email: junkString,
    firstName: fc.constantFrom("", "   ", null),
  },
  outcome(fx, body, answer) {
    const wanted = isAbsent(body.accountId) ? null : String(body.accountId).trim();
    if (wanted !== null && !fx.accounts.some((account) => account.id === wanted)) {
      // Contract 4.2: an accountId that is not an account of this org.
      expect(answer.status, answer.text).toBe(422);
      expect(answer.body.errors).toEqual([
        { path: "accountId", code: "account_not_found", message: expect.any(String) },
      ]);
      return;
    }
    expect(answer.status, answer.text).toBe(200);
    expectNew(fx.contacts, answer.body.id, "ct");
    expect(answer.body.accountId).toBe(wanted);
    expectEchoed(
      ["firstName", "lastName", "email", "mobilePhone", "businessPhone", ...Object.keys(ADDRESS)],
      body,
      answer,
    );
    fx.contacts.set(answer.body.id, { email: answer.body.email, accountId: wanted });
  },
};

const REASONS = ["in_the_past", "beyond_horizon", "closed", "not_a_slot_start", "too_soon", "fully_booked"];
const dateTimeJunk = fc.oneof(junkDateTime, slot, fc.integer(), fc.constantFrom("", "   "));

export const createIncident: PostOp = {
  name: "POST /api/v1/ai-agent/create-incident",
  path: "/api/v1/ai-agent/create-incident",
  tool: "create_incident",
  spec: {
    fields: {
      dateTime: { type: "dateTime" },
      clientName: { type: "text", max: 200, required: true },
      insectName: { type: "text", max: 200, required: true },
    },
  },
  valid: fc.record({
    dateTime: fc.oneof({ arbitrary: slot, weight: 4 }, { arbitrary: validDateTime, weight: 1 }),
    clientName: fc.oneof(
      nonBlank(200),
      fc.constantFrom(
        new Sym("ownAccountName", 0),
        new Sym("ownAccountName", 1),
        new Sym("ownAccountName", 2),
        new Sym("foreignAccountName"),
      ),
    ),
    insectName: nonBlank(200),
  }),
  junk: { dateTime: dateTimeJunk, clientName: fc.constantFrom("", " ", null, new Sym("foreignAccountId")) },
  outcome(fx, body, answer) {
    if (answer.status === 409) {
      expect(answer.body).toMatchObject({
        code: "slot_unavailable",
        reason: expect.any(String),
        alternatives: expect.any(Array),
      });
      expect(REASONS).toContain(answer.body.reason);
      return;
    }
    expect(answer.status, answer.text).toBe(200);
    expectNew(fx.incidents, answer.body.id, "inc");
    fx.incidents.add(answer.body.id);
    expect(answer.body.appointment.start).toBe(answer.body.dateTime);
    // Linked to this org's account of that name (case-insensitive, trimmed) when exactly one exists; never another org's.
    const name = String(body.clientName).trim().toLowerCase();
    const matches = fx.accounts.filter((account) => account.name.toLowerCase() === name);
    expect(answer.body.accountId).toBe(matches.length === 1 ? matches[0]!.id : null);
    expectEchoed(["clientName", "insectName"], body, answer);
  },
};

export const findAppointments: PostOp = {
  name: "POST /api/v1/ai-agent/available-appointments",
  path: "/api/v1/ai-agent/available-appointments",
  tool: "find_available_appointments",
  spec: { fields: { dateTime: { type: "dateTime" }, limit: { type: "limit" } } },
  valid: fc.record(
    { dateTime: fc.oneof(slot, validDateTime), limit: nullable(fc.integer({ min: 1, max: 100 })) },
    { requiredKeys: ["dateTime"] },
  ),
  junk: { dateTime: dateTimeJunk, limit: fc.oneof(junkNumber, fc.constantFrom("10", 1.5, 0, -1, 1e9, 100, 101, "")) },
  outcome(_fx, body, answer) {
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.timeZone).toBe("UTC");
    const starts = (answer.body.slots as { start: string }[]).map((s) => Date.parse(s.start));
    expect(starts.length).toBeLessThanOrEqual((body.limit as number | null | undefined) ?? 10);
    expect([...starts].sort((x, y) => x - y)).toEqual(starts);
  },
};

export const checkBooking: PostOp = {
  name: "POST /api/v1/ai-agent/is-booking-available",
  path: "/api/v1/ai-agent/is-booking-available",
  tool: "check_booking_availability",
  spec: { fields: { dateTime: { type: "dateTime" } } },
  valid: fc.record({ dateTime: fc.oneof(slot, validDateTime) }),
  junk: { dateTime: dateTimeJunk },
  outcome(_fx, _body, answer) {
    expect(answer.status, answer.text).toBe(200);
    expect(typeof answer.body.available).toBe("boolean");
    expect(answer.body.reason === null).toBe(answer.body.available);
    expect(answer.body.alternatives.length).toBeLessThanOrEqual(3);
  },
};

export const POST_OPS = [createLead, createContact, createIncident, findAppointments, checkBooking];

/** A generated POST: a JSON object (fields may be symbols), or raw bytes; a media type; maybe an Idempotency-Key. */
export interface PostCase {
  body?: Record<string, unknown>;
  raw?: string | number[];
  contentType: string | null;
  idempotencyKey?: string;
}

/** Media types and whether they are JSON (contract 3: anything else is 415). */
export const CONTENT_TYPES: [string | null, boolean][] = [
  ["application/json", true],
  ["application/json; charset=utf-8", true],
  ["APPLICATION/JSON", true],
  ["application/merge-patch+json", true],
  ["application/vnd.api+json;v=1", true],
  ["text/plain", false],
  [null, false],
  ["", false],
  ["application/x-www-form-urlencoded", false],
  ["multipart/form-data; boundary=x", false],
  ["application/jsonx", false],
  ["json", false],
  ["application/xml", false],
];
const isJson = (contentType: string | null) => CONTENT_TYPES.find(([type]) => type === contentType)?.[1] ?? false;

const RAW_BODIES: (string | number[])[] = [
  "",
  "null",
  "[]",
  "[{}]",
  "1",
  '"x"',
  "true",
  "{",
  "{}}",
  "{'a':1}",
  '{"a":1,}',
  "\uFEFF{}",
  '{"a":1}garbage',
  "NaN",
  '{"x":NaN}',
  '{"firstName":"\\ud800"}',
  '{"firstName":"a\\u0000b"}',
  " {} ",
  "{}\u0000",
  '{"estimatedValue":1e999}',
  '{"rating":1e999}',
  '{"limit":-1e999}',
  `{"firstName":"a","firstName":{}}`,
  "[".repeat(3000),
  `{"a":${"[".repeat(3000)}${"]".repeat(3000)}}`,
  `{"__proto__":{"orgId":"org_x"}}`,
  [0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d],
  [0xef, 0xbb, 0xbf, 0x7b, 0x7d],
  [0xfe, 0xff, 0x00, 0x7b, 0x00, 0x7d],
  [0x7b, 0x22, 0xc0, 0x80, 0x22, 0x3a, 0x31, 0x7d],
  [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d],
];

const IDEMPOTENCY_KEYS = fc.constantFrom(
  "k-1",
  "k-2",
  "k-3",
  "k-1",
  "",
  "x".repeat(256),
  "é",
  "tab\there",
  " padded ",
  "~!@#$%^&*()",
);

/** JSON object bodies for `op`: valid, valid with one field mutated, valid plus an unknown field, or all junk. */
export function objectCases(op: PostOp): fc.Arbitrary<Record<string, unknown>> {
  const fields = Object.keys(op.spec.fields);
  const fieldValue = (field: string) => (op.junk[field] ? fc.oneof(junkValue, op.junk[field]!) : junkValue);
  const mutated = fc
    .tuple(op.valid, fc.constantFrom(...fields))
    .chain(([body, field]) => fieldValue(field).map((value) => ({ ...body, [field]: value })));
  const withUnknown = fc
    .tuple(
      op.valid,
      fc.oneof(
        fc.constantFrom(
          ...UNKNOWN_KEYS,
          ...fields.map((f) => f.toLowerCase()),
          ...fields.map((f) => f.toUpperCase()),
          // snake_case and kebab-case spellings, as LLM agents send them
          ...fields.map((f) => f.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)),
          ...fields.map((f) => f.replace(/[A-Z]/g, (c) => `-${c}`)),
        ),
        fc.string({ maxLength: 6 }),
      ),
      junkValue,
    )
    .filter(([, key]) => !fields.includes(key))
    .map(([body, key, value]) => ({ ...body, [key]: value }));
  const junkObject = fc.dictionary(fc.oneof(fc.constantFrom(...fields), fc.constantFrom(...UNKNOWN_KEYS)), junkValue, {
    maxKeys: 6,
  });
  return fc.oneof(
    { arbitrary: op.valid, weight: 3 },
    { arbitrary: mutated, weight: 5 },
    { arbitrary: withUnknown, weight: 2 },
    { arbitrary: junkObject, weight: 3 },
  );
}

/** No Idempotency-Key (mostly), or one of a few valid keys (so that they collide), or an invalid one. */
export const idempotencyKeys = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 4 },
  { arbitrary: IDEMPOTENCY_KEYS, weight: 1 },
);

export function postCases(op: PostOp): fc.Arbitrary<PostCase> {
  const jsonType = fc.oneof(
    { arbitrary: fc.constant("application/json"), weight: 8 },
    { arbitrary: fc.constantFrom(...CONTENT_TYPES.filter(([, ok]) => ok).map(([t]) => t)), weight: 1 },
  );
  return fc.oneof(
    {
      arbitrary: fc.record({ body: objectCases(op), contentType: jsonType, idempotencyKey: idempotencyKeys }),
      weight: 12,
    },
    {
      arbitrary: fc.record({
        raw: fc.constantFrom(...RAW_BODIES),
        contentType: jsonType,
        idempotencyKey: idempotencyKeys,
      }),
      weight: 1,
    },
    {
      arbitrary: fc.record({
        body: op.valid,
        contentType: fc.constantFrom(...CONTENT_TYPES.filter(([, ok]) => !ok).map(([t]) => t)),
      }),
      weight: 1,
    },
  ) as fc.Arbitrary<PostCase>;
}

/** A case made concrete for one fixture: the exact bytes to send. */
export interface PostRequest {
  bytes: Uint8Array;
  contentType: string | null;
  idempotencyKey?: string;
}

export function postRequest(c: PostCase, fx: Fixture, foreign: Foreign, now: number): PostRequest {
  const text = c.body
    ? JSON.stringify(resolveObject(c.body, fx, foreign, now))
    : typeof c.raw === "string"
      ? c.raw
      : undefined;
  const bytes = text === undefined ? new Uint8Array(c.raw as number[]) : new TextEncoder().encode(text);
  return {
    bytes,
    contentType: c.contentType,
    ...(c.idempotencyKey === undefined ? {} : { idempotencyKey: c.idempotencyKey }),
  };
}

/** The Idempotency-Key as the server reads it (fetch strips surrounding whitespace). */
export const sentKey = (key: string | undefined) => (key === undefined ? undefined : new Headers({ k: key }).get("k")!);

/** What contract section 3 says comes before validation: 415, 413, 400 — or the parsed object. */
export function precondition(req: PostRequest): { status: number; code: string } | { parsed: Record<string, unknown> } {
  if (!isJson(req.contentType)) return { status: 415, code: "unsupported_media_type" };
  if (req.bytes.length > 64 * 1024) return { status: 413, code: "payload_too_large" };
  try {
    const parsed: unknown = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(req.bytes));
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))
      return { parsed: parsed as Record<string, unknown> };
  } catch {
    // not JSON text
  }
  return { status: 400, code: "malformed_json" };
}

/** A 422 validation failure naming every entry of `must` and nothing outside `may`; unknown fields get their did-you-mean hint. */
export function expectValidationFailed(answer: Answer, must: Named[], may: Set<string>, known: string[] = []) {
  expect(answer.status, answer.text).toBe(422);
  expect(answer.body.code).toBe("validation_failed");
  const errors = answer.body.errors as { path: string; code: string; message: string }[];
  for (const entry of must) {
    const found = errors.find((e) => e.path === entry.path && (entry.code === undefined || e.code === entry.code));
    expect(found, `${answer.text} must name ${JSON.stringify(entry)}`).toBeDefined();
    // Contract 3: a hint when a known field matches ignoring case, "_" and "-"; none otherwise.
    const squash = (name: string) => name.toLowerCase().split(/[_-]/).join("");
    const hint = known.find((field) => squash(field) === squash(entry.path));
    if (entry.code === "unknown_field")
      expect(found!.message).toBe(hint ? `unknown field; did you mean '${hint}'?` : "unknown field");
  }
  expectNamesWithin(answer, may);
}

function expectNamesWithin(answer: Answer, may: Set<string>) {
  for (const error of answer.body.errors as { path: string }[]) {
    expect(
      may.has(error.path) || may.has(error.path.split(".")[0]!),
      `${answer.text} names ${error.path}, not among ${JSON.stringify([...may])}`,
    ).toBe(true);
  }
}

/**
 * Checks the answer to a parsed JSON object body, in the contract's order:
 * field validation, then the Idempotency-Key (format, reuse, replay), then the
 * operation's own outcome. Records stored outcomes in the fixture.
 */
export function checkParsed(
  op: PostOp,
  fx: Fixture,
  parsed: Record<string, unknown>,
  identity: string,
  key: string | undefined,
  answer: Answer,
) {
  const { verdict, must, may } = bodyVerdict(op.spec, parsed);
  const fields = Object.keys(op.spec.fields);
  if (verdict === "invalid") return expectValidationFailed(answer, must, may, fields);
  const keyInvalid = key !== undefined && !isValidIdempotencyKey(key);
  if (verdict === "unknown" && answer.status === 422 && answer.body.code === "validation_failed") {
    const allowed = new Set([
      ...may,
      ...(keyInvalid ? ["Idempotency-Key"] : []),
      ...(op === createContact ? ["accountId"] : []),
    ]);
    return expectValidationFailed(answer, [], allowed);
  }
  if (key !== undefined) {
    if (keyInvalid) {
      expect(answer.status, answer.text).toBe(422);
      expect(answer.body.errors).toEqual([
        { path: "Idempotency-Key", code: "invalid_format", message: expect.any(String) },
      ]);
      return;
    }
    const prior = fx.keys.get(key);
    if (prior?.request === identity) {
      expect([answer.status, answer.text]).toEqual([prior.status, prior.text]);
      return;
    }
    if (prior) {
      expect(answer.status, answer.text).toBe(422);
      expect(answer.body.code).toBe("idempotency_key_reused");
      return;
    }
  }
  op.outcome(fx, parsed, answer);
  const isOutcome = (answer.status >= 200 && answer.status < 300) || answer.body?.code === "slot_unavailable";
  if (key !== undefined && isOutcome) fx.keys.set(key, { request: identity, status: answer.status, text: answer.text });
}

/** Whether this answer is the replay of a stored outcome (it then carries its first request's id). */
export const isReplay = (fx: Fixture, identity: string, key: string | undefined) =>
  key !== undefined && fx.keys.get(key)?.request === identity;
