// The fuzz suites' side of the wire: orgs to fuzz (each with accounts,
// contacts and real cursors), requests through the worker's own fetch handler,
// and the checks every answer must pass whatever was sent.

import { env } from "cloudflare:test";
import fc from "fast-check";
import { expect } from "vitest";
import {
  type EventType,
  holds as holdTable,
  incidents as incidentTable,
  plans as planTable,
} from "../../../drizzle/schema";
import { newId } from "../../../src/lib/ids";
import { addService } from "../../support/catalogue";
import type { ReadResponse } from "../../support/http";
import { mcpCall, toolAnswer } from "../../support/mcp";
import { isProblem } from "../../support/problem";
import { type CallOptions, call } from "../../support/request";
import { addAccount, db, openTenant, type Tenant } from "../../support/tenants";
import { HOUR, hoursAhead, iso, MINUTE, slotIn } from "../../support/time";
import { e164 } from "./oracle";
import { Sym } from "./values";

/** The seed of every fuzz property: a failure reproduces exactly. */
export const FUZZ_SEED = 20_261_122;
export const RUNS = 1000;
/**
 * Per MCP tool: a tool call runs its operation's own route, whose inputs the
 * HTTP fuzz covers with RUNS each; what the tool fuzz adds is the transport's
 * wrapping of the same answers.
 */
export const TOOL_RUNS = 500;
// wrangler.toml allows 1,200 requests per org per 60 s. A fixture serves at
// most this many, then a fresh org takes over (only shrinking after a failure
// goes that far), so a 429 can never stand in for the answer under test.
const REQUESTS_PER_ORG = 1100;

/** An incident as the API shows it (docs/api.md, "Incidents"; the appointment without `remaining`). */
export interface IncidentView {
  id: string;
  status: "scheduled" | "cancelled" | "completed" | "no_show";
  dateTime: string;
  clientName: string;
  insectName: string;
  accountId: string | null;
  phone: string | null;
  notes: string | null;
  serviceId: string | null;
  technicianId: string | null;
  postalCode: string | null;
  appointment: { start: string; end: string; localStart: string; localEnd: string };
  arrivalWindow: { start: string; end: string; localStart: string; localEnd: string } | null;
  createdAt: string;
  updatedAt: string;
  cancelledAt: string | null;
  cancelReason: string | null;
  closedAt: string | null;
  outcomeNote: string | null;
  planId: string | null;
}

export interface ContactRecord {
  email: string | null;
  accountId: string | null;
  createdAt: number;
  updatedAt: number;
  /** Its mobile and business phones as E.164, where they are valid numbers (docs/api.md, "Phone numbers"). */
  phones: string[];
}

/** An event the fixture's own requests recorded (docs/webhooks.md, "Events"), as their answers predict it. */
export interface SeededEvent {
  type: EventType;
  /** The resource as the answer gave it (an incident without `remaining`). */
  data: unknown;
  /** The incident's dateTime and appointment before a reschedule. */
  previous?: unknown;
  /** Date.now() before and after the request: the event's timestamp lies between. */
  before: number;
  after: number;
}

/** A cursor of the events list: the type it was issued for, and how many of the org's events (in commit order) lie before its position. */
export interface IssuedEventCursor {
  token: string;
  type?: EventType;
  after: number;
}

/**
 * A hold of the org as the answers made it (docs/api.md, "Holding a slot"):
 * the place it keeps (the default visit, an hour without buffer), its expiry
 * as answered, and when it was first released (between these clocks: its
 * row's expiry is then 0, and it ended at the earlier of its expiry and the release).
 */
export interface HoldRecord {
  start: number;
  end: number;
  expiresAt: number;
  released?: { before: number; after: number };
}

/** Whether a hold occupies its place at `now`: not released, not expired. */
export const isLive = (hold: HoldRecord, now: number) => hold.released === undefined && hold.expiresAt > now;

/** The org's holds that occupy a place at `now`. */
export const liveHolds = (fx: Fixture, now: number) => [...fx.holds.values()].filter((hold) => isLive(hold, now));

/** A position a list cursor was issued after: the (sort time, id) of the last row of its page. */
export interface IssuedCursor {
  token: string;
  after: { at: number; id: string };
}

export interface Fixture {
  tenant: Tenant;
  accounts: { id: string; name: string; createdAt: number; phones: string[] }[];
  /** Every contact of the org, by id. */
  contacts: Map<string, ContactRecord>;
  leads: Set<string>;
  /** Every incident of the org as it is now, by id, in the order they were booked. */
  incidents: Map<string, IncidentView>;
  /** Every hold of the org, by id, in the order they were made (holds are not events). */
  holds: Map<string, HoldRecord>;
  /** Every plan of the org as the API shows it now, by id, in the order they were made. */
  plans: Map<string, PlanView>;
  /**
   * The events of the org's seeding and fresh bookings, in commit order (the
   * requests run one at a time). The fuzzed requests' own are not tracked: the
   * events list is fuzzed with reads only.
   */
  events: SeededEvent[];
  /** The org's phones (E.164): its first contacts' and first incidents', its first account's, a UK one. */
  phones: [string, string, string];
  /** The start of a slot both places of which are booked. */
  fullSlot: string;
  /** Hours ahead at which bookings made for a request (freshIncidentId) go next. */
  freshHour: number;
  /**
   * Cursors issued to this org: contacts without filters, for `accountId` =
   * its first account, for `phone` = its first phone; incidents without
   * filters, for status=scheduled and for `phone` = its first phone; events
   * after the first one, after the first incident.created for that type, and
   * after the last one.
   */
  cursors: {
    plain: string;
    account: string;
    phone: string;
    incidents: { plain: IssuedCursor; status: IssuedCursor; phone: IssuedCursor };
    events: { plain: IssuedEventCursor; typed: IssuedEventCursor; end: IssuedEventCursor };
  };
  /** Stored Idempotency-Key outcomes: the request each key was first used for and its answer. */
  keys: Map<string, { request: string; status: number; text: string }>;
  requests: number;
  /** The org's row counts when last read. */
  counts?: Counts;
  /**
   * The org's and the other org's row counts, read in the same round trip as
   * a read-back of its rows (expectIncidentsAsAnswered, expectHoldsAsAnswered)
   * after its `requests`-th request: expectStoredOnly takes them then instead
   * of reading them again.
   */
  countsRead?: { requests: number; both: [Counts, Counts] };
  /** GET /api/v1/services as the org's one service makes it (not the default, no keywords: no booking picks it). */
  services: { services: object[] };
  /** What of GET /api/v1/ai-agent/context the org's seeding fixes: the org, its zone, its one service as an agent sees it. */
  context: { organization: { id: string; name: string }; timeZone: string; services: object[] };
}

/** A plan as the API shows it (docs/api.md, "Plans"). */
export interface PlanView {
  id: string;
  status: "active" | "completed" | "cancelled";
  phone: string | null;
  accountId: string | null;
  nextDueDate: string | null;
  createdAt: string;
  updatedAt: string;
  cancelledAt: string | null;
  cancelReason: string | null;
  [member: string]: unknown;
}

export interface Counts {
  leads: number;
  contacts: number;
  incidents: number;
  holds: number;
  plans: number;
  accounts: number;
  keys: number;
}

/** The other organisation, whose ids and cursors the fuzz throws at the org under test. */
export interface Foreign {
  tenant: Tenant;
  accountId: string;
  accountName: string;
  contactId: string;
  cursor: string;
  incidentIds: string[];
  planIds: string[];
  incidentCursor: string;
  eventCursor: string;
  phones: string[];
  /** Its incidents' rows as stored after seeding: no request to the org under test may change them. */
  incidentRows: unknown[];
  /** Its holds (live, short-lived and released ones) and their rows as stored after seeding: the same. */
  holdIds: string[];
  holdRows: unknown[];
}

/** A request as the fixture's org with the real bindings (D1, rate limiter), counted against its budget. */
export function send(fx: Fixture, path: string, options: CallOptions = {}): Promise<ReadResponse> {
  fx.requests++;
  return call(fx.tenant, path, options);
}

/** The phones a contact stores as E.164 beside its free-text ones (docs/api.md, "Phone numbers"), as the oracle predicts them. */
export const contactPhones = (contact: { mobilePhone?: unknown; businessPhone?: unknown }) =>
  [contact.mobilePhone, contact.businessPhone].flatMap((text) => {
    const number = typeof text === "string" && text.trim() !== "" ? e164(text) : null;
    return number === null ? [] : [number];
  });

/** Records a contact the API answered. */
export function recordContact(fx: Fixture, body: Record<string, unknown>) {
  fx.contacts.set(body.id as string, {
    email: body.email as string | null,
    accountId: body.accountId as string | null,
    createdAt: Date.parse(body.createdAt as string),
    updatedAt: Date.parse(body.updatedAt as string),
    phones: contactPhones(body),
  });
}

/** Records an incident the API answered (create-incident's `remaining` left out). */
export function recordPlan(fx: Fixture, body: Record<string, unknown>) {
  const view = body as PlanView;
  fx.plans.set(view.id, view);
  return view;
}

export function recordIncident(fx: Fixture, body: Record<string, unknown>) {
  const { remaining: _, ...appointment } = body.appointment as IncidentView["appointment"] & { remaining?: number };
  const view = { ...body, appointment } as unknown as IncidentView;
  fx.incidents.set(view.id, view);
  return view;
}

/** The appointment of the fuzzed orgs' UTC hourly schedule. */
export const utcAppointment = (start: number, ms = HOUR) => ({
  start: iso(start),
  end: iso(start + ms),
  localStart: `${iso(start).slice(0, 19)}+00:00`,
  localEnd: `${iso(start + ms).slice(0, 19)}+00:00`,
});

/** A seeding write: 200, and the event it records. */
async function seedWrite(
  fx: Fixture,
  type: EventType,
  path: string,
  body: object,
  resource: (answer: Record<string, unknown>) => unknown,
  previous?: unknown,
) {
  const before = Date.now();
  const res = await send(fx, path, { body });
  expect(res.status, res.text).toBe(200);
  fx.events.push({ type, data: resource(res.body), before, after: Date.now(), ...(previous ? { previous } : {}) });
  return res.body as Record<string, unknown>;
}

async function seedContacts(fx: Fixture, bodies: object[]) {
  for (const body of bodies)
    await seedWrite(fx, "contact.created", "/api/v1/contacts", body, (answer) => {
      recordContact(fx, answer);
      return answer;
    });
}

async function nextCursor(fx: Fixture, query: string): Promise<string> {
  const res = await send(fx, `/api/v1/contacts?limit=1${query}`);
  expect(res.body?.nextCursor, res.text).toEqual(expect.any(String));
  return res.body.nextCursor;
}

async function book(fx: Fixture, hours: number, body: Record<string, unknown>) {
  let view: IncidentView | undefined;
  await seedWrite(
    fx,
    "incident.created",
    "/api/v1/ai-agent/create-incident",
    { dateTime: slotIn(hours), insectName: "Seed ants", ...body },
    (answer) => {
      view = recordIncident(fx, answer);
      return view;
    },
  );
  return view!;
}

/** A seeding cancel or reschedule of incident `id`. */
async function change(fx: Fixture, id: string, action: "cancel" | "reschedule", body: object) {
  const { dateTime, appointment } = fx.incidents.get(id)!;
  return seedWrite(
    fx,
    action === "cancel" ? "incident.cancelled" : "incident.rescheduled",
    `/api/v1/incidents/${id}/${action}`,
    body,
    (answer) => recordIncident(fx, answer),
    action === "reschedule" ? { dateTime, appointment } : undefined,
  );
}

/** A seeding hold of the default visit at `hours` ahead (hold-slot records no event); released at once if `release`. */
async function seedHold(fx: Fixture, hours: number, holdMinutes: number, release = false) {
  const start = hoursAhead(hours);
  const res = await send(fx, "/api/v1/ai-agent/hold-slot", { body: { dateTime: iso(start), holdMinutes } });
  expect(res.status, res.text).toBe(200);
  const id = res.body.holdId as string;
  fx.holds.set(id, { start, end: start + HOUR, expiresAt: Date.parse(res.body.expiresAt) });
  if (!release) return;
  const before = Date.now();
  const released = await send(fx, "/api/v1/ai-agent/release-hold", { body: { holdId: id } });
  expect([released.status, released.body], released.text).toEqual([200, { holdId: id, released: true }]);
  fx.holds.get(id)!.released = { before, after: Date.now() };
}

/** Inserts a hold that expired a minute ago (the API cannot make one): its id still answers, as lapsed, until the sweep. */
async function insertLapsed(fx: Fixture, hours: number) {
  const now = Date.now();
  const start = hoursAhead(hours, now);
  const row = {
    id: newId("hold", now),
    orgId: fx.tenant.orgId,
    startsAt: start,
    endsAt: start + HOUR,
    occupiedUntil: start + HOUR,
    serviceId: null,
    technicianId: null,
    postalCode: null,
    expiresAt: now - MINUTE,
    endedAt: null,
    incidentId: null,
    createdAt: now - 6 * MINUTE,
  };
  await db().insert(holdTable).values(row);
  fx.holds.set(row.id, { start, end: start + HOUR, expiresAt: row.expiresAt });
}

/** Inserts a plan as create-plan stores one after its first visit (not booked here), its next visit far off; or cancelled. */
async function insertPlan(
  fx: Fixture,
  { phone, accountId, cancelled = false }: { phone: string | null; accountId: string | null; cancelled?: boolean },
) {
  const now = Date.now();
  const row = {
    id: newId("plan", now),
    orgId: fx.tenant.orgId,
    status: cancelled ? ("cancelled" as const) : ("active" as const),
    everyCount: 3,
    everyUnit: "month" as const,
    visits: null,
    serviceId: null,
    postalCode: null,
    clientName: "Seed plan",
    insectName: "Seed ants",
    phone,
    accountId,
    notes: null,
    technicianId: null,
    localTime: "10:00",
    firstVisitDate: "2026-01-05",
    visitsMade: 1,
    nextDueDate: cancelled ? null : "2999-01-05",
    decideAt: cancelled ? null : Date.parse("2998-12-22T00:00:00Z"),
    createdAt: now,
    updatedAt: now,
    cancelledAt: cancelled ? now : null,
    cancelReason: cancelled ? "Seed cancel" : null,
  };
  await db().insert(planTable).values(row);
  recordPlan(fx, {
    id: row.id,
    status: row.status,
    every: { count: 3, unit: "month" },
    visits: null,
    serviceId: null,
    postalCode: null,
    clientName: row.clientName,
    insectName: row.insectName,
    phone,
    accountId,
    notes: null,
    technicianId: null,
    localTime: row.localTime,
    firstVisitDate: row.firstVisitDate,
    nextDueDate: row.nextDueDate,
    visitsMade: 1,
    createdAt: iso(now),
    updatedAt: iso(now),
    cancelledAt: cancelled ? iso(now) : null,
    cancelReason: row.cancelReason,
  });
}

/** Inserts an incident whose appointment has already started (the API cannot book one), `hours` before the current hour. */
async function insertStarted(fx: Fixture, hoursAgo: number, phone: string) {
  const now = Date.now();
  const startsAt = hoursAhead(-1 - hoursAgo, now);
  const row = {
    id: newId("inc", now),
    orgId: fx.tenant.orgId,
    status: "scheduled" as const,
    clientName: `Started ${hoursAgo}h ago`,
    insectName: "Seed wasps",
    accountId: null,
    phone,
    notes: null,
    startsAt,
    endsAt: startsAt + HOUR,
    createdAt: now,
    updatedAt: now,
    cancelledAt: null,
    cancelReason: null,
  };
  await db().insert(incidentTable).values(row);
  fx.incidents.set(row.id, {
    id: row.id,
    status: row.status,
    dateTime: iso(startsAt),
    clientName: row.clientName,
    insectName: row.insectName,
    accountId: null,
    phone,
    notes: null,
    serviceId: null,
    technicianId: null,
    postalCode: null,
    appointment: utcAppointment(startsAt),
    arrivalWindow: null,
    createdAt: iso(now),
    updatedAt: iso(now),
    cancelledAt: null,
    cancelReason: null,
    closedAt: null,
    outcomeNote: null,
    planId: null,
  });
}

async function incidentCursor(fx: Fixture, query: string): Promise<IssuedCursor> {
  const res = await send(fx, `/api/v1/incidents?limit=1${query}`);
  expect(res.body?.nextCursor, res.text).toEqual(expect.any(String));
  const [last] = res.body.data as IncidentView[];
  return { token: res.body.nextCursor, after: { at: Date.parse(last!.dateTime), id: last!.id } };
}

async function eventCursor(fx: Fixture, type?: EventType, limit = 1): Promise<IssuedEventCursor> {
  const res = await send(fx, `/api/v1/events?limit=${limit}${type ? `&type=${type}` : ""}`);
  expect(res.body?.nextCursor, res.text).toEqual(expect.any(String));
  expect(res.body.data.length, res.text).toBeGreaterThan(0);
  // The position after the last event of the page, as a place in the whole list.
  const matching = fx.events.flatMap((e, i) => (type === undefined || e.type === type ? [i] : []));
  const after = matching[res.body.data.length - 1]! + 1;
  return { token: res.body.nextCursor, after, ...(type ? { type } : {}) };
}

/** Fixtures made in this file so far: each gets phone numbers of its own. */
let fixtureCount = 0;

/**
 * A fresh org, open around the clock (capacity 2, no notice, 30 days ahead),
 * with two accounts (the first with a phone), three contacts (two sharing a
 * phone), and incidents in every state: booked with a phone and linked to an
 * account, booked with a foreign-looking phone, cancelled, a full slot's two
 * bookings, one in progress and one over (both inserted: the API cannot book
 * them); holds live, lapsing, released and lapsed (inserted); and cursors of both lists.
 */
export async function newFixture(): Promise<Fixture> {
  const name = "Fuzz Org";
  const tenant = await openTenant(name, { capacity: 2, horizonDays: 30 });
  const tag = tenant.orgId.slice(-6);
  // Before the key's first request: the catalogue is cached with the key.
  const service = await addService(tenant, { name: `Fuzz service ${tag}`, durationMinutes: 90, bufferMinutes: 15 });
  const line = String(1000 + (fixtureCount++ % 9000));
  const spelled = { first: `(917) 555-${line}`, account: `+1 212 555 ${line}`, uk: `+44 20 7946 ${line}` };
  const phones = [e164(spelled.first), e164(spelled.account), e164(spelled.uk)];
  expect(phones.every((phone) => phone !== null)).toBe(true);
  const accounts = [
    await addAccount(tenant, `Fuzz Account ${tag}`, { mobilePhone: spelled.account, mobileE164: phones[1] }),
    await addAccount(tenant, `Ünïque Ñame ${tag}`),
  ];
  const fx: Fixture = {
    tenant,
    accounts: accounts.map(({ id, name, createdAt }, i) => ({
      id,
      name,
      createdAt,
      phones: i === 0 ? [phones[1]!] : [],
    })),
    contacts: new Map(),
    leads: new Set(),
    incidents: new Map(),
    holds: new Map(),
    plans: new Map(),
    phones: phones as [string, string, string],
    fullSlot: "",
    freshHour: 100,
    events: [],
    cursors: {
      plain: "",
      account: "",
      phone: "",
      incidents: {} as Fixture["cursors"]["incidents"],
      events: {} as Fixture["cursors"]["events"],
    },
    keys: new Map(),
    requests: 0,
    services: {
      services: [
        {
          id: service.id,
          name: service.name,
          durationMinutes: 90,
          bufferMinutes: 15,
          arrivalWindowMinutes: 0,
          skills: [],
          keywords: [],
          default: false,
          active: true,
        },
      ],
    },
    context: {
      organization: { id: tenant.orgId, name },
      timeZone: "UTC",
      services: [{ id: service.id, name: service.name, durationMinutes: 90, arrivalWindowMinutes: 0, keywords: [] }],
    },
  };
  const accountId = fx.accounts[0]!.id;
  await seedContacts(fx, [
    { firstName: "Seed", accountId, mobilePhone: spelled.first },
    { lastName: "Seed", accountId, businessPhone: `+1 917 555 ${line}` },
    { email: `seed-${tag}@fuzz.example`, businessPhone: spelled.uk },
  ]);
  fx.cursors.plain = await nextCursor(fx, "");
  fx.cursors.account = await nextCursor(fx, `&accountId=${accountId}`);
  fx.cursors.phone = await nextCursor(fx, `&phone=${encodeURIComponent(phones[0]!)}`);

  await book(fx, 48, { clientName: accounts[0]!.name, phone: spelled.first, notes: `Gate code ${line}` });
  await book(fx, 49, { clientName: "Walk-in caller", phone: spelled.uk });
  const cancelled = await book(fx, 50, { clientName: "Changed mind", phone: spelled.first });
  await change(fx, cancelled.id, "cancel", { reason: "Seed cancel" });
  const moved = await book(fx, 53, { clientName: "Moved once" });
  await change(fx, moved.id, "reschedule", { dateTime: slotIn(54) });
  const lead = await seedWrite(fx, "lead.created", "/api/v1/leads", { firstName: "Seed", companyName: tag }, (a) => a);
  fx.leads.add(lead.id as string);
  fx.fullSlot = (await book(fx, 51, { clientName: "Full slot one" })).dateTime;
  await book(fx, 51, { clientName: "Full slot two", dateTime: fx.fullSlot });
  await insertStarted(fx, 0, phones[0]!);
  await insertStarted(fx, 5, phones[0]!);
  // Holds: two live for the run (one beside a booking, one alone), one that lapses within the minute, one
  // released, one lapsed already.
  await seedHold(fx, 48, 15);
  await seedHold(fx, 56, 15);
  await seedHold(fx, 57, 1);
  await seedHold(fx, 58, 15, true);
  await insertLapsed(fx, 59);
  await insertPlan(fx, { phone: phones[0]!, accountId: null });
  await insertPlan(fx, { phone: null, accountId: accountId, cancelled: true });
  await insertPlan(fx, { phone: phones[2]!, accountId: null });

  fx.cursors.incidents = {
    plain: await incidentCursor(fx, ""),
    status: await incidentCursor(fx, "&status=scheduled"),
    phone: await incidentCursor(fx, `&phone=${encodeURIComponent(phones[0]!)}`),
  };
  fx.cursors.events = {
    plain: await eventCursor(fx),
    typed: await eventCursor(fx, "incident.created"),
    end: await eventCursor(fx, undefined, 200),
  };
  expect(fx.cursors.events.end.after).toBe(fx.events.length);
  return fx;
}

const INCIDENT_ROWS = "SELECT * FROM incidents WHERE org_id = ? ORDER BY id";
const HOLD_ROWS = "SELECT * FROM holds WHERE org_id = ? ORDER BY id";

export async function newForeign(): Promise<Foreign> {
  const fx = await newFixture();
  return {
    tenant: fx.tenant,
    accountId: fx.accounts[0]!.id,
    accountName: fx.accounts[0]!.name,
    contactId: [...fx.contacts.keys()][0]!,
    cursor: fx.cursors.plain,
    incidentIds: [...fx.incidents.keys()],
    planIds: [...fx.plans.keys()],
    incidentCursor: fx.cursors.incidents.plain.token,
    eventCursor: fx.cursors.events.plain.token,
    phones: fx.phones,
    incidentRows: (await env.DB.prepare(INCIDENT_ROWS).bind(fx.tenant.orgId).all()).results,
    holdIds: [...fx.holds.keys()],
    holdRows: (await env.DB.prepare(HOLD_ROWS).bind(fx.tenant.orgId).all()).results,
  };
}

/**
 * Books an incident for a request that needs one still scheduled (a cancel or
 * a reschedule to come), at the next hour with a free place; returns its id.
 */
export async function bookFresh(fx: Fixture): Promise<string> {
  for (;;) {
    const hours = fx.freshHour;
    fx.freshHour = fx.freshHour >= 700 ? 100 : fx.freshHour + 1;
    const before = Date.now();
    const res = await send(fx, "/api/v1/ai-agent/create-incident", {
      body: { dateTime: slotIn(hours), clientName: "Fresh booking", insectName: "ants", phone: fx.phones[0] },
    });
    if (res.status === 409) continue;
    expect(res.status, res.text).toBe(200);
    const view = recordIncident(fx, res.body);
    fx.events.push({ type: "incident.created", data: view, before, after: Date.now() });
    return view.id;
  }
}

/** An incident row as the API shows it (the fuzzed orgs are in UTC). */
function viewOfRow(row: Record<string, unknown>): IncidentView {
  const time = (t: unknown) => (t === null ? null : iso(t as number));
  return {
    id: row.id as string,
    status: row.status as IncidentView["status"],
    dateTime: iso(row.starts_at as number),
    clientName: row.client_name as string,
    insectName: row.insect_name as string,
    accountId: row.account_id as string | null,
    phone: row.phone as string | null,
    notes: row.notes as string | null,
    serviceId: row.service_id as string | null,
    technicianId: row.technician_id as string | null,
    postalCode: row.postal_code as string | null,
    appointment: utcAppointment(row.starts_at as number),
    arrivalWindow: row.arrival_window_minutes
      ? utcAppointment(row.starts_at as number, (row.arrival_window_minutes as number) * MINUTE)
      : null,
    createdAt: iso(row.created_at as number),
    updatedAt: iso(row.updated_at as number),
    cancelledAt: time(row.cancelled_at),
    cancelReason: row.cancel_reason as string | null,
    closedAt: time(row.closed_at),
    outcomeNote: row.outcome_note as string | null,
    planId: row.plan_id as string | null,
  };
}

/**
 * After a change request: every incident of the org is stored exactly as the
 * answers so far announced it (so a refused or failed change changed
 * nothing, and a 200 changed what it says and no more), and the other org's
 * incidents are exactly as they were seeded.
 */
export async function expectIncidentsAsAnswered(fx: Fixture, foreign: Foreign) {
  const [own, other, counts] = await env.DB.batch([
    env.DB.prepare(INCIDENT_ROWS).bind(fx.tenant.orgId),
    env.DB.prepare(INCIDENT_ROWS).bind(foreign.tenant.orgId),
    bothCounts(fx.tenant.orgId, foreign.tenant.orgId),
  ]);
  keepCounts(fx, counts!);
  const stored = Object.fromEntries((own!.results as Record<string, unknown>[]).map((row) => [row.id, viewOfRow(row)]));
  expectSame(stored, Object.fromEntries(fx.incidents), "incidents stored otherwise than answered");
  expectSame(other!.results, foreign.incidentRows, "the other org's incidents changed");
}

/**
 * Whether two JSON values are equal as toEqual sees them (a member that is
 * undefined is one that is absent). Plain data only: objects compare by their
 * own members.
 */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) || Array.isArray(b))
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  const [x, y] = [a as Record<string, unknown>, b as Record<string, unknown>];
  for (const key in x) if (x[key] !== undefined && !sameJson(x[key], y[key])) return false;
  for (const key in y) if (y[key] !== undefined && x[key] === undefined) return false;
  return true;
}

/**
 * `expect(actual, message).toEqual(expected)` for JSON data, checked first by
 * sameJson (fast on the hundreds of rows read back after each fuzz request);
 * only a difference pays for toEqual and its diff.
 */
function expectSame(actual: unknown, expected: unknown, message: string) {
  if (!sameJson(actual, expected)) expect(actual, message).toEqual(expected);
}

/**
 * After a hold-slot or release-hold request: every hold of the org is stored
 * exactly as the answers so far announced it — its place, and its expiry as
 * answered, or once released an expiry of 0 and an end between the release's
 * clocks (never after its own expiry) — and the other org's holds are exactly
 * as they were seeded.
 */
export async function expectHoldsAsAnswered(fx: Fixture, foreign: Foreign) {
  const [own, other, counts] = await env.DB.batch([
    env.DB.prepare(HOLD_ROWS).bind(fx.tenant.orgId),
    env.DB.prepare(HOLD_ROWS).bind(foreign.tenant.orgId),
    bothCounts(fx.tenant.orgId, foreign.tenant.orgId),
  ]);
  keepCounts(fx, counts!);
  const stored = own!.results as Record<string, unknown>[];
  expectSame(
    stored.map((row) => row.id),
    [...fx.holds.keys()].sort(),
    "holds stored otherwise than answered",
  );
  for (const row of stored) {
    const hold = fx.holds.get(row.id as string)!;
    const { released } = hold;
    // The expectations below, as plain comparisons first: only a row that fails one pays for them.
    if (
      row.starts_at === hold.start &&
      row.ends_at === hold.end &&
      row.occupied_until === hold.end &&
      row.technician_id === null &&
      row.incident_id === null &&
      row.expires_at === (released ? 0 : hold.expiresAt) &&
      (released
        ? typeof row.ended_at === "number" &&
          row.ended_at >= Math.min(hold.expiresAt, released.before) &&
          row.ended_at <= Math.min(hold.expiresAt, released.after)
        : row.ended_at === null)
    )
      continue;
    expect(row, `hold ${row.id} stored otherwise than answered`).toMatchObject({
      starts_at: hold.start,
      ends_at: hold.end,
      occupied_until: hold.end,
      technician_id: null,
      incident_id: null,
      expires_at: released ? 0 : hold.expiresAt,
      ended_at: released ? expect.any(Number) : null,
    });
    if (released) {
      expect(row.ended_at as number, `hold ${row.id} ended before its release`).toBeGreaterThanOrEqual(
        Math.min(hold.expiresAt, released.before),
      );
      expect(row.ended_at as number, `hold ${row.id} ended after its release`).toBeLessThanOrEqual(
        Math.min(hold.expiresAt, released.after),
      );
    }
  }
  expectSame(other!.results, foreign.holdRows, "the other org's holds changed");
}

/** Fixtures for one property: the current one until its request budget is spent. */
export class Pool {
  readonly fixtures: Fixture[] = [];

  async current(): Promise<Fixture> {
    const last = this.fixtures.at(-1);
    if (last && last.requests < REQUESTS_PER_ORG) return last;
    const fx = await newFixture();
    this.fixtures.push(fx);
    return fx;
  }
}

const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** One character of the cursor replaced by another base64url character. */
function flip(cursor: string, n: number): string {
  const at = n % cursor.length;
  const next = BASE64URL[(BASE64URL.indexOf(cursor[at]!) + 1 + (Math.floor(n / 1024) % 63)) % 64]!;
  return cursor.slice(0, at) + next + cursor.slice(at + 1);
}

const toBase64url = (binary: string) => btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
const fromBase64url = (text: string) => atob(text.replaceAll("-", "+").replaceAll("_", "/"));

/**
 * A cursor (`base64url(JSON {t, i})` `.` `base64url(MAC)`, docs "Pagination")
 * decoded, changed the n-th way and encoded again: its position (`t`, `i`)
 * moved or retyped, its MAC changed, cut, lengthened, or swapped with the
 * one of `other` (another org's cursor), a member added, the MAC left out.
 */
export function forge(cursor: string, n: number, other: string): string {
  const [payload, mac] = cursor.split(".") as [string, string];
  const position = JSON.parse(fromBase64url(payload)) as { t: number; i: string };
  const withPosition = (changed: object) => `${toBase64url(JSON.stringify(changed))}.${mac}`;
  const macBytes = fromBase64url(mac);
  const withMac = (bytes: string) => `${payload}.${toBase64url(bytes)}`;
  const at = Math.floor(n / 16) % macBytes.length;
  const otherId = `${position.i.slice(0, -1)}${position.i.endsWith("0") ? "1" : "0"}`;
  switch (n % 16) {
    case 0:
      return withPosition({ ...position, t: position.t + 1 });
    case 1:
      return withPosition({ ...position, t: position.t - 1 });
    case 2:
      return withPosition({ ...position, t: String(position.t) });
    case 3:
      return withPosition({ ...position, t: 0 });
    case 4:
      return withPosition({ ...position, i: otherId });
    case 5:
      return withPosition({ ...position, i: position.i.toUpperCase() });
    case 6:
      return withMac(macBytes.slice(0, at) + String.fromCharCode(macBytes.charCodeAt(at) ^ 1) + macBytes.slice(at + 1));
    case 7:
      return `${payload}.${other.split(".")[1]}`;
    case 8:
      return withMac(macBytes.slice(0, -1));
    case 9:
      return withMac(`${macBytes}\u0000`);
    case 10:
      return withPosition({ ...position, s: "0000000000000000" });
    case 11:
      return withPosition({ ...position, x: 1 });
    case 12:
      return `${toBase64url(`${JSON.stringify(position).slice(0, -1)},"t":${position.t}}`)}.${mac}`;
    case 13:
      return payload;
    case 14:
      return `${payload}.`;
    default:
      return `${other.split(".")[0]}.${mac}`;
  }
}

/** The n-th spelling of an E.164 number: as is, grouped, national (read in the US), with punctuation. */
export function spell(number: string, n: number): string {
  const us = /^\+1(\d{3})(\d{3})(\d{4})$/.exec(number);
  const spellings = us
    ? [
        number,
        `+1 ${us[1]} ${us[2]} ${us[3]}`,
        `(${us[1]}) ${us[2]}-${us[3]}`,
        `${us[1]}.${us[2]}.${us[3]}`,
        `1-${us[1]}-${us[2]}-${us[3]}`,
        ` ${us[1]}${us[2]}${us[3]} `,
      ]
    : [number, `${number.slice(0, 3)} ${number.slice(3, 5)} ${number.slice(5)}`, `00${number.slice(1)}`];
  return spellings[n % spellings.length]!;
}

/** The n-th hold of the org (in the order they were made). */
export const nthHold = (fx: Fixture, n: number) => [...fx.holds.keys()][n % fx.holds.size]!;

/** A hold id spoiled the n-th way: upper case, a character more or less, prefixed again, or padded with spaces (trimmed: still the id). */
function spoilHold(id: string, n: number): string {
  switch (n % 5) {
    case 0:
      return id.toUpperCase();
    case 1:
      return `${id}x`;
    case 2:
      return id.slice(0, -1);
    case 3:
      return `hold_${id}`;
    default:
      return ` ${id}\t`;
  }
}

/** The n-th incident of the org (in booking order). */
export const nthIncident = (fx: Fixture, n: number) => [...fx.incidents.keys()][n % fx.incidents.size]!;

/** The n-th plan of the org (in the order they were made). */
export const nthPlan = (fx: Fixture, n: number) => [...fx.plans.keys()][n % fx.plans.size]!;

/**
 * The concrete value of a generated value: symbols become this fixture's ids,
 * cursors, phones and slot times. `target` is the incident a request's path
 * names (a held slot is its slot).
 */
export function resolve(value: unknown, fx: Fixture, foreign: Foreign, now: number, target?: string): unknown {
  if (!(value instanceof Sym)) return value;
  const account = fx.accounts[value.n % fx.accounts.length]!;
  switch (value.kind) {
    case "ownAccountId":
      return account.id;
    case "ownAccountName":
      return value.n % 3 === 2 ? ` ${account.name.toUpperCase()} ` : account.name;
    case "foreignAccountId":
      return foreign.accountId;
    case "foreignAccountName":
      return foreign.accountName;
    case "foreignContactId":
      return foreign.contactId;
    case "plainCursor":
      return fx.cursors.plain;
    case "accountCursor":
      return fx.cursors.account;
    case "foreignCursor":
      return foreign.cursor;
    case "flippedCursor":
      return flip(fx.cursors.plain, value.n);
    case "slot":
      return slotIn(value.n, now);
    case "ownIncidentId":
      return nthIncident(fx, value.n);
    case "freshIncidentId":
      throw new Error("a fresh incident is booked before the request (bookFresh), not resolved");
    case "foreignIncidentId":
      return foreign.incidentIds[value.n % foreign.incidentIds.length];
    case "ownPlanId":
      return nthPlan(fx, value.n);
    case "foreignPlanId":
      return foreign.planIds[value.n % foreign.planIds.length];
    case "heldSlot": {
      const held = target === undefined ? undefined : fx.incidents.get(target);
      return held ? held.dateTime : fx.incidents.get(nthIncident(fx, value.n))!.dateTime;
    }
    case "fullSlot":
      return fx.fullSlot;
    case "ownHoldId":
      return nthHold(fx, value.n);
    case "spoiledHoldId":
      return spoilHold(nthHold(fx, value.n), Math.floor(value.n / 7));
    case "foreignHoldId":
      return foreign.holdIds[value.n % foreign.holdIds.length];
    case "holdSlot":
      return iso(fx.holds.get(nthHold(fx, value.n))!.start);
    case "ownPhone":
      return spell(fx.phones[value.n % 3]!, Math.floor(value.n / 3));
    case "foreignPhone":
      return spell(foreign.phones[value.n % 3]!, Math.floor(value.n / 3));
    case "incidentCursor":
      return fx.cursors.incidents.plain.token;
    case "incidentStatusCursor":
      return fx.cursors.incidents.status.token;
    case "incidentPhoneCursor":
      return fx.cursors.incidents.phone.token;
    case "foreignIncidentCursor":
      return foreign.incidentCursor;
    case "flippedIncidentCursor":
      return flip(fx.cursors.incidents.plain.token, value.n);
    case "contactPhoneCursor":
      return fx.cursors.phone;
    case "eventCursor":
      return fx.cursors.events.plain.token;
    case "eventTypeCursor":
      return fx.cursors.events.typed.token;
    case "eventEndCursor":
      return fx.cursors.events.end.token;
    case "foreignEventCursor":
      return foreign.eventCursor;
    case "flippedEventCursor":
      return flip(fx.cursors.events.plain.token, value.n);
    case "forgedCursor":
      return forge(fx.cursors.plain, value.n, foreign.cursor);
    case "forgedIncidentCursor":
      return forge(fx.cursors.incidents.plain.token, value.n, foreign.incidentCursor);
    case "forgedEventCursor":
      return forge(fx.cursors.events.plain.token, value.n, foreign.eventCursor);
  }
}

export function resolveObject(
  body: Record<string, unknown>,
  fx: Fixture,
  foreign: Foreign,
  now: number,
  target?: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // defineProperty, so that a generated "__proto__" key stays an own key as it would in JSON.parse.
  for (const [key, value] of Object.entries(body))
    Object.defineProperty(out, key, {
      value: resolve(value, fx, foreign, now, target),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return out;
}

/** The answer of one operation, through HTTP or as an MCP tool result. */
export interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: fuzz answers are arbitrary JSON
  body: any;
  text: string;
  /** The id every problem document must carry (the response's X-Request-Id). */
  requestId: string | null;
}

export const answerOf = (res: ReadResponse): Answer => ({
  status: res.status,
  body: res.body,
  text: res.text,
  requestId: res.headers.get("X-Request-Id"),
});

/**
 * What every answer must be, whatever was sent: never a 5xx, never a 429
 * (the fuzz would then test the limiter), and every error a problem document
 * with the request's id; a validation failure lists well-formed field errors.
 * A replayed Idempotency-Key answer carries its first request's id.
 */
export function expectSane(answer: Answer, replay = false) {
  expect(answer.status, answer.text).toBeLessThan(500);
  expect(answer.status, `rate limited: the fuzz is testing the limiter, not the input (${answer.text})`).not.toBe(429);
  if (answer.status < 400) return;
  expect(isProblem(answer.body ?? {}), answer.text).toBe(true);
  expect(answer.body.status).toBe(answer.status);
  expect(answer.body).not.toHaveProperty("stack");
  if (!replay) expect(answer.body.requestId).toBe(answer.requestId);
  if (answer.body.code === "validation_failed") {
    expect(answer.status).toBe(422);
    expect(answer.body.errors, answer.text).toEqual(expect.arrayContaining([expect.anything()]));
    for (const error of answer.body.errors)
      expect(error).toEqual({
        path: expect.any(String),
        code: expect.stringMatching(/^[a-z_]+$/),
        message: expect.any(String),
      });
  }
}

/** An HTTP answer: sane, JSON or problem+json, with the request id header. */
export function expectSaneHttp(res: ReadResponse, replay = false) {
  expectSane(answerOf(res), replay);
  expect(res.headers.get("X-Request-Id")).toBeTruthy();
  expect(res.headers.get("Content-Type")).toBe(res.status >= 400 ? "application/problem+json" : "application/json");
}

/**
 * One MCP tools/call as the fixture's org (JSON-RPC over the Streamable HTTP
 * transport, JSON response). The transport must answer 200 with a result, never
 * a protocol error; a failed call is an isError result holding the problem
 * document (docs/api.md, "MCP"). Returns the operation's answer inside it.
 */
export async function callTool(fx: Fixture, tool: string, args: unknown, idempotencyKey?: string): Promise<Answer> {
  fx.requests++;
  const res = await mcpCall(fx.tenant, tool, args, {
    headers: idempotencyKey === undefined ? {} : { "Idempotency-Key": idempotencyKey },
  });
  expect(res.status, res.text).toBe(200);
  expect(res.body?.error, res.text).toBeUndefined();
  const { isError, body, text } = toolAnswer(res);
  const requestId = res.headers.get("X-Request-Id");
  if (isError) {
    expect(body.status, text).toBeGreaterThanOrEqual(400);
    return { status: body.status as number, body, text, requestId };
  }
  expect(res.body.result.structuredContent).toEqual(body);
  return { status: 200, body, text, requestId };
}

const counts = (org: string) =>
  ["leads", "contacts", "incidents", "holds", "plans", "accounts", "idempotency_keys"].map(
    (table) => `(SELECT count(*) FROM ${table} WHERE org_id = ${org})`,
  );
const COUNTS = `SELECT ${counts("?1").join(", ")}`;
// The org under test and the other org in one round trip (named columns: a batch reads rows as objects).
const BOTH_COUNTS = `SELECT ${[...counts("?1"), ...counts("?2")].map((count, i) => `${count} AS c${i}`).join(", ")}`;
const bothCounts = (orgId: string, otherOrgId: string) => env.DB.prepare(BOTH_COUNTS).bind(orgId, otherOrgId);
const splitCounts = (row: number[]): [Counts, Counts] => [asCounts(row.slice(0, 7)), asCounts(row.slice(7))];

/** The counts a read-back kept, if no request came after it; forgets them. */
function takeCounts(fx: Fixture): [Counts, Counts] | undefined {
  const read = fx.countsRead;
  fx.countsRead = undefined;
  return read?.requests === fx.requests ? read.both : undefined;
}

/** Keeps the counts a read-back read in its round trip, for expectStoredOnly. */
function keepCounts(fx: Fixture, result: D1Result) {
  const row = result.results[0] as Record<string, number>;
  fx.countsRead = {
    requests: fx.requests,
    both: splitCounts(Array.from({ length: 14 }, (_, i) => row[`c${i}`]!)),
  };
}
const asCounts = ([leads, contacts, incidents, holds, plans, accounts, keys]: number[]): Counts => ({
  leads: leads!,
  contacts: contacts!,
  incidents: incidents!,
  holds: holds!,
  plans: plans!,
  accounts: accounts!,
  keys: keys!,
});

export const countRows = async (orgId: string) =>
  asCounts((await env.DB.prepare(COUNTS).bind(orgId).raw<number[]>())[0]!);

async function countBoth(orgId: string, otherOrgId: string): Promise<[Counts, Counts]> {
  return splitCounts((await bothCounts(orgId, otherOrgId).raw<number[]>())[0]!);
}

const known = (fx: Fixture): Counts => ({
  leads: fx.leads.size,
  contacts: fx.contacts.size,
  incidents: fx.incidents.size,
  holds: fx.holds.size,
  plans: fx.plans.size,
  accounts: fx.accounts.length,
  keys: fx.keys.size,
});

/**
 * Runs one fuzz request and checks that it stored exactly what its answer
 * announced: the org's row counts grow by the creations and stored keys the
 * check recorded, and no more; the other org's do not change. Relative to the
 * previous count, so that after a failure every shrunk case is judged alone.
 */
export async function expectStoredOnly(
  fx: Fixture,
  foreign: Foreign,
  foreignCounts: Counts,
  request: () => Promise<void>,
) {
  fx.counts ??= await countRows(fx.tenant.orgId);
  const before = known(fx);
  fx.countsRead = undefined;
  let failure: unknown;
  try {
    await request();
  } catch (error) {
    failure = error;
  }
  const after = known(fx);
  const expected = Object.fromEntries(
    Object.entries(fx.counts).map(([table, n]) => [
      table,
      n + after[table as keyof Counts] - before[table as keyof Counts],
    ]),
  );
  const [actual, other] = takeCounts(fx) ?? (await countBoth(fx.tenant.orgId, foreign.tenant.orgId));
  fx.counts = actual;
  if (failure) throw failure;
  expectSame(actual, expected, "rows stored beyond what the answer announced");
  expectSame(other, foreignCounts, "rows stored in the other org");
}

const ids = async (table: string, orgId: string) =>
  new Set(
    (await env.DB.prepare(`SELECT id FROM ${table} WHERE org_id = ?`).bind(orgId).all<{ id: string }>()).results.map(
      (r) => r.id,
    ),
  );

/** After a property: the org's rows are exactly the ones its 2xx answers announced. */
export async function expectExactRows(fx: Fixture) {
  expect(await ids("leads", fx.tenant.orgId)).toEqual(fx.leads);
  expect(await ids("contacts", fx.tenant.orgId)).toEqual(new Set(fx.contacts.keys()));
  expect(await ids("incidents", fx.tenant.orgId)).toEqual(new Set(fx.incidents.keys()));
  expect(await ids("holds", fx.tenant.orgId)).toEqual(new Set(fx.holds.keys()));
  const keys = await env.DB.prepare("SELECT key FROM idempotency_keys WHERE org_id = ?")
    .bind(fx.tenant.orgId)
    .all<{ key: string }>();
  expect(new Set(keys.results.map((r) => r.key))).toEqual(new Set(fx.keys.keys()));
}

/**
 * Runs `check` `runs` times over `cases` (fixed seed), each against the current
 * fixture of a fresh pool and inside expectStoredOnly, then checks the
 * fixtures' rows; returns how often each status answered, so that a generator
 * that stopped reaching the operation shows.
 */
export async function runFuzz<T>(
  cases: fc.Arbitrary<T>,
  check: (fx: Fixture, c: T) => Promise<Answer>,
  foreign: Foreign,
  foreignCounts: Counts,
  runs = RUNS,
) {
  const pool = new Pool();
  const statuses = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(cases, async (c) => {
      const fx = await pool.current();
      await expectStoredOnly(fx, foreign, foreignCounts, async () => {
        const { status } = await check(fx, c);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      });
    }),
    { seed: FUZZ_SEED, numRuns: runs },
  );
  expect([...statuses.values()].reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(runs);
  for (const fx of pool.fixtures) await expectExactRows(fx);
  return statuses;
}

/** At least `share` of the answers had this status. */
export const expectShare = (statuses: Map<number, number>, status: number, share: number) =>
  expect(
    statuses.get(status) ?? 0,
    `${status} in ${JSON.stringify(Object.fromEntries(statuses))}`,
  ).toBeGreaterThanOrEqual(share * [...statuses.values()].reduce((a, b) => a + b, 0));

/** What a request carried, with every phone number in it also as E.164 (answers name a phone normalised). */
export const withNumbers = (sent: string, values: unknown[]) =>
  [sent, ...values.map((value) => (typeof value === "string" ? (e164(value) ?? "") : ""))].join(" ");

/**
 * The other org's identifiers and data: none may appear in an answer unless
 * the request itself carried it (pass withNumbers(…) when it carried phones).
 */
export function expectNothingOf(foreign: Foreign, answer: Answer, sent: string) {
  for (const secret of [
    foreign.tenant.orgId,
    foreign.tenant.apiKey,
    foreign.accountId,
    foreign.accountName,
    foreign.contactId,
    foreign.cursor,
    ...foreign.incidentIds,
    ...foreign.holdIds,
    foreign.incidentCursor,
    foreign.eventCursor,
    ...foreign.phones,
  ]) {
    if (!sent.includes(secret)) expect(answer.text.includes(secret), `${answer.text} holds ${secret}`).toBe(false);
  }
}
