// The form of every answer near every input limit: for each of a
// set of time zones (offsets from −12:00 to +14:00, half and three-quarter
// hours, historical offsets in seconds), generated runs call every
// operation with VALID inputs at their limits — date-times at both ends of
// the range written with offsets up to ±14:00 (and the slot starts there),
// strings of astral characters exactly at their limit in UTF-16 code units,
// limits 1 and max, codes 0 and 2147483647 — and must get 2xx (or the
// documented 409 for the state). Every answer, and the events list after
// the run, is walked member by member (forms.ts): date-times in the UTC
// form, slot local times in the local form, strings within their limits,
// everything written reading back exactly as written (trimmed).
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { incidents } from "../../../drizzle/schema";
import { insertAccounts } from "../../../src/db/accounts";
import { newId } from "../../../src/lib/ids";
import { OPERATIONS } from "../../../src/routes";
import { importAccount } from "../../../src/schemas/accounts";
import { addService } from "../../support/catalogue";
import type { ReadResponse } from "../../support/http";
import { call } from "../../support/request";
import { db, openTenant, type Tenant } from "../../support/tenants";
import { DAY, HOUR, iso } from "../../support/time";
import { expectForm, nothingSeen, type Seen } from "./forms";
import { e164, FIRST_INSTANT, instantOf, LAST_INSTANT } from "./oracle";
import { astralAt, atOffset, OFFSETS, validEdgeDateTime } from "./values";

const SEED = 20_261_122;
/** Runs per zone; each run is one org and about 25 requests. */
const RUNS = 5;

/** Zones at the extremes of the offsets, at half and three-quarter hours, with DST of 30 minutes, and with LMT in seconds. */
const ZONES = [
  "UTC",
  "Pacific/Kiritimati",
  "Etc/GMT+12",
  "Asia/Kathmandu",
  "America/St_Johns",
  "Pacific/Chatham",
  "Australia/Lord_Howe",
  "America/New_York",
];

/** The zone's offset at `at` (ms), from the runtime's own zone data: "GMT", "GMT+14:00", "GMT-04:56:02". */
function offsetAt(at: number, timeZone: string): number {
  const name = new Intl.DateTimeFormat("en-US", { timeZone, timeZoneName: "longOffset" })
    .formatToParts(at)
    .find((part) => part.type === "timeZoneName")!.value;
  const [, sign, h = "0", m = "0", s = "0"] = /^GMT(?:([+-])(\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(name)!;
  return (sign === "-" ? -1 : 1) * ((Number(h) * 60 + Number(m)) * 60 + Number(s)) * 1000;
}

/**
 * Slot starts of an around-the-clock hourly schedule (whole local hours)
 * within the range: the k-th hour back from the last local hour that starts
 * by LAST_INSTANT, or the k-th from the first that starts at FIRST_INSTANT or
 * after. Near the end some have a local end after 9999-12-31, which the
 * server must not offer as a slot (docs "Conventions").
 */
function edgeSlotStart(timeZone: string, end: boolean, k: number): number {
  const offset = offsetAt(end ? LAST_INSTANT : FIRST_INSTANT, timeZone);
  const local = (end ? LAST_INSTANT : FIRST_INSTANT) + offset;
  const hour = end ? Math.floor(local / HOUR) * HOUR : Math.ceil(local / HOUR) * HOUR;
  return hour - offset + (end ? -k : k) * HOUR;
}

const code = fc.constantFrom(0, 2147483647);
const listLimit = fc.constantFrom(1, 200);
/** An email exactly 320 code units long: astral characters, then `x@b.co`, maybe padded. */
const emailAt320 = fc
  .tuple(fc.constantFrom("🦗", "😀", "𝄞"), fc.constantFrom("", " "))
  .map(([astral, pad]) => `${pad}${astral.repeat(157)}x@b.co${pad}`);
/** A valid number spelled in exactly 40 code units: "+1", spaces, then the number in groups. */
const CALLER = "+12125550134";
const CALLER_AT_40 = `+1${" ".repeat(26)}212 555 0134`;

const texts = fc.record({
  name: astralAt(200),
  other: astralAt(200),
  email: emailAt320,
  phoneText: astralAt(40),
  street: astralAt(500),
  postalCode: astralAt(20),
  notes: astralAt(2000),
  reason: astralAt(500),
});

const run = fc.record({
  texts,
  codes: fc.tuple(code, code, code),
  estimatedValue: fc.constantFrom(0, Number.MAX_VALUE),
  closeDate: fc.oneof(validEdgeDateTime, fc.constantFrom("0001-01-01", "9999-12-31")),
  /** Date-times at the ends of the range: find's, the lists' filters, a booking that must be refused. */
  edges: fc.array(validEdgeDateTime, { minLength: 6, maxLength: 6 }),
  /** Slot starts at an end of the range to check, and the offsets instants are written with. */
  edgeSlots: fc.array(fc.tuple(fc.boolean(), fc.oneof(fc.nat(3), fc.nat(30))), { minLength: 2, maxLength: 2 }),
  offsets: fc.array(fc.constantFrom(...OFFSETS), { minLength: 4, maxLength: 4 }),
  limits: fc.record({ contacts: listLimit, incidents: listLimit, events: listLimit, find: fc.constantFrom(1, 100) }),
  slotPick: fc.tuple(fc.nat(80), fc.nat(80)),
  filters: fc.subarray(["email", "accountId", "phone", "updatedSince"]),
  /** How long the booking's slot is held: the least and the most (docs/api.md, "Holding a slot"). */
  holdMinutes: fc.constantFrom(1, 15),
});
type Run = typeof run extends fc.Arbitrary<infer T> ? T : never;

/** Inserts a scheduled hour-long visit starting at `startsAt` (the API books none in the past); its id. */
async function insertIncident(tenant: Tenant, startsAt: number): Promise<string> {
  const id = newId("inc", startsAt);
  await db()
    .insert(incidents)
    .values({
      id,
      orgId: tenant.orgId,
      clientName: "Started",
      insectName: "ants",
      startsAt,
      endsAt: startsAt + HOUR,
      occupiedUntil: startsAt + HOUR,
      createdAt: Date.now(),
      updatedAt: Date.now(),
    });
  return id;
}

const trimmed = (fields: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, typeof v === "string" ? v.trim() : v]));

const find = "POST /api/v1/ai-agent/available-appointments";
const DAY_NAMES = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];
/** The lower-case English name of the UTC day that holds `at`. */
const dayName = (at: number) => DAY_NAMES[new Date(at).getUTCDay()]!;

/** The operations one run called ("METHOD /path"), and every 2xx answer's form. */
class Session {
  readonly called = new Set<string>();
  readonly written = new Map<string, Record<string, unknown>>();
  readonly seen: Seen = nothingSeen();
  constructor(readonly tenant: Tenant) {}

  /** Calls `operation` at `path`; the answer must have one of `statuses` and the form of forms.ts. */
  async send(operation: string, path: string, statuses: number[], body?: unknown): Promise<ReadResponse> {
    this.called.add(operation);
    const res = await call(this.tenant, path, body === undefined ? {} : { body });
    expect(
      statuses,
      `${operation} ${path} ${JSON.stringify(body)?.slice(0, 300).toWellFormed()}: ${res.text.toWellFormed()}`,
    ).toContain(res.status);
    expectForm(res.body, this.written, this.seen);
    return res;
  }
}

async function scenario(zone: string, r: Run) {
  const tenant = await openTenant(`Form ${zone}`, { timeZone: zone, capacity: 2, horizonDays: 365 });
  const s = new Session(tenant);
  const t = r.texts;
  // A service as an operator stores one, before the key's first request (the catalogue is cached with it).
  // Not the default and no keyword a booking says: the bookings below stay visits of no service, one slot long.
  const service = await addService(tenant, {
    name: t.name.trim(),
    durationMinutes: 1440,
    bufferMinutes: 240,
    keywords: ["no caller says this".padEnd(200, "x")],
  });
  s.written.set(service.id, { name: t.name.trim() });
  const at = (instant: number, i: number) => atOffset(instant, r.offsets[i % r.offsets.length]!);
  expect(e164(CALLER_AT_40), "the 40-unit spelling is the caller's number").toBe(CALLER);
  const address = { buildingLocation: t.other, street1: t.street, street2: t.street, city: t.name, state: t.other };

  const leadFields = {
    firstName: t.name,
    lastName: t.other,
    title: t.name,
    companyName: t.other,
    email: t.email,
    mobilePhone: t.phoneText,
    businessPhone: CALLER_AT_40,
    leadSource: r.codes[1],
    accountType: r.codes[0],
    rating: r.codes[2],
    estimatedValue: r.estimatedValue,
    ...address,
    postalCode: t.postalCode,
    country: t.name,
  };
  const lead = await s.send("POST /api/v1/leads", "/api/v1/leads", [200], {
    ...leadFields,
    estimatedCloseDate: r.closeDate,
  });
  const closeDate = /^\d{4}-\d{2}-\d{2}$/.test(r.closeDate)
    ? `${r.closeDate}T00:00:00.000Z`
    : iso(instantOf(r.closeDate));
  s.written.set(lead.body.id, { ...trimmed(leadFields), estimatedCloseDate: closeDate });
  expectForm(lead.body, s.written, s.seen);

  // An account as `accounts import` stores it (operators create accounts, not the API).
  const accountFields = {
    name: t.name,
    accountType: r.codes[0],
    email: t.email,
    mobilePhone: CALLER_AT_40,
    businessPhone: t.phoneText,
    ...address,
    postalCode: t.postalCode,
    country: t.other,
  };
  const [account] = (await insertAccounts(db(), tenant.orgId, [importAccount().parse(accountFields)]))!.accounts;
  s.written.set(account!.id, trimmed(accountFields));

  const contactFields = {
    firstName: t.other,
    lastName: t.name,
    email: t.email,
    mobilePhone: CALLER_AT_40,
    businessPhone: t.phoneText,
    accountId: account!.id,
    ...address,
    postalCode: t.postalCode,
    country: t.other,
  };
  // Two contacts, so that a page of one has a next page.
  for (const fields of [contactFields, { lastName: t.other, businessPhone: CALLER_AT_40, accountId: account!.id }]) {
    const contact = await s.send("POST /api/v1/contacts", "/api/v1/contacts", [200], fields);
    s.written.set(contact.body.id, trimmed(fields));
    expectForm(contact.body, s.written, s.seen);
  }

  const filterValues: Record<string, string> = {
    email: t.email,
    accountId: account!.id,
    phone: CALLER_AT_40,
    updatedSince: r.edges[0]!,
  };
  const contactQuery = new URLSearchParams({ limit: String(r.limits.contacts) });
  for (const name of r.filters) contactQuery.set(name, filterValues[name]!);
  const contacts = await s.send("GET /api/v1/contacts", `/api/v1/contacts?${contactQuery}`, [200]);
  if (contacts.body.nextCursor) {
    contactQuery.set("cursor", contacts.body.nextCursor);
    await s.send("GET /api/v1/contacts", `/api/v1/contacts?${contactQuery}`, [200]);
  }
  await s.send("GET /api/v1/accounts/{id}", `/api/v1/accounts/${account!.id}`, [200]);
  const listed = await s.send("GET /api/v1/services", "/api/v1/services", [200]);
  expect(listed.body.services.map((x: { id: string }) => x.id)).toEqual([service.id]);

  // The call context: the org as named, its zone, its service, 7 local dates from today open around
  // the clock, and the next slot (nothing is booked yet), as available-appointments lists it from then.
  s.written.set(tenant.orgId, { name: `Form ${zone}` });
  const context = await s.send("GET /api/v1/ai-agent/context", "/api/v1/ai-agent/context", [200]);
  expect(context.body).toMatchObject({ organization: { id: tenant.orgId }, timeZone: zone });
  expect(context.body.services.map((x: { id: string }) => x.id)).toEqual([service.id]);
  const { localDate, localNow, weekday, openingHours } = context.body;
  expect(localNow.slice(0, 10)).toBe(localDate);
  const day = Date.parse(`${localDate}T00:00:00Z`);
  expect(openingHours).toEqual(
    Array.from({ length: 7 }, (_, i) => ({
      date: iso(day + i * DAY).slice(0, 10),
      weekday: dayName(day + i * DAY),
      intervals: [["00:00", "24:00"]],
    })),
  );
  expect(weekday).toBe(dayName(day));
  const next = context.body.nextAvailable;
  expect(next, context.text).not.toBeNull();
  expect(Date.parse(next.start)).toBeGreaterThanOrEqual(Date.parse(context.body.now));
  const asked = Date.now();
  const fromThen = await s.send(find, "/api/v1/ai-agent/available-appointments", [200], {
    dateTime: context.body.now,
    limit: 1,
  });
  // Unless that slot began in between (available-appointments starts from its own now at the latest).
  if (Date.parse(next.start) >= asked) expect(fromThen.body.slots).toEqual([next]);

  // Slots: from an end of the range (0001 is lifted to now), and from now, written with offsets.
  await s.send(find, "/api/v1/ai-agent/available-appointments", [200], {
    dateTime: r.edges[1],
    limit: r.limits.find,
  });
  const now = await s.send(find, "/api/v1/ai-agent/available-appointments", [200], {
    dateTime: at(Date.now(), 0),
    limit: 100,
  });
  const starts = (now.body.slots as { start: string }[]).map((slot) => Date.parse(slot.start)).slice(2);
  expect(starts.length, now.text).toBeGreaterThan(10);
  // Two different slots: one to book, one to move the booking to.
  const [a, b] = r.slotPick;
  const first = starts[a % starts.length]!;
  const second = starts[(a + 1 + (b % (starts.length - 1))) % starts.length]!;

  const check = "POST /api/v1/ai-agent/is-booking-available";
  for (const [i, [end, k]] of r.edgeSlots.entries()) {
    const dateTime = at(edgeSlotStart(zone, end, k), i + 1);
    const res = await s.send(check, "/api/v1/ai-agent/is-booking-available", [200], { dateTime });
    expect(res.body.dateTime).toBe(iso(instantOf(dateTime)));
  }
  const free = await s.send(check, "/api/v1/ai-agent/is-booking-available", [200], { dateTime: at(first, 2) });
  expect(free.body.available, free.text).toBe(true);

  // The booking's slot held first (written with an offset), for the least or the most minutes, the caller's words at their limit.
  const hold = "POST /api/v1/ai-agent/hold-slot";
  const before = Date.now();
  const held = await s.send(hold, "/api/v1/ai-agent/hold-slot", [200], {
    dateTime: at(first, 1),
    insectName: t.other,
    holdMinutes: r.holdMinutes,
  });
  expect(held.body.slot).toMatchObject({ start: iso(first), remaining: 1 });
  const kept = Date.parse(held.body.expiresAt) - r.holdMinutes * 60_000;
  expect(kept, held.text).toBeGreaterThanOrEqual(before);
  expect(kept, held.text).toBeLessThanOrEqual(Date.now());

  const book = "POST /api/v1/ai-agent/create-incident";
  const incidentFields = { clientName: ` ${t.name}`, insectName: t.other, notes: t.notes };
  const refused = await s.send(book, "/api/v1/ai-agent/create-incident", [409], {
    dateTime: r.edges[2],
    ...incidentFields,
  });
  expect(refused.body.code).toBe("slot_unavailable");
  const incident = await s.send(book, "/api/v1/ai-agent/create-incident", [200], {
    dateTime: at(first, 3),
    ...incidentFields,
    phone: CALLER_AT_40,
    holdId: held.body.holdId,
  });
  expect(incident.body.holdExpired, incident.text).toBe(false);
  const id = incident.body.id as string;
  s.written.set(id, { ...trimmed(incidentFields), phone: CALLER });
  expectForm(incident.body, s.written, s.seen);
  expect(incident.body.dateTime).toBe(iso(first));

  // The hold, used by the booking, released: the same 200 (agents retry).
  const released = await s.send("POST /api/v1/ai-agent/release-hold", "/api/v1/ai-agent/release-hold", [200], {
    holdId: held.body.holdId,
  });
  expect(released.body).toEqual({ holdId: held.body.holdId, released: true });

  await s.send("POST /api/v1/ai-agent/find-caller", "/api/v1/ai-agent/find-caller", [200], { phone: CALLER_AT_40 });
  await s.send("GET /api/v1/incidents/{id}", `/api/v1/incidents/${id}`, [200]);
  const incidentQuery = new URLSearchParams({
    limit: String(r.limits.incidents),
    from: r.edges[3]!,
    to: r.edges[4]!,
    updatedSince: r.edges[5]!,
    phone: CALLER_AT_40,
  });
  await s.send("GET /api/v1/incidents", `/api/v1/incidents?${incidentQuery}`, [200]);
  await s.send("GET /api/v1/incidents", `/api/v1/incidents?limit=${r.limits.incidents}&status=scheduled`, [200]);

  const reschedule = "POST /api/v1/incidents/{id}/reschedule";
  const edgeMove = await s.send(reschedule, `/api/v1/incidents/${id}/reschedule`, [409], { dateTime: r.edges[2] });
  expect(edgeMove.body.code).toBe("slot_unavailable");
  const moved = await s.send(reschedule, `/api/v1/incidents/${id}/reschedule`, [200], { dateTime: at(second, 1) });
  expect(moved.body.dateTime).toBe(iso(second));

  const cancelled = await s.send("POST /api/v1/incidents/{id}/cancel", `/api/v1/incidents/${id}/cancel`, [200], {
    reason: t.reason,
  });
  expect(cancelled.body.cancelReason).toBe(t.reason.trim());
  const late = await s.send(reschedule, `/api/v1/incidents/${id}/reschedule`, [409], { dateTime: at(first, 0) });
  expect(late.body).toMatchObject({ code: "incident_not_changeable", reason: "cancelled" });

  // A visit that started a minute ago (the API books none in the past), closed with a note at its limit.
  const started = await insertIncident(tenant, Date.now() - 60_000);
  const closed = await s.send("POST /api/v1/incidents/{id}/close", `/api/v1/incidents/${started}/close`, [200], {
    outcome: "no_show",
    note: t.notes,
  });
  expect(closed.body.outcomeNote).toBe(t.notes.trim());

  // A plan of the most visits, a year apart (none decided beside the answer), its first visit at another slot.
  const planFields = { clientName: t.name, insectName: t.other, notes: t.notes };
  const third = starts[(a + 2 + (b % (starts.length - 2))) % starts.length]!;
  const created = await s.send("POST /api/v1/ai-agent/create-plan", "/api/v1/ai-agent/create-plan", [200], {
    dateTime: at(third, 2),
    ...planFields,
    phone: CALLER_AT_40,
    every: { count: 12, unit: "month" },
    visits: 52,
  });
  const planId = created.body.plan.id as string;
  s.written.set(planId, { ...trimmed(planFields), phone: CALLER });
  s.written.set(created.body.incident.id, { ...trimmed(planFields), phone: CALLER });
  expectForm(created.body, s.written, s.seen);
  await s.send("GET /api/v1/plans/{id}", `/api/v1/plans/${planId}`, [200]);
  const planQuery = new URLSearchParams({ limit: String(r.limits.incidents), status: "active", phone: CALLER_AT_40 });
  const plans = await s.send("GET /api/v1/plans", `/api/v1/plans?${planQuery}`, [200]);
  expect(plans.body.data.map((x: { id: string }) => x.id)).toEqual([planId]);
  const ended = await s.send("POST /api/v1/plans/{id}/cancel", `/api/v1/plans/${planId}/cancel`, [200], {
    reason: t.reason,
  });
  expect(ended.body.cancelReason).toBe(t.reason.trim());
  // The board of the day of the plan's first visit (its visit cancelled by now: the closed one may show).
  await s.send("GET /api/v1/board", `/api/v1/board?date=${iso(third).slice(0, 10)}`, [200]);

  // Afterwards, every event of the run, page by page.
  let cursor: string | undefined;
  let events = 0;
  for (let page = 0; page < 50; page++) {
    const query = `limit=${r.limits.events}${cursor ? `&cursor=${cursor}` : ""}`;
    const res = await s.send("GET /api/v1/events", `/api/v1/events?${query}`, [200]);
    events += res.body.data.length;
    cursor = res.body.nextCursor;
    if (!res.body.hasMore) break;
  }
  // The lead, two contacts, the incident created, rescheduled, cancelled (holds are not events), the visit
  // closed, the plan and its first visit created, then both cancelled.
  expect(events).toBe(11);
  return s;
}

beforeAll(() => {
  // One request-log line per request is noise here.
  vi.spyOn(console, "log").mockImplementation(() => {});
});
afterAll(() => {
  vi.restoreAllMocks();
});

describe(`the form of every answer near every input limit (seed ${SEED}, ${RUNS} runs per zone)`, () => {
  it.each(ZONES)(
    "%s: every operation answers 2xx (or its documented 409), every member in form",
    async (zone) => {
      await fc.assert(
        fc.asyncProperty(run, async (r) => {
          const s = await scenario(zone, r);
          expect([...s.called].sort()).toEqual(OPERATIONS.map((op) => `${op.method.toUpperCase()} ${op.path}`).sort());
          // The walk saw what it was meant to: UTC and local date-times, limited strings, written resources.
          for (const [what, count] of Object.entries(s.seen)) expect(count, what).toBeGreaterThan(10);
        }),
        { seed: SEED, numRuns: RUNS },
      );
    },
    120_000,
  );
});
