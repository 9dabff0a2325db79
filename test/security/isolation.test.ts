// Tenant isolation matrix (docs/api.md, "Authentication"): two organisations, each with
// accounts, contacts, leads, bookings (incidents with phones), live holds, cursors of both
// lists and a stored Idempotency-Key; both share one phone number besides.
// Each in turn calls every operation of the operation samples
// (test/support/operations.ts), over HTTP and as an MCP tool, with its own
// credentials aimed at the other's ids, emails, names, phones, cursors, slots
// and key, and with swapped credentials (its key with the other's org id, the
// other's key with its org id). Another org's record is indistinguishable from
// a missing one (404 / not listed / invalid cursor / 422 not_found for a hold), its
// bookings and holds hold none of the caller's places, cancelling or moving its
// incident is a 404 and releasing or booking on its hold a 422 that change no
// byte of them, swapped credentials get the one uniform 401 — and not a byte of
// the other org's data (ids, names, emails, phones, addresses, cursors, keys,
// its random tag) appears in any answer, while its rows stay exactly as they were.
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { plans } from "../../drizzle/schema";
import { CliError } from "../../src/cli/errors";
import { type Flags, WEBHOOK_COMMANDS } from "../../src/cli/webhooks";
import type { Bindings } from "../../src/env";
import { newId } from "../../src/lib/ids";
import { normalizePhone } from "../../src/lib/phones";
import { deliverBatch } from "../../src/webhooks/deliver";
import type { DeliveryMessage } from "../../src/webhooks/queue";
import { addService } from "../support/catalogue";
import { type Credentials, credentialsOf, everything, type ReadResponse } from "../support/http";
import { mcpCall, mcpList, toolAnswer } from "../support/mcp";
import { type Fixture, httpRequest, OPERATIONS, pathTemplate, TOOLS, toolArguments } from "../support/operations";
import { expectProblem } from "../support/problem";
import { call } from "../support/request";
import { addAccount, db, openTenant, type Tenant } from "../support/tenants";
import { HOUR, hoursAhead, iso, slotIn } from "../support/time";

interface Profile {
  tenant: Tenant;
  tag: string;
  accounts: { id: string; name: string }[];
  contacts: { id: string; email: string }[];
  /** Booked slot starts: one probed over HTTP, one over MCP. */
  slots: [string, string];
  cursors: { plain: string; account: string };
  /** Its incidents (the first with its own phone, the second with the shared one) and cursors of their list. */
  incidents: { id: string; dateTime: string }[];
  /** Its live holds (15 minutes) at slots nobody books: one probed over HTTP, one over MCP. */
  holds: { id: string; dateTime: string }[];
  /** Its plan, its phone the org's own (inserted as create-plan stores one, its next visit far off). */
  plans: { id: string }[];
  incidentCursors: { plain: string; scheduled: string };
  /** The ids of the events its seeding recorded, and cursors of their list. */
  events: string[];
  eventCursors: { plain: string; typed: string };
  /** A phone only this org has (E.164, and as its contact and account spell it). */
  phone: { e164: string; spelled: string };
  /** Idempotency-Keys it stored leads under (one to be tried over HTTP, one over MCP), and those leads. */
  keys: [string, string];
  keyedLeads: string[];
  /** Its one service (not the default). */
  service: string;
  /** Every identifier and datum of the org that a client could recognise. */
  secrets: string[];
}

// Each org stores a lead under its own key with this same body; the other then sends that key and body.
const SHARED_LEAD = { companyName: "Same body in both orgs" };
// Both orgs have a contact and an incident with this number: each must find only its own.
const SHARED_PHONE = "+16465550000";

async function as(tenant: Tenant, path: string, json?: unknown, headers: Record<string, string> = {}) {
  const res = await call(tenant, path, { body: json, headers });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** An org open around the clock with capacity 1, two accounts, three contacts, three leads (two under keys), two bookings, two holds. */
async function seed(label: string, slots: [string, string], holdSlots: [string, string]): Promise<Profile> {
  const tag = `${label}${crypto.randomUUID().replaceAll("-", "").slice(0, 10)}`;
  const digits = String(Math.floor(Math.random() * 1e7)).padStart(7, "0");
  // 646-555-1xxx for A, 2xxx for B: never the same number.
  const spelled = `(646) 555-${label === "a" ? 1 : 2}${digits.slice(0, 3)}`;
  const phone = { e164: normalizePhone(spelled, "US")!, spelled };
  expect(phone.e164).toMatch(/^\+1646555\d{4}$/);
  const tenant = await openTenant(`Isolation ${tag}`, { capacity: 1 });
  // Before the key's first request (the catalogue is cached with it); not the default: bookings stay plain.
  const service = await addService(tenant, { name: `Service ${tag}`, durationMinutes: 60, keywords: [`kw${tag}`] });
  const accounts = [
    await addAccount(tenant, `Holdings ${tag}`, {
      email: `acct-${tag}@example.com`,
      mobilePhone: `+1 555 ${digits}`,
      street1: `${tag} Main Street`,
      city: `City${tag}`,
    }),
    await addAccount(tenant, `Pests ${tag}`, {
      businessPhone: `+44 20 ${digits}`,
      postalCode: `P${digits}`,
      mobilePhone: spelled,
      mobileE164: phone.e164,
    }),
  ];
  const contactBodies = [
    {
      firstName: `First${tag}`,
      lastName: `Last${tag}`,
      email: `contact-${tag}@example.com`,
      mobilePhone: `+33 6 ${digits}`,
      accountId: accounts[0]!.id,
    },
    {
      firstName: `Second${tag}`,
      email: `second-${tag}@example.com`,
      accountId: accounts[0]!.id,
      mobilePhone: spelled,
    },
    {
      lastName: `Third${tag}`,
      businessPhone: `+49 30 ${digits}`,
      street1: `${tag} Side Road`,
      mobilePhone: SHARED_PHONE,
    },
  ];
  const contacts = [];
  for (const body of contactBodies)
    contacts.push({ id: (await as(tenant, "/api/v1/contacts", body)).id as string, email: body.email ?? "" });
  const lead = await as(tenant, "/api/v1/leads", {
    firstName: `Lead${tag}`,
    companyName: `Company${tag}`,
    email: `lead-${tag}@example.com`,
  });
  const keys: [string, string] = [`isolation-http-key-${label}`, `isolation-mcp-key-${label}`];
  const keyedLeads: string[] = [];
  for (const key of keys)
    keyedLeads.push((await as(tenant, "/api/v1/leads", SHARED_LEAD, { "Idempotency-Key": key })).id);
  const incidents = [];
  for (const [i, dateTime] of slots.entries())
    incidents.push(
      await as(tenant, "/api/v1/ai-agent/create-incident", {
        dateTime,
        clientName: accounts[0]!.name,
        insectName: `Insect${tag}`,
        phone: i === 0 ? spelled : SHARED_PHONE,
        notes: `Notes${tag}`,
      }),
    );
  expect(incidents.map((i) => i.accountId)).toEqual([accounts[0]!.id, accounts[0]!.id]);
  expect(incidents.map((i) => i.phone)).toEqual([phone.e164, SHARED_PHONE]);
  const holds = [];
  for (const dateTime of holdSlots) {
    const held = await as(tenant, "/api/v1/ai-agent/hold-slot", { dateTime, holdMinutes: 15 });
    expect(held.slot).toMatchObject({ start: dateTime, remaining: 0 });
    holds.push({ id: held.holdId as string, dateTime });
  }
  const plan = {
    id: newId("plan"),
    orgId: tenant.orgId,
    everyCount: 1,
    everyUnit: "month" as const,
    clientName: accounts[0]!.name,
    insectName: `Insect${tag}`,
    phone: phone.e164,
    accountId: accounts[0]!.id,
    localTime: "10:00",
    firstVisitDate: "2026-01-01",
    visitsMade: 1,
    nextDueDate: "2999-01-01",
    decideAt: Date.parse("2998-12-18T00:00:00Z"),
    createdAt: Date.now(),
    updatedAt: Date.now(),
  };
  await db().insert(plans).values(plan);
  const cursors = {
    plain: (await as(tenant, "/api/v1/contacts?limit=1")).nextCursor as string,
    account: (await as(tenant, `/api/v1/contacts?limit=1&accountId=${accounts[0]!.id}`)).nextCursor as string,
  };
  const incidentCursors = {
    plain: (await as(tenant, "/api/v1/incidents?limit=1")).nextCursor as string,
    scheduled: (await as(tenant, "/api/v1/incidents?limit=1&status=scheduled")).nextCursor as string,
  };
  expect(Object.values(incidentCursors)).toEqual([expect.any(String), expect.any(String)]);
  // One event per change: three contacts, three leads, two bookings (holds are not events).
  const events = ((await as(tenant, "/api/v1/events?limit=200")).data as { id: string }[]).map((e) => e.id);
  expect(events).toHaveLength(8);
  const eventCursors = {
    plain: (await as(tenant, "/api/v1/events?limit=1")).nextCursor as string,
    typed: (await as(tenant, "/api/v1/events?limit=1&type=lead.created")).nextCursor as string,
  };
  expect(Object.values(eventCursors)).toEqual([expect.any(String), expect.any(String)]);
  const secrets = [
    tag,
    tenant.orgId,
    tenant.apiKey,
    tenant.keyId,
    digits,
    lead.id,
    ...keyedLeads,
    cursors.plain,
    cursors.account,
    ...Object.values(incidentCursors),
    ...events,
    ...Object.values(eventCursors),
    phone.e164,
    phone.spelled,
    `Notes${tag}`,
    ...accounts.flatMap((a) => [a.id, a.name]),
    service.id,
    service.name,
    ...contacts.map((c) => c.id),
    ...incidents.map((i) => i.id),
    ...holds.map((h) => h.id),
    plan.id,
    ...contactBodies.flatMap((body) => Object.values(body).filter((v) => v.includes(tag) || v.includes(digits))),
  ];
  return {
    tenant,
    tag,
    accounts: accounts.map(({ id, name }) => ({ id, name })),
    service: service.id,
    contacts,
    slots,
    cursors,
    incidents: incidents.map(({ id, dateTime }) => ({ id, dateTime })),
    holds,
    plans: [{ id: plan.id }],
    incidentCursors,
    events,
    eventCursors,
    phone,
    keys,
    keyedLeads,
    secrets,
  };
}

const profiles: Record<"A" | "B", Profile> = {} as Record<"A" | "B", Profile>;
let uniform401: Record<string, unknown>;

beforeAll(async () => {
  // Interleaved slots two days ahead, from one clock reading (an hour may turn between the seeds).
  const now = Date.now();
  profiles.A = await seed("a", [slotIn(49, now), slotIn(51, now)], [slotIn(53, now), slotIn(55, now)]);
  profiles.B = await seed("b", [slotIn(50, now), slotIn(52, now)], [slotIn(54, now), slotIn(56, now)]);
  // The one 401 body (minus its requestId) every credential failure must answer.
  const { requestId: _, ...body } = (
    await call({ apiKey: `fsk_${"0".repeat(40)}`, orgId: profiles.A.tenant.orgId }, "/api/v1/contacts")
  ).body;
  uniform401 = body;
});

/** Nothing of `victim` in anything `res` holds, unless the request itself carried it. */
function expectNothingOf(victim: Profile, res: ReadResponse, sent: string) {
  const bytes = everything(res);
  for (const secret of victim.secrets)
    if (!sent.includes(secret)) expect(bytes.includes(secret), `${secret} of the other org in ${bytes}`).toBe(false);
}

const expectEmptyPage = (res: ReadResponse) => {
  expect(res.status, res.text).toBe(200);
  expect(res.body).toEqual({ data: [], hasMore: false, nextCursor: null });
};

const expectInvalidCursor = (res: ReadResponse) => {
  expectProblem(res, 422, "validation_failed");
  expect(res.body.errors).toEqual([{ path: "cursor", code: "invalid_cursor", message: expect.any(String) }]);
};

const expectEmptyToolPage = (res: ReadResponse) =>
  expect(toolAnswer(res).body).toEqual({ data: [], hasMore: false, nextCursor: null });

const expectToolInvalidCursor = (res: ReadResponse) =>
  expect(toolAnswer(res)).toMatchObject({
    isError: true,
    status: 422,
    body: { errors: [{ path: "cursor", code: "invalid_cursor" }] },
  });

/** A listed page holds only the caller's contacts. */
const expectOwnContacts = (ids: string[], caller: Profile, victim: Profile) => {
  expect(ids.length).toBeGreaterThan(0);
  for (const id of ids) expect(caller.contacts.map((c) => c.id)).toContain(id);
  for (const contact of victim.contacts) expect(ids).not.toContain(contact.id);
};

/** What a caller sends: a path and body (HTTP, a POST when there is a body), a tool call or the tool list (MCP). */
type Sent =
  | { path: string; body?: unknown; headers?: Record<string, string> }
  | { tool: string; args: Record<string, unknown>; headers?: Record<string, string> }
  | { toolList: true };

interface Case {
  name: string;
  send(caller: Profile, victim: Profile): Sent;
  expect(res: ReadResponse, caller: Profile, victim: Profile): void;
  /** The other org's incident the request aims to change: its row is read back, byte for byte the same. */
  changes?: (victim: Profile) => string;
  /** The other org's hold the request aims to release or use: its row is read back, byte for byte the same. */
  changesHold?: (victim: Profile) => string;
  /** What else the request counts as carrying (a phone it sent in another spelling, as the answer normalises it). */
  carries?: (victim: Profile) => string;
}

function perform(who: Credentials, sent: Sent): Promise<ReadResponse> {
  if ("toolList" in sent) return mcpList(who);
  if ("tool" in sent) return mcpCall(who, sent.tool, sent.args, { headers: sent.headers });
  return call(who, sent.path, { body: sent.body, headers: sent.headers });
}

/** The sampled operation a request performs, and how ("HTTP cancel_incident", "MCP cancel_incident"). */
function operationOf(sent: Sent): string | undefined {
  if ("toolList" in sent) return undefined;
  if ("tool" in sent) return TOOLS.includes(sent.tool) ? `MCP ${sent.tool}` : undefined;
  const method = sent.body === undefined ? "GET" : "POST";
  const path = sent.path.split("?")[0]!;
  const op = OPERATIONS.find(
    (o) => o.method === method && new RegExp(`^${pathTemplate(o).replaceAll("{id}", "[^/]+")}$`).test(path),
  );
  return op && `HTTP ${op.tool}`;
}

const incidentRow = async (id: string) =>
  (await env.DB.prepare("SELECT * FROM incidents WHERE id = ?").bind(id).all()).results;
const holdRow = async (id: string) => (await env.DB.prepare("SELECT * FROM holds WHERE id = ?").bind(id).all()).results;

/**
 * The call context of the caller's own org: its id and name, its one service,
 * and its next slot — the next whole hour of its around-the-clock schedule,
 * which neither org has booked or held, with its one place.
 */
const expectOwnContext = (body: Record<string, unknown>, caller: Profile) => {
  expect(body.organization).toEqual({ id: caller.tenant.orgId, name: `Isolation ${caller.tag}` });
  expect(body.timeZone).toBe("UTC");
  expect(body.services).toEqual([
    {
      id: caller.service,
      name: `Service ${caller.tag}`,
      durationMinutes: 60,
      arrivalWindowMinutes: 0,
      keywords: [`kw${caller.tag}`],
    },
  ]);
  const next = hoursAhead(0, Date.parse(body.now as string));
  expect(body.nextAvailable).toMatchObject({ start: iso(next), end: iso(next + HOUR), remaining: 1, serviceId: null });
};

const expectHoldNotFound = (res: ReadResponse) => {
  expectProblem(res, 422, "validation_failed");
  expect(res.body.errors).toEqual([{ path: "holdId", code: "not_found", message: expect.any(String) }]);
};

const emptyCaller = (phone: string) => ({ phone, contacts: [], accounts: [], upcomingIncidents: [], plans: [] });

/**
 * The board of a day (crew mode: one row) holds the caller's visits and live
 * holds of that day, every one of them, and none of the other org's.
 */
const expectOwnBoard = (
  body: { date: string; rows: { visits: { id: string }[]; holds: { start: string }[] }[] },
  caller: Profile,
  victim: Profile,
) => {
  expect(body.rows).toHaveLength(1);
  const [{ visits, holds }] = body.rows as [(typeof body.rows)[number]];
  const onThatDay = <T extends { dateTime: string }>(items: T[]) =>
    items.filter((i) => i.dateTime.startsWith(body.date));
  expect(visits.map((v) => v.id).sort()).toEqual(
    onThatDay(caller.incidents)
      .map((i) => i.id)
      .sort(),
  );
  expect(holds.map((h) => h.start).sort()).toEqual(
    onThatDay(caller.holds)
      .map((h) => h.dateTime)
      .sort(),
  );
  for (const incident of victim.incidents) expect(visits.map((v) => v.id)).not.toContain(incident.id);
};

/** A listed page of events holds every event the caller's seeding recorded, and none of the other org's. */
const expectOwnEvents = (ids: string[], caller: Profile, victim: Profile) => {
  for (const id of caller.events) expect(ids).toContain(id);
  for (const id of victim.events) expect(ids).not.toContain(id);
};

/** A listed page of incidents holds only the caller's. */
const expectOwnIncidents = (ids: string[], caller: Profile, victim: Profile) => {
  for (const incident of caller.incidents) expect(ids).toContain(incident.id);
  for (const incident of victim.incidents) expect(ids).not.toContain(incident.id);
};

/**
 * The probes of every sampled operation (test/support/operations.ts),
 * by tool, each over HTTP and as an MCP tool. In this order: the lists of events
 * and incidents first, as the caller's incidents booked below (as the other
 * org's client) carry the other org's account name, and so do the events that
 * record them; the other org's booked slots are checked before the caller books them.
 */
const PROBES: Record<string, Case[]> = {
  get_board: [
    {
      name: "GET /board?date={the day of the other org's visit} → only its own visits and holds of that day",
      send: (_c, v) => ({ path: `/api/v1/board?date=${v.slots[0].slice(0, 10)}` }),
      expect: (res, c, v) => {
        expect(res.status, res.text).toBe(200);
        expectOwnBoard(res.body, c, v);
      },
    },
    {
      name: "MCP get_board {the day of the other org's hold} → only its own visits and holds of that day",
      send: (_c, v) => ({ tool: "get_board", args: { date: v.holds[0]!.dateTime.slice(0, 10) } }),
      expect: (res, c, v) => expectOwnBoard(toolAnswer(res).body as Parameters<typeof expectOwnBoard>[0], c, v),
    },
  ],
  list_events: [
    {
      name: "GET /events → only the caller's events",
      send: () => ({ path: "/api/v1/events?limit=200" }),
      expect: (res, c, v) => {
        expect(res.status, res.text).toBe(200);
        expectOwnEvents(
          res.body.data.map((x: { id: string }) => x.id),
          c,
          v,
        );
      },
    },
    {
      name: "GET /events?type=lead.created → only the caller's lead events",
      send: () => ({ path: "/api/v1/events?limit=200&type=lead.created" }),
      expect: (res, _c, v) => {
        expect(res.status, res.text).toBe(200);
        const ids = res.body.data.map((x: { id: string }) => x.id);
        expect(ids.length).toBeGreaterThanOrEqual(3);
        for (const id of v.events) expect(ids).not.toContain(id);
      },
    },
    {
      name: "MCP list_events {} → only the caller's events",
      send: () => ({ tool: "list_events", args: { limit: 200 } }),
      expect: (res, c, v) =>
        expectOwnEvents(
          (toolAnswer(res).body.data as { id: string }[]).map((x) => x.id),
          c,
          v,
        ),
    },
    {
      name: "GET /events?cursor={the other org's cursor} → 422 invalid_cursor",
      send: (_c, v) => ({ path: `/api/v1/events?cursor=${v.eventCursors.plain}` }),
      expect: expectInvalidCursor,
    },
    {
      name: "GET /events?type=lead.created&cursor={the other org's cursor for that filter} → 422 invalid_cursor",
      send: (_c, v) => ({ path: `/api/v1/events?type=lead.created&cursor=${v.eventCursors.typed}` }),
      expect: expectInvalidCursor,
    },
    {
      name: "MCP list_events {cursor: the other org's cursor} → isError 422 invalid_cursor",
      send: (_c, v) => ({ tool: "list_events", args: { cursor: v.eventCursors.plain } }),
      expect: expectToolInvalidCursor,
    },
  ],
  list_incidents: [
    {
      name: "GET /incidents → only the caller's incidents",
      send: () => ({ path: "/api/v1/incidents?limit=200" }),
      expect: (res, c, v) =>
        expectOwnIncidents(
          res.body.data.map((x: { id: string }) => x.id),
          c,
          v,
        ),
    },
    {
      name: "MCP list_incidents {} → only the caller's incidents",
      send: () => ({ tool: "list_incidents", args: { limit: 200 } }),
      expect: (res, c, v) =>
        expectOwnIncidents(
          (toolAnswer(res).body.data as { id: string }[]).map((x) => x.id),
          c,
          v,
        ),
    },
    {
      name: "GET /incidents?phone={the other org's phone} → empty page",
      send: (_c, v) => ({ path: `/api/v1/incidents?phone=${encodeURIComponent(v.phone.spelled)}` }),
      expect: expectEmptyPage,
      carries: (v) => v.phone.e164,
    },
    {
      name: "GET /incidents?phone={the phone both orgs have} → the caller's incident only",
      send: () => ({ path: `/api/v1/incidents?phone=${encodeURIComponent(SHARED_PHONE)}` }),
      expect: (res, c) => expect(res.body.data.map((x: { id: string }) => x.id)).toEqual([c.incidents[1]!.id]),
    },
    {
      name: "GET /incidents?accountId={the other org's account} → empty page",
      send: (_c, v) => ({ path: `/api/v1/incidents?accountId=${v.accounts[0]!.id}` }),
      expect: expectEmptyPage,
    },
    {
      name: "GET /incidents?cursor={the other org's cursor} → 422 invalid_cursor",
      send: (_c, v) => ({ path: `/api/v1/incidents?cursor=${v.incidentCursors.plain}` }),
      expect: expectInvalidCursor,
    },
    {
      name: "GET /incidents?status=scheduled&cursor={the other org's cursor for that filter} → 422 invalid_cursor",
      send: (_c, v) => ({ path: `/api/v1/incidents?status=scheduled&cursor=${v.incidentCursors.scheduled}` }),
      expect: expectInvalidCursor,
    },
    {
      name: "MCP list_incidents {phone: the other org's phone} → empty page",
      send: (_c, v) => ({ tool: "list_incidents", args: { phone: v.phone.e164 } }),
      expect: expectEmptyToolPage,
    },
    {
      name: "MCP list_incidents {cursor: the other org's cursor} → isError 422 invalid_cursor",
      send: (_c, v) => ({ tool: "list_incidents", args: { cursor: v.incidentCursors.plain } }),
      expect: expectToolInvalidCursor,
    },
  ],
  list_services: [
    {
      name: "GET /services → only its own service",
      send: () => ({ path: "/api/v1/services" }),
      expect: (res, c) => {
        expect(res.status, res.text).toBe(200);
        expect(res.body.services.map((x: { id: string }) => x.id)).toEqual([c.service]);
      },
    },
    {
      name: "MCP list_services → only its own service",
      send: () => ({ tool: "list_services", args: {} }),
      expect: (res, c) => {
        const { services } = toolAnswer(res).body as { services: { id: string }[] };
        expect(services.map((x) => x.id)).toEqual([c.service]);
      },
    },
  ],
  get_call_context: [
    {
      name: "GET /ai-agent/context → its own org, services and next slot",
      send: () => ({ path: "/api/v1/ai-agent/context" }),
      expect: (res, c) => {
        expect(res.status, res.text).toBe(200);
        expectOwnContext(res.body, c);
      },
    },
    {
      name: "GET /ai-agent/context?orgId={the other org's} → 422 unknown_field (a query cannot choose the org)",
      send: (_c, v) => ({ path: `/api/v1/ai-agent/context?orgId=${v.tenant.orgId}` }),
      expect: (res) => {
        expectProblem(res, 422, "validation_failed");
        expect(res.body.errors).toEqual([{ path: "orgId", code: "unknown_field", message: expect.any(String) }]);
      },
    },
    {
      name: "MCP get_call_context → its own org, services and next slot",
      send: () => ({ tool: "get_call_context", args: {} }),
      expect: (res, c) => {
        const answer = toolAnswer(res);
        expect(answer.isError, res.text).toBe(false);
        expectOwnContext(answer.body, c);
      },
    },
  ],
  get_account: [
    ...[0, 1].map(
      (i): Case => ({
        name: `GET /accounts/{the other org's account ${i + 1}} → 404 account_not_found`,
        send: (_c, v) => ({ path: `/api/v1/accounts/${v.accounts[i]!.id}` }),
        expect: (res) => expectProblem(res, 404, "account_not_found"),
      }),
    ),
    ...(["contact", "lead", "org"] as const).map(
      (kind): Case => ({
        name: `GET /accounts/{the other org's ${kind} id} → 404 account_not_found`,
        send: (_c, v) => ({
          path: `/api/v1/accounts/${kind === "contact" ? v.contacts[0]!.id : kind === "lead" ? v.keyedLeads[0]! : v.tenant.orgId}`,
        }),
        expect: (res) => expectProblem(res, 404, "account_not_found"),
      }),
    ),
    {
      name: "GET /accounts/{own account} → 200 (the control)",
      send: (c) => ({ path: `/api/v1/accounts/${c.accounts[0]!.id}` }),
      expect: (res, c) => expect([res.status, res.body.id]).toEqual([200, c.accounts[0]!.id]),
    },
    {
      name: "MCP get_account {the other org's account} → isError 404 account_not_found",
      send: (_c, v) => ({ tool: "get_account", args: { id: v.accounts[0]!.id } }),
      expect: (res) =>
        expect(toolAnswer(res)).toMatchObject({ isError: true, status: 404, body: { code: "account_not_found" } }),
    },
  ],
  list_contacts: [
    {
      name: "GET /contacts → only the caller's contacts",
      send: () => ({ path: "/api/v1/contacts?limit=200" }),
      expect: (res, c, v) =>
        expectOwnContacts(
          res.body.data.map((x: { id: string }) => x.id),
          c,
          v,
        ),
    },
    {
      name: "GET /contacts?updatedSince=2000 → only the caller's contacts",
      send: () => ({ path: "/api/v1/contacts?limit=200&updatedSince=2000-01-01T00:00:00Z" }),
      expect: (res, c, v) =>
        expectOwnContacts(
          res.body.data.map((x: { id: string }) => x.id),
          c,
          v,
        ),
    },
    {
      name: "GET /contacts?accountId={the other org's account} → empty page",
      send: (_c, v) => ({ path: `/api/v1/contacts?accountId=${v.accounts[0]!.id}` }),
      expect: expectEmptyPage,
    },
    ...[false, true].map(
      (upper): Case => ({
        name: `GET /contacts?email={the other org's contact email${upper ? ", upper case" : ""}} → empty page`,
        send: (_c, v) => ({
          path: `/api/v1/contacts?email=${encodeURIComponent(upper ? v.contacts[0]!.email.toUpperCase() : v.contacts[0]!.email)}`,
        }),
        expect: expectEmptyPage,
      }),
    ),
    {
      name: "GET /contacts?cursor={the other org's cursor} → 422 invalid_cursor",
      send: (_c, v) => ({ path: `/api/v1/contacts?cursor=${v.cursors.plain}` }),
      expect: expectInvalidCursor,
    },
    {
      name: "GET /contacts?accountId=…&cursor={the other org's cursor for that filter} → 422 invalid_cursor",
      send: (_c, v) => ({ path: `/api/v1/contacts?accountId=${v.accounts[0]!.id}&cursor=${v.cursors.account}` }),
      expect: expectInvalidCursor,
    },
    {
      name: "GET /contacts?phone={the other org's phone} → empty page",
      send: (_c, v) => ({ path: `/api/v1/contacts?phone=${encodeURIComponent(v.phone.e164)}` }),
      expect: expectEmptyPage,
    },
    {
      name: "MCP list_contacts {} → only the caller's contacts",
      send: () => ({ tool: "list_contacts", args: { limit: 200 } }),
      expect: (res, c, v) =>
        expectOwnContacts(
          (toolAnswer(res).body.data as { id: string }[]).map((x) => x.id),
          c,
          v,
        ),
    },
    {
      name: "MCP list_contacts {accountId: the other org's account} → empty page",
      send: (_c, v) => ({ tool: "list_contacts", args: { accountId: v.accounts[0]!.id } }),
      expect: expectEmptyToolPage,
    },
    {
      name: "MCP list_contacts {email: the other org's contact email} → empty page",
      send: (_c, v) => ({ tool: "list_contacts", args: { email: v.contacts[1]!.email } }),
      expect: expectEmptyToolPage,
    },
    {
      name: "MCP list_contacts {cursor: the other org's cursor} → isError 422 invalid_cursor",
      send: (_c, v) => ({ tool: "list_contacts", args: { cursor: v.cursors.plain } }),
      expect: expectToolInvalidCursor,
    },
  ],
  check_booking_availability: [
    {
      name: "POST is-booking-available {the other org's serviceId} → 422 not_found on serviceId",
      send: (c, v) => ({
        path: "/api/v1/ai-agent/is-booking-available",
        body: { dateTime: c.slots[0], serviceId: v.service },
      }),
      expect: (res) => {
        expectProblem(res, 422, "validation_failed");
        expect(res.body.errors).toEqual([expect.objectContaining({ path: "serviceId", code: "not_found" })]);
      },
    },
    {
      name: "is-booking-available at the other org's booked slot → available, all places left",
      send: (_c, v) => ({ path: "/api/v1/ai-agent/is-booking-available", body: { dateTime: v.slots[0] } }),
      expect: (res, _c, v) =>
        expect(res.body).toMatchObject({
          available: true,
          reason: null,
          slot: { start: new Date(v.slots[0]).toISOString(), remaining: 1 },
        }),
    },
    {
      name: "is-booking-available at the other org's held slot → available, all places left",
      send: (_c, v) => ({ path: "/api/v1/ai-agent/is-booking-available", body: { dateTime: v.holds[0]!.dateTime } }),
      expect: (res, _c, v) =>
        expect(res.body).toMatchObject({
          available: true,
          reason: null,
          slot: { start: v.holds[0]!.dateTime, remaining: 1 },
        }),
    },
    {
      name: "MCP check_booking_availability at the other org's booked slot → available",
      send: (_c, v) => ({ tool: "check_booking_availability", args: { dateTime: v.slots[1] } }),
      expect: (res, _c, v) =>
        expect(toolAnswer(res).body).toMatchObject({ available: true, slot: { start: v.slots[1], remaining: 1 } }),
    },
  ],
  find_available_appointments: [
    {
      name: "available-appointments from the other org's booked slot → that slot, all places left",
      send: (_c, v) => ({ path: "/api/v1/ai-agent/available-appointments", body: { dateTime: v.slots[0], limit: 1 } }),
      expect: (res, _c, v) =>
        expect(res.body.slots).toEqual([expect.objectContaining({ start: v.slots[0], remaining: 1 })]),
    },
    {
      name: "available-appointments from the other org's held slot → that slot, all places left",
      send: (_c, v) => ({
        path: "/api/v1/ai-agent/available-appointments",
        body: { dateTime: v.holds[1]!.dateTime, limit: 1 },
      }),
      expect: (res, _c, v) =>
        expect(res.body.slots).toEqual([expect.objectContaining({ start: v.holds[1]!.dateTime, remaining: 1 })]),
    },
    {
      name: "MCP find_available_appointments from the other org's booked slot → that slot",
      send: (_c, v) => ({ tool: "find_available_appointments", args: { dateTime: v.slots[1], limit: 1 } }),
      expect: (res, _c, v) =>
        expect(toolAnswer(res).body.slots).toEqual([expect.objectContaining({ start: v.slots[1], remaining: 1 })]),
    },
  ],
  create_contact: [
    {
      name: "POST /contacts with the other org's accountId → 422 account_not_found, nothing stored",
      send: (_c, v) => ({ path: "/api/v1/contacts", body: { firstName: "Intruder", accountId: v.accounts[0]!.id } }),
      expect: (res) => {
        expectProblem(res, 422, "validation_failed");
        expect(res.body.errors).toEqual([
          { path: "accountId", code: "account_not_found", message: expect.any(String) },
        ]);
      },
    },
    {
      name: "MCP create_contact {accountId: the other org's account} → isError 422 account_not_found",
      send: (_c, v) => ({ tool: "create_contact", args: { firstName: "Intruder", accountId: v.accounts[1]!.id } }),
      expect: (res) =>
        expect(toolAnswer(res)).toMatchObject({
          isError: true,
          status: 422,
          body: { errors: [{ path: "accountId", code: "account_not_found" }] },
        }),
    },
  ],
  create_incident: [
    {
      name: "create-incident at the other org's booked slot, as its account's client → booked, not linked to that account",
      send: (_c, v) => ({
        path: "/api/v1/ai-agent/create-incident",
        body: { dateTime: v.slots[0], clientName: v.accounts[0]!.name, insectName: "Ants" },
      }),
      expect: (res, _c, v) => {
        expect(res.status, res.text).toBe(200);
        expect(res.body).toMatchObject({ accountId: null, appointment: { start: v.slots[0], remaining: 0 } });
      },
    },
    {
      name: "MCP create_incident at the other org's booked slot, as its account's client → booked, not linked",
      send: (_c, v) => ({
        tool: "create_incident",
        args: { dateTime: v.slots[1], clientName: v.accounts[0]!.name, insectName: "Wasps" },
      }),
      expect: (res, _c, v) =>
        expect(toolAnswer(res)).toMatchObject({
          isError: false,
          body: { accountId: null, appointment: { start: v.slots[1] } },
        }),
    },
    {
      name: "create-incident {holdId: the other org's hold, at its start} → 422 not_found on holdId, its hold unchanged",
      send: (_c, v) => ({
        path: "/api/v1/ai-agent/create-incident",
        body: { dateTime: v.holds[0]!.dateTime, clientName: "Intruder", insectName: "Ants", holdId: v.holds[0]!.id },
      }),
      expect: expectHoldNotFound,
      changesHold: (v) => v.holds[0]!.id,
    },
    {
      name: "MCP create_incident {holdId: the other org's hold, at its start} → isError 422 not_found, its hold unchanged",
      send: (_c, v) => ({
        tool: "create_incident",
        args: { dateTime: v.holds[1]!.dateTime, clientName: "Intruder", insectName: "Ants", holdId: v.holds[1]!.id },
      }),
      expect: (res) =>
        expect(toolAnswer(res)).toMatchObject({
          isError: true,
          status: 422,
          body: { errors: [{ path: "holdId", code: "not_found" }] },
        }),
      changesHold: (v) => v.holds[1]!.id,
    },
  ],
  create_lead: [
    {
      name: "POST /leads with the other org's Idempotency-Key and body → a new lead of the caller, not a replay",
      send: (_c, v) => ({ path: "/api/v1/leads", body: SHARED_LEAD, headers: { "Idempotency-Key": v.keys[0] } }),
      expect: (res, c, v) => {
        expect(res.status, res.text).toBe(200);
        expect(res.headers.get("Idempotent-Replayed")).toBeNull();
        expect([...v.keyedLeads, ...c.keyedLeads]).not.toContain(res.body.id);
      },
    },
    {
      name: "MCP create_lead with the other org's Idempotency-Key and body → a new lead, not a replay",
      send: (_c, v) => ({ tool: "create_lead", args: SHARED_LEAD, headers: { "Idempotency-Key": v.keys[1] } }),
      expect: (res, c, v) => {
        const answer = toolAnswer(res);
        expect(answer.isError).toBe(false);
        expect([...v.keyedLeads, ...c.keyedLeads]).not.toContain(answer.body.id);
      },
    },
  ],
  get_incident: [
    ...[0, 1].map(
      (i): Case => ({
        name: `GET /incidents/{the other org's incident ${i + 1}} → 404 incident_not_found`,
        send: (_c, v) => ({ path: `/api/v1/incidents/${v.incidents[i]!.id}` }),
        expect: (res) => expectProblem(res, 404, "incident_not_found"),
      }),
    ),
    {
      name: "GET /incidents/{own incident} → 200 (the control)",
      send: (c) => ({ path: `/api/v1/incidents/${c.incidents[0]!.id}` }),
      expect: (res, c) =>
        expect([res.status, res.body.id, res.body.phone]).toEqual([200, c.incidents[0]!.id, c.phone.e164]),
    },
    {
      name: "MCP get_incident {the other org's incident} → isError 404 incident_not_found",
      send: (_c, v) => ({ tool: "get_incident", args: { id: v.incidents[1]!.id } }),
      expect: (res) =>
        expect(toolAnswer(res)).toMatchObject({ isError: true, status: 404, body: { code: "incident_not_found" } }),
    },
  ],
  find_caller: [
    {
      name: "find-caller {the other org's phone} → nobody (empty lists)",
      send: (_c, v) => ({ path: "/api/v1/ai-agent/find-caller", body: { phone: v.phone.spelled } }),
      expect: (res, _c, v) => expect([res.status, res.body]).toEqual([200, emptyCaller(v.phone.e164)]),
      carries: (v) => v.phone.e164,
    },
    {
      name: "find-caller {the phone both orgs have} → the caller's contact and incident only",
      send: () => ({ path: "/api/v1/ai-agent/find-caller", body: { phone: SHARED_PHONE } }),
      expect: (res, c) => {
        expect(res.status, res.text).toBe(200);
        expect(res.body.contacts.map((x: { id: string }) => x.id)).toEqual([c.contacts[2]!.id]);
        expect(res.body.accounts).toEqual([]);
        expect(res.body.upcomingIncidents.map((x: { id: string }) => x.id)).toEqual([c.incidents[1]!.id]);
      },
    },
    {
      name: "MCP find_caller {the other org's phone} → nobody",
      send: (_c, v) => ({ tool: "find_caller", args: { phone: v.phone.e164 } }),
      expect: (res, _c, v) =>
        expect(toolAnswer(res)).toMatchObject({ isError: false, body: emptyCaller(v.phone.e164) }),
    },
  ],
  cancel_incident: [
    ...[false, true].map(
      (keyed): Case => ({
        name: `POST /incidents/{the other org's incident}/cancel${keyed ? " with an Idempotency-Key" : ""} → 404 incident_not_found, its row unchanged`,
        send: (_c, v) => ({
          path: `/api/v1/incidents/${v.incidents[0]!.id}/cancel`,
          body: { reason: "Intruder" },
          headers: keyed ? { "Idempotency-Key": "isolation-cancel" } : ({} as Record<string, string>),
        }),
        expect: (res) => expectProblem(res, 404, "incident_not_found"),
        changes: (v) => v.incidents[0]!.id,
      }),
    ),
    {
      name: "MCP cancel_incident {the other org's incident} → isError 404, its row unchanged",
      send: (_c, v) => ({ tool: "cancel_incident", args: { id: v.incidents[1]!.id } }),
      expect: (res) =>
        expect(toolAnswer(res)).toMatchObject({ isError: true, status: 404, body: { code: "incident_not_found" } }),
      changes: (v) => v.incidents[1]!.id,
    },
  ],
  reschedule_incident: [
    {
      name: "POST /incidents/{the other org's incident}/reschedule → 404 incident_not_found, its row unchanged",
      send: (_c, v) => ({
        path: `/api/v1/incidents/${v.incidents[1]!.id}/reschedule`,
        body: { dateTime: slotIn(70) },
      }),
      expect: (res) => expectProblem(res, 404, "incident_not_found"),
      changes: (v) => v.incidents[1]!.id,
    },
    {
      name: "MCP reschedule_incident {the other org's incident} → isError 404, its row unchanged",
      send: (_c, v) => ({ tool: "reschedule_incident", args: { id: v.incidents[0]!.id, dateTime: slotIn(71) } }),
      expect: (res) =>
        expect(toolAnswer(res)).toMatchObject({ isError: true, status: 404, body: { code: "incident_not_found" } }),
      changes: (v) => v.incidents[0]!.id,
    },
  ],
  create_plan: [
    {
      name: "create-plan {the other org's serviceId} → 422 not_found on serviceId, nothing stored",
      send: (c, v) => ({
        path: "/api/v1/ai-agent/create-plan",
        body: {
          dateTime: c.slots[0],
          clientName: "X",
          insectName: "Y",
          serviceId: v.service,
          every: { count: 1, unit: "month" },
        },
      }),
      expect: (res) => {
        expectProblem(res, 422, "validation_failed");
        expect(res.body.errors).toEqual([expect.objectContaining({ path: "serviceId", code: "not_found" })]);
      },
    },
    {
      name: "MCP create_plan {the other org's hold} → 422 not_found on holdId",
      send: (_c, v) => ({
        tool: "create_plan",
        args: {
          dateTime: v.holds[0]!.dateTime,
          clientName: "X",
          insectName: "Y",
          holdId: v.holds[0]!.id,
          every: { count: 1, unit: "week" },
        },
      }),
      expect: (res) =>
        expect(toolAnswer(res)).toMatchObject({
          isError: true,
          status: 422,
          body: { errors: [expect.objectContaining({ path: "holdId", code: "not_found" })] },
        }),
      changesHold: (v) => v.holds[0]!.id,
    },
  ],
  get_plan: [
    {
      name: "GET /plans/{the other org's plan} → 404 plan_not_found",
      send: (_c, v) => ({ path: `/api/v1/plans/${v.plans[0]!.id}` }),
      expect: (res) => expectProblem(res, 404, "plan_not_found"),
    },
    {
      name: "MCP get_plan {the other org's plan} → isError 404 plan_not_found",
      send: (_c, v) => ({ tool: "get_plan", args: { id: v.plans[0]!.id } }),
      expect: (res) =>
        expect(toolAnswer(res)).toMatchObject({ isError: true, status: 404, body: { code: "plan_not_found" } }),
    },
    {
      name: "GET /plans/{own plan} → 200 (the control)",
      send: (c) => ({ path: `/api/v1/plans/${c.plans[0]!.id}` }),
      expect: (res, c) => expect([res.status, res.body.id]).toEqual([200, c.plans[0]!.id]),
    },
  ],
  list_plans: [
    {
      name: "GET /plans → only the caller's plan",
      send: () => ({ path: "/api/v1/plans" }),
      expect: (res, c) => expect(res.body.data.map((x: { id: string }) => x.id)).toEqual([c.plans[0]!.id]),
    },
    {
      name: "MCP list_plans {phone: the other org's phone} → empty page",
      send: (_c, v) => ({ tool: "list_plans", args: { phone: v.phone.e164 } }),
      expect: (res) => expect(toolAnswer(res)).toMatchObject({ isError: false, body: { data: [], hasMore: false } }),
    },
  ],
  cancel_plan: [
    {
      name: "POST /plans/{the other org's plan}/cancel → 404 plan_not_found, nothing changed",
      send: (_c, v) => ({ path: `/api/v1/plans/${v.plans[0]!.id}/cancel`, body: { reason: "Intruder" } }),
      expect: (res) => expectProblem(res, 404, "plan_not_found"),
    },
    {
      name: "MCP cancel_plan {the other org's plan} → isError 404, nothing changed",
      send: (_c, v) => ({ tool: "cancel_plan", args: { id: v.plans[0]!.id } }),
      expect: (res) =>
        expect(toolAnswer(res)).toMatchObject({ isError: true, status: 404, body: { code: "plan_not_found" } }),
    },
  ],
  close_incident: [
    {
      name: "POST /incidents/{the other org's incident}/close → 404 incident_not_found, its row unchanged",
      send: (_c, v) => ({ path: `/api/v1/incidents/${v.incidents[0]!.id}/close`, body: { outcome: "no_show" } }),
      expect: (res) => expectProblem(res, 404, "incident_not_found"),
      changes: (v) => v.incidents[0]!.id,
    },
    {
      name: "MCP close_incident {the other org's incident} → isError 404, its row unchanged",
      send: (_c, v) => ({ tool: "close_incident", args: { id: v.incidents[1]!.id, outcome: "completed" } }),
      expect: (res) =>
        expect(toolAnswer(res)).toMatchObject({ isError: true, status: 404, body: { code: "incident_not_found" } }),
      changes: (v) => v.incidents[1]!.id,
    },
  ],
  // After the probes above that see the other org's held slots free (and book on its holds in vain).
  hold_slot: [
    {
      name: "hold-slot {the other org's serviceId} → 422 not_found on serviceId",
      send: (c, v) => ({
        path: "/api/v1/ai-agent/hold-slot",
        body: { dateTime: c.slots[0], serviceId: v.service },
      }),
      expect: (res) => {
        expectProblem(res, 422, "validation_failed");
        expect(res.body.errors).toEqual([expect.objectContaining({ path: "serviceId", code: "not_found" })]);
      },
    },
    {
      name: "hold-slot at the other org's held slot → held, the caller's one place (the other org's hold takes none)",
      send: (_c, v) => ({ path: "/api/v1/ai-agent/hold-slot", body: { dateTime: v.holds[0]!.dateTime } }),
      expect: (res, c, v) => {
        expect(res.status, res.text).toBe(200);
        expect(res.body).toMatchObject({ slot: { start: v.holds[0]!.dateTime, remaining: 0 }, technicianId: null });
        expect([...v.holds, ...c.holds].map((h) => h.id)).not.toContain(res.body.holdId);
      },
    },
    {
      name: "MCP hold_slot at the other org's held slot → held",
      send: (_c, v) => ({ tool: "hold_slot", args: { dateTime: v.holds[1]!.dateTime } }),
      expect: (res, _c, v) =>
        expect(toolAnswer(res)).toMatchObject({
          isError: false,
          body: { slot: { start: v.holds[1]!.dateTime, remaining: 0 } },
        }),
    },
  ],
  release_hold: [
    ...[false, true].map(
      (keyed): Case => ({
        name: `release-hold {the other org's hold}${keyed ? " with an Idempotency-Key" : ""} → 422 not_found, its hold unchanged`,
        send: (_c, v) => ({
          path: "/api/v1/ai-agent/release-hold",
          body: { holdId: v.holds[0]!.id },
          headers: keyed ? { "Idempotency-Key": "isolation-release" } : ({} as Record<string, string>),
        }),
        expect: expectHoldNotFound,
        changesHold: (v) => v.holds[0]!.id,
      }),
    ),
    {
      name: "MCP release_hold {the other org's hold} → isError 422 not_found, its hold unchanged",
      send: (_c, v) => ({ tool: "release_hold", args: { holdId: v.holds[1]!.id } }),
      expect: (res) =>
        expect(toolAnswer(res)).toMatchObject({
          isError: true,
          status: 422,
          body: { errors: [{ path: "holdId", code: "not_found" }] },
        }),
      changesHold: (v) => v.holds[1]!.id,
    },
    {
      name: "release-hold {own hold} → 200 released (the control)",
      send: (c) => ({ path: "/api/v1/ai-agent/release-hold", body: { holdId: c.holds[1]!.id } }),
      expect: (res, c) => expect([res.status, res.body]).toEqual([200, { holdId: c.holds[1]!.id, released: true }]),
    },
  ],
};
const CASES = Object.values(PROBES).flat();

/** The other org's first account, incident and hold, as the fixture of the operation samples: they aim at them. */
const aimedAt = (caller: Profile, victim: Profile): Fixture => ({
  tenant: caller.tenant,
  accountId: victim.accounts[0]!.id,
  incidentId: victim.incidents[0]!.id,
  holdId: victim.holds[0]!.id,
  planId: victim.plans[0]!.id,
});

/**
 * Requests to try with swapped credentials: the sample of every
 * operation over HTTP and as an MCP tool, aimed at the victim's account and
 * incident; more of the victim's ids, phones, cursors and slots; and /mcp's tool list.
 */
const REQUESTS: [string, (caller: Profile, victim: Profile) => Sent][] = [
  ...OPERATIONS.flatMap((op): [string, (caller: Profile, victim: Profile) => Sent][] => [
    [`${op.method} ${pathTemplate(op)} (the sample, aimed at the victim's)`, (c, v) => httpRequest(op, aimedAt(c, v))],
    [
      `MCP ${op.tool} (the sample, aimed at the victim's)`,
      (c, v) => ({ tool: op.tool, args: toolArguments(op, aimedAt(c, v)) }),
    ],
  ]),
  ["GET /contacts?accountId={victim's}", (_c, v) => ({ path: `/api/v1/contacts?accountId=${v.accounts[0]!.id}` })],
  [
    "GET /contacts?phone={victim's}",
    (_c, v) => ({ path: `/api/v1/contacts?phone=${encodeURIComponent(v.phone.e164)}` }),
  ],
  ["GET /accounts/{caller's}", (c) => ({ path: `/api/v1/accounts/${c.accounts[0]!.id}` })],
  [
    "available-appointments {victim's slot}",
    (_c, v) => ({ path: "/api/v1/ai-agent/available-appointments", body: { dateTime: v.slots[0] } }),
  ],
  [
    "is-booking-available {victim's slot}",
    (_c, v) => ({ path: "/api/v1/ai-agent/is-booking-available", body: { dateTime: v.slots[0] } }),
  ],
  [
    "release-hold {victim's other hold}",
    (_c, v) => ({ path: "/api/v1/ai-agent/release-hold", body: { holdId: v.holds[1]!.id } }),
  ],
  [
    "create-incident {victim's slot}",
    (_c, v) => ({
      path: "/api/v1/ai-agent/create-incident",
      body: { dateTime: v.slots[0], clientName: "X", insectName: "Y" },
    }),
  ],
  [
    "find-caller {victim's phone}",
    (_c, v) => ({ path: "/api/v1/ai-agent/find-caller", body: { phone: v.phone.e164 } }),
  ],
  ["GET /incidents?cursor={victim's}", (_c, v) => ({ path: `/api/v1/incidents?cursor=${v.incidentCursors.plain}` })],
  ["GET /events?cursor={victim's}", (_c, v) => ({ path: `/api/v1/events?cursor=${v.eventCursors.plain}` })],
  ["MCP tools/list", () => ({ toolList: true })],
  [
    "MCP cancel_incident {victim's other incident}",
    (_c, v) => ({ tool: "cancel_incident", args: { id: v.incidents[1]!.id } }),
  ],
];

const SWAPS: [string, (caller: Profile, victim: Profile) => Credentials][] = [
  ["the caller's key with the other org's id", (c, v) => ({ apiKey: c.tenant.apiKey, orgId: v.tenant.orgId })],
  ["the other org's key with the caller's org id", (c, v) => ({ apiKey: v.tenant.apiKey, orgId: c.tenant.orgId })],
];

const SWAPPED = SWAPS.flatMap(([swap, credentials]) =>
  REQUESTS.map(([op, send]) => ({ name: `${op} with ${swap} → uniform 401`, credentials, send })),
);
const DIRECTIONS = [
  ["A", "B"],
  ["B", "A"],
] as const;
const MATRIX_SIZE = DIRECTIONS.length * (CASES.length + SWAPPED.length);

const TABLES = ["accounts", "contacts", "leads", "incidents", "holds", "plans", "idempotency_keys", "events"];

/** Every stored byte of the org (api_keys without last_used_at, a hint the org's own requests move). */
async function snapshot(orgId: string) {
  const rows: Record<string, unknown[]> = {};
  for (const table of TABLES)
    rows[table] = (
      await env.DB.prepare(`SELECT * FROM ${table} WHERE org_id = ? ORDER BY 1, 2`).bind(orgId).all()
    ).results;
  rows.api_keys = (
    await env.DB.prepare("SELECT id, key_hash, created_at, revoked_at FROM api_keys WHERE org_id = ?").bind(orgId).all()
  ).results;
  rows.orgs = (await env.DB.prepare("SELECT * FROM orgs WHERE id = ?").bind(orgId).all()).results;
  return rows;
}

describe("the matrix covers every sampled operation (test/support/operations.ts)", () => {
  it("probes each over HTTP and as an MCP tool, under its own tool", () => {
    expect(Object.keys(PROBES).sort()).toEqual(TOOLS);
    for (const [tool, cases] of Object.entries(PROBES)) {
      const probed = new Set(cases.map((c) => operationOf(c.send(profiles.A, profiles.B))));
      expect(probed, tool).toEqual(new Set([`HTTP ${tool}`, `MCP ${tool}`]));
    }
  });
  it("tries each over HTTP and as an MCP tool with swapped credentials", () => {
    const tried = new Set(REQUESTS.map(([, send]) => operationOf(send(profiles.A, profiles.B))));
    expect(TOOLS.flatMap((tool) => [`HTTP ${tool}`, `MCP ${tool}`]).filter((op) => !tried.has(op))).toEqual([]);
  });
});

describe(`tenant isolation matrix: ${MATRIX_SIZE} cases (${CASES.length} probes and ${SWAPPED.length} swapped credentials, each way)`, () => {
  describe.each(DIRECTIONS)("%s calling, %s's data", (callerName, victimName) => {
    const caller = () => profiles[callerName];
    const victim = () => profiles[victimName];
    let before: Awaited<ReturnType<typeof snapshot>>;
    beforeAll(async () => {
      before = await snapshot(victim().tenant.orgId);
    });

    it.each(CASES.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
      const sent = c.send(caller(), victim());
      const changed = c.changes?.(victim());
      const row = changed === undefined ? undefined : await incidentRow(changed);
      if (changed !== undefined) expect(row).toHaveLength(1);
      const held = c.changesHold?.(victim());
      const hold = held === undefined ? undefined : await holdRow(held);
      if (held !== undefined) expect(hold).toHaveLength(1);
      const res = await perform(caller().tenant, sent);
      c.expect(res, caller(), victim());
      expectNothingOf(victim(), res, JSON.stringify(sent) + (c.carries?.(victim()) ?? ""));
      // Read back: the other org's incident, or hold, is exactly as it was, byte for byte.
      if (changed !== undefined) expect(await incidentRow(changed)).toEqual(row);
      if (held !== undefined) expect(await holdRow(held)).toEqual(hold);
    });

    it.each(SWAPPED.map((s) => [s.name, s] as const))("%s", async (_name, s) => {
      const who = s.credentials(caller(), victim());
      const res = await perform(who, s.send(caller(), victim()));
      expectProblem(res, 401, "unauthenticated");
      expect(res.headers.get("WWW-Authenticate")).toBe('ApiKey header="X-API-KEY"');
      const { requestId: _, ...body } = res.body;
      expect(body).toEqual(uniform401);
      // The request carried the victim's org id or key; nothing else of it may come back.
      expectNothingOf(victim(), res, JSON.stringify(credentialsOf(who)) + JSON.stringify(s.send(caller(), victim())));
    });

    it("leaves every row of the other org exactly as it was", async () => {
      expect(await snapshot(victim().tenant.orgId)).toEqual(before);
    });
  });
});

// The webhook admin CLI (docs/operations.md, "Webhook endpoints"): an endpoint
// or event of another org is an error that changes nothing, and no listing
// shows another org's rows. Each org gets an endpoint (at a closed local port)
// and one real delivery attempt of its first event, made by the queue consumer.
const workerEnv = env as unknown as Bindings;
const WEBHOOK_TABLES = ["webhook_endpoints", "webhook_secrets", "webhook_deliveries", "webhook_replays", "events"];

const cli = (command: string, flags: Flags) =>
  WEBHOOK_COMMANDS[`webhook ${command}`]!(db(), flags, { webhookKey: () => workerEnv.WEBHOOK_SECRET_KEY! });

/** Every webhook and event row of both orgs. */
async function webhookRows() {
  const rows: Record<string, unknown[]> = {};
  for (const table of WEBHOOK_TABLES)
    rows[table] = (
      await env.DB.prepare(`SELECT * FROM ${table} WHERE org_id IN (?, ?) ORDER BY 1`)
        .bind(profiles.A.tenant.orgId, profiles.B.tenant.orgId)
        .all()
    ).results;
  return rows;
}

/** One attempt of `event` to `endpoint`, through the queue consumer with a one-message batch. */
async function deliverOnce(orgId: string, event: string, endpoint: string) {
  const outcomes: string[] = [];
  const message = {
    id: crypto.randomUUID(),
    timestamp: new Date(),
    attempts: 1,
    body: { org: orgId, event, endpoint, since: 0 },
    ack: () => outcomes.push("ack"),
    retry: () => outcomes.push("retry"),
  };
  const batch = {
    queue: "field-service-webhooks",
    messages: [message],
    ackAll: () => outcomes.push("ackAll"),
    retryAll: () => outcomes.push("retryAll"),
  } as unknown as MessageBatch<DeliveryMessage>;
  await deliverBatch(batch, workerEnv);
  // Nothing listens on the port: a network error, to be retried.
  expect(outcomes).toEqual(["retry"]);
}

const webhooks = {} as Record<"A" | "B", { endpoint: string; url: string }>;

describe("webhook admin CLI isolation", () => {
  beforeAll(async () => {
    for (const name of ["A", "B"] as const) {
      const p = profiles[name];
      const url = `http://127.0.0.1:9/isolation-${p.tag}`;
      const added = (await cli("add", { org: p.tenant.orgId, url })) as { endpointId: string };
      webhooks[name] = { endpoint: added.endpointId, url };
      await deliverOnce(p.tenant.orgId, p.events[0]!, added.endpointId);
    }
  });

  describe.each(DIRECTIONS)("%s's CLI, %s's endpoints and events", (callerName, victimName) => {
    const caller = () => profiles[callerName];
    const victim = () => profiles[victimName];
    const mine = () => webhooks[callerName];
    const theirs = () => webhooks[victimName];

    it("webhook list → only the caller's endpoint", async () => {
      const listed = (await cli("list", { org: caller().tenant.orgId })) as { endpoints: { endpointId: string }[] };
      expect(listed.endpoints.map((e) => e.endpointId)).toEqual([mine().endpoint]);
      const text = JSON.stringify(listed);
      for (const secret of [theirs().endpoint, theirs().url, victim().tag]) expect(text).not.toContain(secret);
    });

    it("webhook deliveries → only the caller's attempts", async () => {
      const listed = (await cli("deliveries", { org: caller().tenant.orgId })) as {
        deliveries: { eventId: string; endpointId: string }[];
      };
      expect(listed.deliveries.map((d) => [d.eventId, d.endpointId])).toEqual([[caller().events[0], mine().endpoint]]);
      const text = JSON.stringify(listed);
      for (const secret of [theirs().endpoint, ...victim().events]) expect(text).not.toContain(secret);
    });

    const REFUSED: [string, string, (c: Profile, v: Profile) => Flags][] = [
      ["remove", "the other org's endpoint", (c) => ({ org: c.tenant.orgId, endpoint: theirs().endpoint })],
      ["rotate-secret", "the other org's endpoint", (c) => ({ org: c.tenant.orgId, endpoint: theirs().endpoint })],
      ["replay", "the other org's event", (c, v) => ({ org: c.tenant.orgId, event: v.events[0]! })],
      [
        "replay",
        "the other org's event to the caller's endpoint",
        (c, v) => ({ org: c.tenant.orgId, event: v.events[0]!, endpoint: mine().endpoint }),
      ],
      [
        "replay",
        "the caller's event to the other org's endpoint",
        (c) => ({ org: c.tenant.orgId, event: c.events[0]!, endpoint: theirs().endpoint }),
      ],
      ["deliveries", "the other org's endpoint", (c) => ({ org: c.tenant.orgId, endpoint: theirs().endpoint })],
      ["deliveries", "the other org's event", (c, v) => ({ org: c.tenant.orgId, event: v.events[0]! })],
    ];

    it.each(REFUSED)("webhook %s with %s → CliError, nothing changed", async (command, _what, flags) => {
      const sent = flags(caller(), victim());
      const before = await webhookRows();
      const error = await cli(command, sent).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(CliError);
      // It names what was asked for, and nothing else of the other org.
      for (const secret of [theirs().url, victim().tag, victim().tenant.orgId])
        expect((error as Error).message).not.toContain(secret);
      expect(await webhookRows()).toEqual(before);
    });
  });

  // The control: the same commands work for the owner (so each refusal above is the org check's).
  it("lets each org do all of it to its own endpoint and event", async () => {
    for (const name of ["A", "B"] as const) {
      const p = profiles[name];
      const { endpoint } = webhooks[name];
      const org = p.tenant.orgId;
      const deliveries = (await cli("deliveries", { org, endpoint, event: p.events[0]! })) as {
        deliveries: { status: string }[];
      };
      expect(deliveries.deliveries).toEqual([expect.objectContaining({ status: "retrying", attempt: 1 })]);
      expect(await cli("replay", { org, event: p.events[0]!, endpoint })).toEqual({ eventId: p.events[0], queued: 1 });
      expect(await cli("rotate-secret", { org, endpoint })).toEqual({
        endpointId: endpoint,
        secret: expect.any(String),
      });
      expect(await cli("remove", { org, endpoint })).toEqual({ endpointId: endpoint, removed: true });
      expect(await cli("list", { org })).toEqual({ endpoints: [] });
    }
  });
});
