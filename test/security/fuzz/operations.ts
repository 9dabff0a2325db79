// The POST operations as the fuzz sees them: their fields (for the oracle),
// generators of valid bodies and of hostile values per field (and of the
// incident ids in the paths of cancel and reschedule), what a valid body must
// answer, and the check of any answer against the oracle.
import fc from "fast-check";
import { expect } from "vitest";
import { DAY, HOUR, iso, MINUTE } from "../../support/time";
import {
  type Answer,
  type Fixture,
  type Foreign,
  type IncidentView,
  liveHolds,
  recordContact,
  recordIncident,
  recordPlan,
  resolveObject,
  utcAppointment,
} from "./harness";
import {
  type BodySpec,
  type BodyVerdict,
  bodyVerdict,
  e164,
  type FieldKind,
  instantOf,
  isAbsent,
  isValidIdempotencyKey,
  limitOf,
  type Named,
  noQueryVerdict,
} from "./oracle";
import {
  astralAt,
  astralOver,
  edgeDateTime,
  junkDateTime,
  junkNumber,
  junkPhone,
  junkString,
  junkValue,
  Sym,
  slot,
  UNKNOWN_KEYS,
  validDateTime,
  validEdgeDateTime,
  validEmail,
  validPhone,
  validText,
} from "./values";

/** What a check knows besides the body: the incident id its path named (as sent), and the clock around the request. */
export interface Sent {
  id?: string;
  /** Date.now() just before the request and just after its answer: the server's `now` lies between. */
  before: number;
  after: number;
}

/** How an incident id is sent: as is, or spoiled (docs/api.md, "Incidents": a malformed id is 404). */
export type Variant = "none" | "upper" | "space" | "suffix" | "truncate" | "prefix";

/** The id of an incident path: one of the org's (maybe spoiled), one booked just before, another org's, or junk. */
export interface IdCase {
  id: Sym | string;
  variant: Variant;
}

export interface PostOp {
  name: string;
  /** The path, `{id}` standing for the incident's id in the paths of cancel and reschedule. */
  path: string;
  tool: string;
  spec: BodySpec;
  valid: fc.Arbitrary<Record<string, unknown>>;
  /** Hostile values aimed at one field, besides the generic ones. */
  junk: Partial<Record<string, fc.Arbitrary<unknown>>>;
  /** The incident ids of a path with `{id}`. */
  ids?: fc.Arbitrary<IdCase>;
  /** Checks the answer to a body whose every field is valid, and records what it stored or changed. */
  outcome(fx: Fixture, body: Record<string, unknown>, answer: Answer, sent: Sent): void;
  /** Works on the org's holds: each request is followed by a read of them all (expectHoldsAsAnswered). */
  holds?: true;
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
const code = fc.oneof(fc.integer({ min: 0, max: 2147483647 }), fc.constantFrom(0, 2147483647));
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

/** The stored text of a valid string field: trimmed, and null when absent (docs/api.md, "Validation"). */
const stored = (value: unknown) => (typeof value === "string" && value.trim() !== "" ? value.trim() : null);

/** A valid estimatedCloseDate as the lead stores it: a plain date at 00:00 UTC, a date-time in UTC, null when absent. */
const closeDate = (value: unknown) => {
  if (isAbsent(value)) return null;
  const text = String(value).trim();
  return /^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00.000Z` : iso(instantOf(text));
};

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
      estimatedCloseDate: fc.oneof(
        validDateTime,
        validEdgeDateTime,
        fc.constantFrom("2026-12-15", "2028-02-29", "0001-01-01", "9999-12-31", ""),
      ),
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
    estimatedCloseDate: fc.oneof(
      junkDateTime,
      edgeDateTime,
      fc.constantFrom("2026-02-30", "2026-13-01", "0000-01-01", "0000-12-31", "2026-1-1"),
    ),
  },
  outcome(fx, body, answer) {
    expect(answer.status, answer.text).toBe(200);
    expectNew(fx.leads, answer.body.id, "lead");
    fx.leads.add(answer.body.id);
    expectEchoed(LEAD_TEXT, body, answer);
    for (const field of ["leadSource", "accountType", "rating"]) expect(answer.body[field]).toBe(body[field] ?? null);
    expect(answer.body.estimatedCloseDate).toBe(closeDate(body.estimatedCloseDate));
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
      // docs/api.md, "Contacts": an accountId that is not an account of this org.
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
    recordContact(fx, answer.body);
  },
};

const REASONS = ["in_the_past", "beyond_horizon", "closed", "not_a_slot_start", "too_soon", "fully_booked"];
const dateTimeJunk = fc.oneof(junkDateTime, edgeDateTime, slot, fc.integer(), fc.constantFrom("", "   "));
const INCIDENT_KEYS = [
  "id",
  "status",
  "dateTime",
  "clientName",
  "insectName",
  "accountId",
  "phone",
  "notes",
  "serviceId",
  "technicianId",
  "postalCode",
  "appointment",
  "arrivalWindow",
  "createdAt",
  "updatedAt",
  "cancelledAt",
  "cancelReason",
  "closedAt",
  "outcomeNote",
  "planId",
];

/** Phones an agent passes on: the org's own (any spelling), another org's, other valid numbers. */
const phoneValue = fc.oneof(
  { arbitrary: fc.nat().map((n) => new Sym("ownPhone", n)), weight: 3 },
  { arbitrary: fc.nat().map((n) => new Sym("foreignPhone", n)), weight: 1 },
  { arbitrary: validPhone, weight: 2 },
);
const phoneJunk = fc.oneof(junkPhone, junkString);

export const createIncident: PostOp = {
  name: "POST /api/v1/ai-agent/create-incident",
  path: "/api/v1/ai-agent/create-incident",
  tool: "create_incident",
  spec: {
    fields: {
      dateTime: { type: "dateTime" },
      clientName: { type: "text", max: 200, required: true },
      insectName: { type: "text", max: 200, required: true },
      phone: { type: "phone" },
      notes: text(2000),
    },
  },
  valid: fc.record(
    {
      dateTime: fc.oneof(
        { arbitrary: slot, weight: 10 },
        { arbitrary: validDateTime, weight: 2 },
        { arbitrary: validEdgeDateTime, weight: 1 },
      ),
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
      phone: nullable(phoneValue),
      notes: nullable(fc.oneof(validText(2000), fc.constantFrom("n".repeat(2000), ` ${"é".repeat(2000)} `))),
    },
    { requiredKeys: ["dateTime", "clientName", "insectName"] },
  ),
  junk: {
    dateTime: dateTimeJunk,
    clientName: fc.constantFrom("", " ", null, new Sym("foreignAccountId")),
    phone: phoneJunk,
    notes: fc.constantFrom("n".repeat(2001), ` ${"x".repeat(2001)} `, "a\u0000b", "\uD800"),
  },
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
    expect(answer.body.appointment.start).toBe(answer.body.dateTime);
    // Linked to this org's account of that name (case-insensitive, trimmed) when exactly one exists; never another org's.
    const name = String(body.clientName).trim().toLowerCase();
    const matches = fx.accounts.filter((account) => account.name.toLowerCase() === name);
    expect(answer.body.accountId).toBe(matches.length === 1 ? matches[0]!.id : null);
    expectEchoed(["clientName", "insectName", "notes"], body, answer);
    // docs/api.md, "Incidents": the incident object, the phone normalised, scheduled, never changed yet.
    expect(Object.keys(answer.body).sort()).toEqual([...INCIDENT_KEYS].sort());
    expect(answer.body.phone).toBe(isAbsent(body.phone) ? null : e164(String(body.phone)));
    expect(answer.body).toMatchObject({ status: "scheduled", cancelledAt: null, cancelReason: null });
    // The fuzzed orgs have no services or technicians, and no postalCode is sent.
    expect(answer.body).toMatchObject({ serviceId: null, technicianId: null, postalCode: null, arrivalWindow: null });
    expect(answer.body.updatedAt).toBe(answer.body.createdAt);
    recordIncident(fx, answer.body);
  },
};

/** A plan's cadence whose next visit is never within the 14 days decided at once: no booking beside the answer. */
const FAR_EVERY = fc.oneof(
  fc.record({ count: fc.integer({ min: 1, max: 12 }), unit: fc.constant("month") }),
  fc.record({ count: fc.integer({ min: 3, max: 12 }), unit: fc.constant("week") }),
);

export const createPlan: PostOp = {
  name: "POST /api/v1/ai-agent/create-plan",
  path: "/api/v1/ai-agent/create-plan",
  tool: "create_plan",
  spec: {
    fields: { ...createIncident.spec.fields, every: { type: "every" }, visits: { type: "visits" } },
  },
  valid: createIncident.valid.chain((booking) =>
    fc
      .record({ every: FAR_EVERY, visits: nullable(fc.integer({ min: 2, max: 52 })) }, { requiredKeys: ["every"] })
      .map((plan) => ({ ...booking, ...plan })),
  ),
  junk: {
    ...createIncident.junk,
    every: fc.constantFrom(
      null,
      {},
      { count: 0, unit: "week" },
      { count: 13, unit: "month" },
      { count: 1.5, unit: "week" },
      { count: 1, unit: "day" },
      { count: 1, unit: "Week" },
      { count: "1", unit: "week" },
      { count: 1, unit: "week", at: 3 },
      [1, "week"],
      "weekly",
    ),
    visits: fc.constantFrom(0, 1, 53, 2.5, "2", true),
  },
  outcome(fx, body, answer) {
    if (answer.status === 409) return createIncident.outcome(fx, body, answer, { before: 0, after: 0 });
    expect(answer.status, answer.text).toBe(200);
    expect(Object.keys(answer.body).sort()).toEqual(["incident", "plan"]);
    const { plan, incident } = answer.body as { plan: Record<string, unknown>; incident: Record<string, unknown> };
    expectNew(fx.plans, plan.id, "plan");
    createIncident.outcome(fx, body, { ...answer, body: incident }, { before: 0, after: 0 });
    const every = body.every as { count: number; unit: string };
    // docs/api.md, "Plans": the plan after its first visit, as booked.
    expect(plan).toMatchObject({
      status: "active",
      every,
      visits: (body.visits as number | null | undefined) ?? null,
      visitsMade: 1,
      phone: incident.phone,
      accountId: incident.accountId,
      clientName: incident.clientName,
      technicianId: null,
      firstVisitDate: String(incident.dateTime).slice(0, 10),
      localTime: String(incident.dateTime).slice(11, 16),
      createdAt: incident.createdAt,
      cancelledAt: null,
    });
    expect(incident.planId).toBe(plan.id);
    recordPlan(fx, plan);
  },
};

/** The plan ids of a path: the org's own (maybe spoiled), another org's, or junk. */
const planIds: fc.Arbitrary<IdCase> = fc.oneof(
  {
    arbitrary: fc.record({ id: fc.nat().map((n) => new Sym("ownPlanId", n)), variant: fc.constant<Variant>("none") }),
    weight: 8,
  },
  {
    arbitrary: fc.record({
      id: fc.nat().map((n) => new Sym("ownPlanId", n)),
      variant: fc.constantFrom<Variant>("upper", "space", "suffix", "truncate", "prefix"),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      id: fc.nat().map((n) => new Sym("foreignPlanId", n)),
      variant: fc.constant<Variant>("none"),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      id: fc.oneof(
        fc.constantFrom("plan_00000000000000000000000000", "plan_", "inc_x", "%2e"),
        junkString.filter((s) => !["", ".", ".."].includes(s)),
      ),
      variant: fc.constant<Variant>("none"),
    }),
    weight: 2,
  },
);

export const cancelPlan: PostOp = {
  name: "POST /api/v1/plans/{id}/cancel",
  path: "/api/v1/plans/{id}/cancel",
  tool: "cancel_plan",
  spec: { fields: { reason: text(500), cancelVisits: { type: "flag" } } },
  valid: fc.record({ reason: nullable(validText(500)), cancelVisits: nullable(fc.boolean()) }, { requiredKeys: [] }),
  junk: {
    reason: fc.constantFrom("r".repeat(501), "a\u0000b", 5, {}),
    cancelVisits: fc.constantFrom("true", 1, 0, "", {}),
  },
  ids: planIds,
  outcome(fx, body, answer, sent) {
    const seen = sent.id === undefined ? undefined : fx.plans.get(sent.id);
    if (!seen) {
      expect(answer.status, answer.text).toBe(404);
      return expect(answer.body.code).toBe("plan_not_found");
    }
    expect(answer.status, answer.text).toBe(200);
    // docs/api.md, "Plans": cancelling a cancelled plan is 200 unchanged.
    if (seen.status === "cancelled") return expect(answer.body).toEqual(seen);
    const reason = isAbsent(body.reason) ? null : String(body.reason).trim();
    expect(answer.body).toEqual({
      ...seen,
      status: "cancelled",
      nextDueDate: null,
      cancelReason: reason,
      cancelledAt: expect.any(String),
      updatedAt: answer.body.cancelledAt,
    });
    expectTimeOfRequest(answer.body.cancelledAt, sent, seen.updatedAt);
    recordPlan(fx, answer.body);
    // Its visits not started are cancelled with it, at the same instant (unless cancelVisits is false).
    if (body.cancelVisits === false) return;
    for (const incident of fx.incidents.values())
      if (incident.planId === seen.id && incident.status === "scheduled" && Date.parse(incident.dateTime) > sent.after)
        recordIncident(fx, {
          ...incident,
          status: "cancelled",
          cancelReason: reason,
          cancelledAt: answer.body.cancelledAt,
          updatedAt: answer.body.cancelledAt,
        });
  },
};

export const findAppointments: PostOp = {
  name: "POST /api/v1/ai-agent/available-appointments",
  path: "/api/v1/ai-agent/available-appointments",
  tool: "find_available_appointments",
  spec: { fields: { dateTime: { type: "dateTime" }, limit: { type: "limit" } } },
  valid: fc.record(
    {
      dateTime: fc.oneof(slot, validDateTime, validEdgeDateTime),
      limit: nullable(fc.oneof(fc.integer({ min: 1, max: 100 }), fc.constantFrom(1, 100))),
    },
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
  valid: fc.record({ dateTime: fc.oneof(slot, validDateTime, validEdgeDateTime) }),
  junk: { dateTime: dateTimeJunk },
  outcome(_fx, _body, answer) {
    expect(answer.status, answer.text).toBe(200);
    expect(typeof answer.body.available).toBe("boolean");
    expect(answer.body.reason === null).toBe(answer.body.available);
    expect(answer.body.alternatives.length).toBeLessThanOrEqual(3);
  },
};

/** Runs each check; passes when one of them does, else fails with the first one's failure. */
function expectOneOf(checks: (() => void)[]) {
  const failures: unknown[] = [];
  for (const check of checks) {
    try {
      check();
      return;
    } catch (failure) {
      failures.push(failure);
    }
  }
  throw failures[0];
}

/** The answers a check accepts, at each end of the request's clock (they differ only when a boundary passed meanwhile). */
const atBothEnds = <T>(sent: Sent, expected: (now: number) => T): T[] => {
  const [first, last] = [expected(sent.before), expected(sent.after)];
  return JSON.stringify(first) === JSON.stringify(last) ? [first] : [first, last];
};

const expectNotFound = (answer: Answer) => {
  expect(answer.status, answer.text).toBe(404);
  expect(answer.body.code).toBe("incident_not_found");
};

const expectNotChangeable = (answer: Answer, reason: string) => {
  expect(answer.status, answer.text).toBe(409);
  expect(answer.body).toMatchObject({ code: "incident_not_changeable", reason });
};

/** A 200 whose updatedAt (and other times) are the request's: later than what it replaces, within the request. */
const expectTimeOfRequest = (value: unknown, sent: Sent, previous?: string) => {
  const t = Date.parse(value as string);
  expect(t, `${value} is not the time of the request`).toBeGreaterThanOrEqual(sent.before);
  expect(t, `${value} is not the time of the request`).toBeLessThanOrEqual(sent.after);
  if (previous) expect(t).toBeGreaterThanOrEqual(Date.parse(previous));
};

const APPOINTMENT = fc.oneof(
  // The seven seeded incidents (two of them started, one cancelled), then any incident of the org.
  { arbitrary: fc.nat(6).map((n) => new Sym("ownIncidentId", n)), weight: 4 },
  { arbitrary: fc.nat().map((n) => new Sym("ownIncidentId", n)), weight: 2 },
  { arbitrary: fc.constant(new Sym("freshIncidentId")), weight: 3 },
);

/** The incident ids of a path: mostly the org's own, some spoiled, another org's, well-formed unknown ones, junk. */
export const incidentIds: fc.Arbitrary<IdCase> = fc.oneof(
  { arbitrary: fc.record({ id: APPOINTMENT, variant: fc.constant<Variant>("none") }), weight: 10 },
  {
    arbitrary: fc.record({
      id: fc.nat().map((n) => new Sym("ownIncidentId", n)),
      variant: fc.constantFrom<Variant>("upper", "space", "suffix", "truncate", "prefix"),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      id: fc.nat().map((n) => new Sym("foreignIncidentId", n)),
      variant: fc.constant<Variant>("none"),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      // A path segment that is "", "." or ".." names no incident: the URL is another path (routing, not this operation).
      id: fc.oneof(
        fc.constantFrom("inc_00000000000000000000000000", "inc_", "acct_x", "%2e", "a/b", "?x=1", "#x"),
        junkString.filter((s) => !["", ".", ".."].includes(s)),
      ),
      variant: fc.constant<Variant>("none"),
    }),
    weight: 2,
  },
);

/** The places of the hour at `target` taken at `now`: scheduled incidents but `id`, and live holds (docs/api.md, "Holding a slot": a hold occupies its place exactly as a booking does). */
function taken(fx: Fixture, id: string | undefined, target: number, now: number): number {
  const incidents = [...fx.incidents.values()].filter((other) => {
    const start = Date.parse(other.dateTime);
    return other.id !== id && other.status !== "cancelled" && start < target + HOUR && start + HOUR > target;
  });
  const holds = liveHolds(fx, now).filter((hold) => hold.start < target + HOUR && hold.end > target);
  return incidents.length + holds.length;
}

/** Why a reschedule of `id` (or a hold) to `target` cannot book it (Check's reasons, in its order), or null: the org's schedule is open around the clock, capacity 2, no notice, 30 days ahead. */
function slotReason(fx: Fixture, id: string | undefined, target: number, now: number): string | null {
  if (target < now) return "in_the_past";
  if (target >= now + 30 * DAY) return "beyond_horizon";
  if (target % HOUR !== 0) return "not_a_slot_start";
  return taken(fx, id, target, now) >= 2 ? "fully_booked" : null;
}

export const findCaller: PostOp = {
  name: "POST /api/v1/ai-agent/find-caller",
  path: "/api/v1/ai-agent/find-caller",
  tool: "find_caller",
  spec: { fields: { phone: { type: "phone", required: true } } },
  valid: fc.record({ phone: phoneValue }),
  junk: { phone: fc.oneof(phoneJunk, fc.constantFrom(null, "", "  ")) },
  outcome(fx, body, answer, sent) {
    expect(answer.status, answer.text).toBe(200);
    const phone = e164(String(body.phone))!;
    expect(Object.keys(answer.body).sort()).toEqual(["accounts", "contacts", "phone", "plans", "upcomingIncidents"]);
    expect(answer.body.phone).toBe(phone);
    // docs/api.md, "Find a caller": contacts with the phone, newest first, at most 10.
    const newestFirst = (a: { at: number; id: string }, b: { at: number; id: string }) =>
      b.at - a.at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
    const contacts = [...fx.contacts]
      .filter(([, contact]) => contact.phones.includes(phone))
      .map(([id, contact]) => ({ id, at: contact.createdAt, accountId: contact.accountId }));
    expect(answer.body.contacts.map((c: { id: string }) => c.id)).toEqual(
      [...contacts]
        .sort(newestFirst)
        .slice(0, 10)
        .map((c) => c.id),
    );
    // Accounts with the phone, and those of the matched contacts: newest first, at most 10, no duplicates.
    const accountIds = new Set([
      ...fx.accounts.filter((account) => account.phones.includes(phone)).map((account) => account.id),
      ...contacts.flatMap((contact) => (contact.accountId ? [contact.accountId] : [])),
    ]);
    const accounts = fx.accounts
      .filter((account) => accountIds.has(account.id))
      .map((account) => ({ id: account.id, at: account.createdAt }))
      .sort(newestFirst)
      .slice(0, 10);
    expect(answer.body.accounts.map((a: { id: string }) => a.id)).toEqual(accounts.map((a) => a.id));
    // Scheduled incidents not ended, with the phone or of a matched account: soonest first, at most 10, as GET shows them.
    const upcoming = (now: number) =>
      [...fx.incidents.values()]
        .filter(
          (incident) =>
            incident.status === "scheduled" &&
            Date.parse(incident.appointment.end) > now &&
            (incident.phone === phone || (incident.accountId !== null && accountIds.has(incident.accountId))),
        )
        .sort((a, b) => Date.parse(a.dateTime) - Date.parse(b.dateTime) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .slice(0, 10);
    expectOneOf(
      atBothEnds(sent, upcoming).map((incidents) => () => expect(answer.body.upcomingIncidents).toEqual(incidents)),
    );
    // docs/api.md, "Plans": the active plans with the phone or of a matched account, newest first, at most 10.
    const plans = [...fx.plans.values()]
      .filter(
        (plan) =>
          plan.status === "active" &&
          (plan.phone === phone || (plan.accountId !== null && accountIds.has(plan.accountId))),
      )
      .sort((a, b) => newestFirst({ at: Date.parse(a.createdAt), id: a.id }, { at: Date.parse(b.createdAt), id: b.id }))
      .slice(0, 10);
    expect(answer.body.plans).toEqual(plans);
  },
};

export const cancelIncident: PostOp = {
  name: "POST /api/v1/incidents/{id}/cancel",
  path: "/api/v1/incidents/{id}/cancel",
  tool: "cancel_incident",
  spec: { fields: { reason: text(500) } },
  valid: fc.record({ reason: nullable(validText(500)) }, { requiredKeys: [] }),
  junk: { reason: fc.constantFrom("r".repeat(501), ` ${"é".repeat(501)}`, "a\u0000b", "\uDFFF", 5, true, {}) },
  ids: incidentIds,
  outcome(fx, body, answer, sent) {
    const seen = sent.id === undefined ? undefined : fx.incidents.get(sent.id);
    if (!seen) return expectNotFound(answer);
    // docs/api.md, "Cancel": a cancelled incident is 200 unchanged (agents retry); a started one 409 in_the_past.
    if (seen.status === "cancelled") {
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body).toEqual(seen);
      return;
    }
    // docs/api.md, "Close": a closed visit cannot be cancelled.
    if (seen.status === "completed" || seen.status === "no_show") return expectNotChangeable(answer, "closed");
    const started = (now: number) => Date.parse(seen.dateTime) <= now;
    expectOneOf(
      atBothEnds(sent, started).map((past) =>
        past
          ? () => expectNotChangeable(answer, "in_the_past")
          : () => {
              expect(answer.status, answer.text).toBe(200);
              expect(answer.body).toEqual({
                ...seen,
                status: "cancelled",
                cancelReason: isAbsent(body.reason) ? null : String(body.reason).trim(),
                cancelledAt: expect.any(String),
                updatedAt: expect.any(String),
              });
              expectTimeOfRequest(answer.body.cancelledAt, sent);
              expectTimeOfRequest(answer.body.updatedAt, sent, seen.updatedAt);
            },
      ),
    );
    if (answer.status === 200) recordIncident(fx, answer.body);
  },
};

export const closeIncident: PostOp = {
  name: "POST /api/v1/incidents/{id}/close",
  path: "/api/v1/incidents/{id}/close",
  tool: "close_incident",
  spec: { fields: { outcome: { type: "choice", values: ["completed", "no_show"], required: true }, note: text(2000) } },
  valid: fc.record(
    { outcome: fc.constantFrom("completed", "no_show"), note: nullable(validText(2000)) },
    { requiredKeys: ["outcome"] },
  ),
  junk: {
    outcome: fc.constantFrom("done", "COMPLETED", "", " ", 1, true, {}, ["completed"]),
    note: fc.constantFrom("n".repeat(2001), "a\u0000b", "\uDFFF", 5, true, {}),
  },
  ids: incidentIds,
  outcome(fx, body, answer, sent) {
    const seen = sent.id === undefined ? undefined : fx.incidents.get(sent.id);
    if (!seen) return expectNotFound(answer);
    // docs/api.md, "Close": cancelled, then not started, then closed with another outcome; the same one is 200 unchanged.
    if (seen.status === "cancelled") return expectNotChangeable(answer, "cancelled");
    if (seen.status === body.outcome) {
      expect(answer.status, answer.text).toBe(200);
      return expect(answer.body).toEqual(seen);
    }
    if (seen.status !== "scheduled") return expectNotChangeable(answer, "closed");
    const started = (now: number) => Date.parse(seen.dateTime) <= now;
    expectOneOf(
      atBothEnds(sent, started).map((past) =>
        past
          ? () => {
              expect(answer.status, answer.text).toBe(200);
              expect(answer.body).toEqual({
                ...seen,
                status: body.outcome,
                outcomeNote: isAbsent(body.note) ? null : String(body.note).trim(),
                closedAt: expect.any(String),
                updatedAt: expect.any(String),
              });
              expectTimeOfRequest(answer.body.closedAt, sent);
              expect(answer.body.updatedAt).toBe(answer.body.closedAt);
            }
          : () => expectNotChangeable(answer, "not_started"),
      ),
    );
    if (answer.status === 200) recordIncident(fx, answer.body);
  },
};

type RescheduleExpected =
  | { answer: "not_changeable"; reason: string }
  | { answer: "slot_unavailable"; reason: string }
  | { answer: "unchanged" }
  | { answer: "moved" };

export const rescheduleIncident: PostOp = {
  name: "POST /api/v1/incidents/{id}/reschedule",
  path: "/api/v1/incidents/{id}/reschedule",
  tool: "reschedule_incident",
  spec: { fields: { dateTime: { type: "dateTime" } } },
  valid: fc.record({
    dateTime: fc.oneof(
      { arbitrary: slot, weight: 5 },
      { arbitrary: fc.nat().map((n) => new Sym("heldSlot", n)), weight: 2 },
      { arbitrary: fc.constant(new Sym("fullSlot")), weight: 1 },
      { arbitrary: validDateTime, weight: 1 },
      { arbitrary: validEdgeDateTime, weight: 1 },
    ),
  }),
  junk: { dateTime: dateTimeJunk },
  ids: incidentIds,
  outcome(fx, body, answer, sent) {
    const seen = sent.id === undefined ? undefined : fx.incidents.get(sent.id);
    if (!seen) return expectNotFound(answer);
    const target = instantOf(String(body.dateTime));
    const start = Date.parse(seen.dateTime);
    // docs/api.md, "Reschedule", then 5.4's reasons for the new slot, the incident's own booking not counted.
    const expected = (now: number): RescheduleExpected => {
      if (seen.status === "cancelled") return { answer: "not_changeable", reason: "cancelled" };
      if (seen.status === "completed" || seen.status === "no_show")
        return { answer: "not_changeable", reason: "closed" };
      if (start <= now) return { answer: "not_changeable", reason: "in_the_past" };
      if (target === start) return { answer: "unchanged" };
      const reason = slotReason(fx, seen.id, target, now);
      return reason === null ? { answer: "moved" } : { answer: "slot_unavailable", reason };
    };
    expectOneOf(
      atBothEnds(sent, expected).map((outcome) => () => {
        switch (outcome.answer) {
          case "not_changeable":
            return expectNotChangeable(answer, outcome.reason);
          case "slot_unavailable": {
            expect(answer.status, answer.text).toBe(409);
            expect(answer.body).toMatchObject({ code: "slot_unavailable", reason: outcome.reason });
            const starts = (answer.body.alternatives as { start: string }[]).map((s) => Date.parse(s.start));
            expect(starts.length).toBeLessThanOrEqual(3);
            expect([...starts].sort((x, y) => x - y)).toEqual(starts);
            for (const s of starts) expect(s).toBeGreaterThan(target);
            return;
          }
          case "unchanged":
            expect(answer.status, answer.text).toBe(200);
            return expect(answer.body).toEqual(seen);
          case "moved":
            expect(answer.status, answer.text).toBe(200);
            expect(answer.body).toEqual({
              ...seen,
              dateTime: iso(target),
              appointment: utcAppointment(target),
              updatedAt: expect.any(String),
            });
            return expectTimeOfRequest(answer.body.updatedAt, sent, seen.updatedAt);
        }
      }),
    );
    if (answer.status === 200) recordIncident(fx, answer.body as IncidentView & Record<string, unknown>);
  },
};

const HOLD_KEYS = ["expiresAt", "holdId", "slot", "technicianId"];
const MINUTES = fc.oneof(fc.integer({ min: 1, max: 15 }), fc.constantFrom(1, 15));

type HoldExpected =
  | { answer: "limit" }
  | { answer: "slot_unavailable"; reason: string }
  | { answer: "held"; remaining: number };

export const holdSlot: PostOp = {
  name: "POST /api/v1/ai-agent/hold-slot",
  path: "/api/v1/ai-agent/hold-slot",
  tool: "hold_slot",
  spec: { fields: { dateTime: { type: "dateTime" }, insectName: text(200), holdMinutes: { type: "minutes" } } },
  valid: fc.record(
    {
      dateTime: fc.oneof(
        { arbitrary: slot, weight: 10 },
        { arbitrary: fc.nat().map((n) => new Sym("holdSlot", n)), weight: 2 },
        { arbitrary: fc.nat().map((n) => new Sym("heldSlot", n)), weight: 1 },
        { arbitrary: fc.constant(new Sym("fullSlot")), weight: 1 },
        { arbitrary: validDateTime, weight: 2 },
        { arbitrary: validEdgeDateTime, weight: 1 },
      ),
      // The fuzzed org's one service has no keyword: whatever the caller says, the default visit.
      insectName: nullable(validText(200)),
      holdMinutes: nullable(MINUTES),
    },
    { requiredKeys: ["dateTime"] },
  ),
  junk: {
    dateTime: dateTimeJunk,
    insectName: fc.constantFrom("i".repeat(201), ` ${"é".repeat(201)} `, "a\u0000b", "\uD800", 5, {}),
    holdMinutes: fc.oneof(junkNumber, fc.constantFrom("5", 0, 16, -1, 1.5, 15.5, 1e9, "", true)),
  },
  holds: true,
  outcome(fx, body, answer, sent) {
    const target = instantOf(String(body.dateTime));
    const minutes = (body.holdMinutes as number | null | undefined) ?? 5;
    // The org's holds before this one: a hold answered is recorded first, so that the checks below
    // failing leaves the fixture as D1 holds it (a shrunk case is then judged on the same holds).
    const others = new Map(fx.holds);
    const known = others.has(answer.body?.holdId);
    if (answer.status === 200 && typeof answer.body?.holdId === "string" && !known)
      fx.holds.set(answer.body.holdId, {
        start: target,
        end: target + HOUR,
        expiresAt: Date.parse(answer.body.expiresAt),
      });
    expect(known, `${answer.body?.holdId} was answered before`).toBe(false);
    const before = { ...fx, holds: others };
    // docs/api.md, "Holding a slot": the limit first, whatever the start; then the start's reason, as create-incident's.
    const expected = (now: number): HoldExpected => {
      if (liveHolds(before, now).length >= 100) return { answer: "limit" };
      const reason = slotReason(before, undefined, target, now);
      return reason === null
        ? { answer: "held", remaining: 2 - taken(before, undefined, target, now) - 1 }
        : { answer: "slot_unavailable", reason };
    };
    expectOneOf(
      atBothEnds(sent, expected).map((outcome) => () => {
        switch (outcome.answer) {
          case "limit":
            expect(answer.status, answer.text).toBe(409);
            return expect(answer.body.code, answer.text).toBe("hold_limit_reached");
          case "slot_unavailable": {
            expect(answer.status, answer.text).toBe(409);
            expect(answer.body).toMatchObject({ code: "slot_unavailable", reason: outcome.reason });
            const starts = (answer.body.alternatives as { start: string }[]).map((s) => Date.parse(s.start));
            expect(starts.length).toBeLessThanOrEqual(3);
            expect([...starts].sort((x, y) => x - y)).toEqual(starts);
            for (const s of starts) expect(s).toBeGreaterThan(target);
            return;
          }
          case "held":
            expect(answer.status, answer.text).toBe(200);
            expect(Object.keys(answer.body).sort()).toEqual(HOLD_KEYS);
            expect(answer.body).toEqual({
              holdId: expect.stringMatching(/^hold_[0-9a-z]{26}$/),
              expiresAt: expect.any(String),
              slot: { ...utcAppointment(target), remaining: outcome.remaining, serviceId: null, arrivalWindow: null },
              technicianId: null,
            });
            // Kept holdMinutes (default 5) from the request's clock.
            return expectTimeOfRequest(iso(Date.parse(answer.body.expiresAt) - minutes * MINUTE), sent);
        }
      }),
    );
  },
};

/** The hold ids of release-hold: mostly the org's own (all of them: live, lapsed, released), spoiled ones, another org's, unknown ones. */
const holdIds = fc.oneof(
  { arbitrary: fc.nat().map((n) => new Sym("ownHoldId", n)), weight: 10 },
  { arbitrary: fc.nat().map((n) => new Sym("spoiledHoldId", n)), weight: 3 },
  { arbitrary: fc.nat().map((n) => new Sym("foreignHoldId", n)), weight: 2 },
  {
    arbitrary: fc.constantFrom(
      "hold_00000000000000000000000000",
      "hold_",
      "inc_00000000000000000000000000",
      "h".repeat(64),
    ),
    weight: 1,
  },
);

/** The release's effect on the org's holds: the first release of a hold marks it released (a release of a released one changes nothing). */
function recordRelease(fx: Fixture, body: Record<string, unknown>, sent: Sent) {
  const hold = fx.holds.get(String(body.holdId).trim());
  if (hold) hold.released ??= { before: sent.before, after: sent.after };
}

export const releaseHold: PostOp = {
  name: "POST /api/v1/ai-agent/release-hold",
  path: "/api/v1/ai-agent/release-hold",
  tool: "release_hold",
  spec: { fields: { holdId: { type: "text", max: 64, required: true } } },
  valid: fc.record({ holdId: holdIds }),
  junk: { holdId: fc.oneof(junkString, fc.constantFrom(null, "", "  ", "h".repeat(65), 5, [])) },
  holds: true,
  outcome(fx, body, answer, sent) {
    const id = String(body.holdId).trim();
    if (!fx.holds.has(id)) {
      // docs/api.md, "Release": an unknown id (another org's, a spoiled one) is a 422 naming holdId.
      expect(answer.status, answer.text).toBe(422);
      expect(answer.body.errors).toEqual([{ path: "holdId", code: "not_found", message: expect.any(String) }]);
      return;
    }
    // Live, lapsed or released before: the same 200.
    expect([answer.status, answer.body], answer.text).toEqual([200, { holdId: id, released: true }]);
    recordRelease(fx, body, sent);
  },
};

export const POST_OPS = [
  createLead,
  createContact,
  createIncident,
  holdSlot,
  releaseHold,
  findAppointments,
  checkBooking,
  findCaller,
  cancelIncident,
  rescheduleIncident,
  closeIncident,
  createPlan,
  cancelPlan,
];

/** A generated POST: a JSON object (fields may be symbols), or raw bytes; a media type; maybe an Idempotency-Key. */
export interface PostCase {
  /** The incident id of the path, for an operation on one incident. */
  target?: IdCase;
  body?: Record<string, unknown>;
  raw?: string | number[];
  contentType: string | null;
  idempotencyKey?: string;
  /** The query string after the path ("" for none): the operation takes no parameter, so any is refused. */
  query?: string;
}

/** Query strings sent to a POST: mostly none, else parameters it does not take (some named after its body's fields). */
const postQueries = fc.oneof(
  { arbitrary: fc.constant(""), weight: 20 },
  {
    arbitrary: fc.constantFrom(
      "?",
      "?force=true",
      "?x=",
      "?x=%20",
      "?dateTime=2026-11-23T14:00:00Z",
      "?limit=1",
      "?reason=",
      "?orgId=org_x&force=1",
      "?a=1&a=2",
      "?__proto__=1",
    ),
    weight: 1,
  },
);

/** Media types and whether they are JSON (docs/api.md, "Validation": anything else is 415). */
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
  // A string field also gets strings at and just over its limit in UTF-16 code units (astral characters count 2).
  const fieldValue = (field: string) => {
    const max = limitOf(op.spec.fields[field]!);
    const own = op.junk[field] ? [op.junk[field]!] : [];
    return fc.oneof(junkValue, ...own, ...(max === undefined ? [] : [astralOver(max), astralAt(max)]));
  };
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
  const cases = fc.oneof(
    {
      arbitrary: fc.record({
        body: objectCases(op),
        contentType: jsonType,
        idempotencyKey: idempotencyKeys,
        query: postQueries,
      }),
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
  return op.ids ? fc.tuple(cases, op.ids).map(([c, target]) => ({ ...c, target })) : cases;
}

/** An id sent spoiled: upper case, with a space, a character more or less, prefixed again. */
export function spoil(id: string, variant: Variant): string {
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
      return `inc_${id}`;
  }
}

/** The path of `op` for the incident id `id` (percent-encoded as a client would), then the query string. */
export const pathOf = (op: PostOp, id: string | undefined, query = "") =>
  (id === undefined ? op.path : op.path.replace("{id}", encodeURIComponent(id.toWellFormed()))) + query;

/** A case made concrete for one fixture: the exact bytes to send. */
export interface PostRequest {
  bytes: Uint8Array;
  contentType: string | null;
  idempotencyKey?: string;
}

export function postRequest(c: PostCase, fx: Fixture, foreign: Foreign, now: number, target?: string): PostRequest {
  const text = c.body
    ? JSON.stringify(resolveObject(c.body, fx, foreign, now, target))
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

/** What docs/api.md ("Errors", "Validation") says comes before validation: 415, 413, 400 — or the parsed object. */
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
    // docs/api.md, "Validation": a hint when a known field matches ignoring case, "_" and "-"; none otherwise.
    const squash = (name: string) => name.toLowerCase().split(/[_-]/).join("");
    const hint = (entry.hintFrom ?? known).find((field) => squash(field) === squash(entry.path));
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

/** The 422 of a malformed Idempotency-Key, or of one used before for another request. */
function expectKeyRefused(answer: Answer, malformed: boolean) {
  expect(answer.status, answer.text).toBe(422);
  if (malformed)
    expect(answer.body.errors).toEqual([
      { path: "Idempotency-Key", code: "invalid_format", message: expect.any(String) },
    ]);
  else expect(answer.body.code).toBe("idempotency_key_reused");
}

/**
 * Checks the answer to a parsed JSON object body, in the documented order:
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
  sent: Sent,
  query: BodyVerdict = noQueryVerdict(""),
) {
  const { verdict, must, may } = bodyVerdict(op.spec, parsed);
  const fields = Object.keys(op.spec.fields);
  // Docs "Validation": the query is checked with the body, before the Idempotency-Key and the operation.
  if (query.verdict !== "valid") {
    const both = new Set([...may, ...query.may]);
    const queryRefused = () => expectValidationFailed(answer, query.must, query.may);
    // A known deviation (reported): beside an invalid body the server names the body's fields only.
    if (verdict === "invalid") return expectValidationFailed(answer, must, both, fields);
    if (verdict === "unknown") return expectOneOf([queryRefused, () => expectValidationFailed(answer, [], both)]);
    if (query.verdict === "invalid") return queryRefused();
    if (answer.status === 422) return expectValidationFailed(answer, [], query.may);
  }
  const keyInvalid = key !== undefined && !isValidIdempotencyKey(key);
  const prior = key === undefined ? undefined : fx.keys.get(key);
  // A known deviation (see "a phone is validated with the body" in http.property.test.ts): when
  // the phone is the only invalid field, the server checks the Idempotency-Key first.
  if (verdict === "invalid" && must.every((entry) => entry.code === "invalid_phone") && (keyInvalid || prior)) {
    return expectOneOf([
      () => expectValidationFailed(answer, must, may, fields),
      () => expectKeyRefused(answer, keyInvalid),
    ]);
  }
  if (verdict === "invalid") return expectValidationFailed(answer, must, may, fields);
  if (verdict === "unknown" && answer.status === 422 && answer.body.code === "validation_failed") {
    const allowed = new Set([
      ...may,
      ...(keyInvalid ? ["Idempotency-Key"] : []),
      ...(op === createContact ? ["accountId"] : []),
    ]);
    return expectValidationFailed(answer, [], allowed);
  }
  if (key !== undefined) {
    if (keyInvalid) return expectKeyRefused(answer, true);
    if (prior?.request === identity) {
      expect([answer.status, answer.text]).toEqual([prior.status, prior.text]);
      return;
    }
    if (prior) return expectKeyRefused(answer, false);
  }
  op.outcome(fx, parsed, answer, sent);
  const isOutcome = (answer.status >= 200 && answer.status < 300) || answer.body?.code === "slot_unavailable";
  if (key !== undefined && isOutcome) fx.keys.set(key, { request: identity, status: answer.status, text: answer.text });
}

/** Whether this answer is the replay of a stored outcome (it then carries its first request's id). */
export const isReplay = (fx: Fixture, identity: string, key: string | undefined) =>
  key !== undefined && fx.keys.get(key)?.request === identity;
