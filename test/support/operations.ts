// The samples of the API's operations for the tests that must cover every
// one of them (security suites, rate limits, faults, the write path): one
// sample request per operation, over HTTP and as an MCP tool, and the fixture
// it needs. test/integration/http/samples.test.ts fails when an operation is
// declared (src/routes) but missing here, or listed here but not declared.
// A suite that sends its own way (other credentials, headers or bindings)
// builds on httpRequest and toolArguments; a suite's own facts about each
// operation live in a table of that suite keyed by tool name, which it checks
// against these samples' tools.
import { eq } from "drizzle-orm";
import { apiKeys, holds, incidents, plans } from "../../drizzle/schema";
import { newId } from "../../src/lib/ids";
import { addService } from "./catalogue";
import type { ReadResponse } from "./http";
import { mcpCall } from "./mcp";
import { call } from "./request";
import { addAccount, db, newTenant, openAlways, type Tenant } from "./tenants";
import { HOUR, MINUTE, slotAt } from "./time";

// A whole UTC hour two days ahead: open, bookable, far from notice and horizon edges.
export const SLOT = slotAt(2, 15);
// Where a reschedule moves the incident booked at SLOT.
export const NEW_SLOT = slotAt(2, 17);
export const PHONE = "+19175550134";
export const ACCOUNT_NAME = "Fault Tolerant Ltd";
export const WRITE_TABLES = ["leads", "contacts", "incidents", "holds", "plans"] as const;
export type WriteTable = (typeof WRITE_TABLES)[number];

/** A fresh org (so a cold key), its schedule, one account, for the incident operations one incident at SLOT, for the hold operations one live hold at SLOT, and for the plan operations one plan (the caller's, by PHONE). */
export interface Fixture {
  tenant: Tenant;
  accountId: string;
  incidentId: string;
  holdId: string;
  planId: string;
}

/** Where the fixture's incident starts when the operation needs a started one (close): half an hour before now. */
export const STARTED_AT = (now: number) => now - 30 * MINUTE;

/** How long the fixture's hold is live (hold-slot's default). */
export const HOLD_MS = 5 * MINUTE;

export async function fixture(op: Operation): Promise<Fixture> {
  const tenant = await newTenant("Catalogue");
  // Used within the minute: the key's last-use hint is not due, so no write runs beside the request.
  await db().update(apiKeys).set({ lastUsedAt: Date.now() }).where(eq(apiKeys.id, tenant.keyId));
  await openAlways(tenant, { capacity: 1 });
  const { id } = await addAccount(tenant, ACCOUNT_NAME);
  // Inserted as create-incident stores one, not through the API: the key stays cold.
  const now = Date.now();
  const incidentId = newId("inc", now);
  const startsAt = op.started ? STARTED_AT(now) : Date.parse(SLOT);
  if (op.incident)
    await db()
      .insert(incidents)
      .values({
        id: incidentId,
        orgId: tenant.orgId,
        status: "scheduled",
        clientName: ACCOUNT_NAME,
        insectName: "Termites",
        accountId: id,
        phone: PHONE,
        startsAt,
        endsAt: startsAt + HOUR,
        occupiedUntil: startsAt + HOUR,
        createdAt: now,
        updatedAt: now,
      });
  // Inserted as hold-slot stores one (the default visit at SLOT, live for 5 minutes), not through the API either.
  const holdId = newId("hold", now);
  if (op.hold)
    await db()
      .insert(holds)
      .values({
        id: holdId,
        orgId: tenant.orgId,
        startsAt: Date.parse(SLOT),
        endsAt: Date.parse(SLOT) + HOUR,
        occupiedUntil: Date.parse(SLOT) + HOUR,
        serviceId: null,
        technicianId: null,
        postalCode: null,
        expiresAt: now + HOLD_MS,
        endedAt: null,
        incidentId: null,
        createdAt: now,
      });
  if (op.services)
    await addService(tenant, { name: "Termite treatment", durationMinutes: 180, keywords: ["termites"] });
  // Inserted as create-plan stores one after its first visit (not booked here), its next visit months away: no cron decides it.
  const planId = newId("plan", now);
  if (op.plan)
    await db()
      .insert(plans)
      .values({
        id: planId,
        orgId: tenant.orgId,
        status: "active",
        everyCount: 3,
        everyUnit: "month",
        visits: null,
        clientName: ACCOUNT_NAME,
        insectName: "Termites",
        phone: PHONE,
        accountId: id,
        localTime: SLOT.slice(11, 16),
        firstVisitDate: SLOT.slice(0, 10),
        visitsMade: 1,
        nextDueDate: "2999-01-01",
        decideAt: Date.parse("2998-12-18T00:00:00Z"),
        createdAt: now,
        updatedAt: now,
      });
  return { tenant, accountId: id, incidentId, holdId, planId };
}

export interface Operation {
  name: string;
  tool: string;
  method: "GET" | "POST";
  path: (f: Fixture) => string;
  /** The body of a POST, or the tool's arguments of a GET; a tool on one incident gets its `id` besides. */
  args: (f: Fixture) => Record<string, unknown>;
  writes?: WriteTable;
  /** The member of its 200 answer that holds the id of the row it writes (default `id`). */
  writtenId?: "holdId" | "plan";
  /** A write that records no event (holds are not events: docs/api.md, "Holding a slot"). */
  noEvent?: boolean;
  /** Works on the fixture's incident (which must then exist). */
  incident?: boolean;
  /** Works on the fixture's hold (which must then exist, live). */
  hold?: boolean;
  /** Changes the fixture's incident (cancel, reschedule, close), its hold (release) or its plan (cancel-plan). */
  changes?: "cancel" | "reschedule" | "close" | "release" | "cancel-plan";
  /** The fixture's incident has started (half an hour ago, STARTED_AT), as closing needs. */
  started?: boolean;
  /** Works on the fixture's plan (which must then exist). */
  plan?: boolean;
  /** Besides its own row, the tables it writes a row of (create-plan: its first visit's incident). */
  alsoWrites?: WriteTable[];
  /** The events it records (default 1 for a write, 0 for a read or a noEvent write). */
  events?: number;
  /** Reads the org's services (the fixture then has one). */
  services?: boolean;
  /** Answered from what authentication read with the key: no round trip of its own. */
  noTripOfItsOwn?: boolean;
}

/** Every operation of the API, as tests send it. */
export const OPERATIONS: Operation[] = [
  {
    name: "create lead",
    tool: "create_lead",
    method: "POST",
    path: () => "/api/v1/leads",
    args: () => ({ firstName: "Fay", email: "fay@example.com" }),
    writes: "leads",
  },
  {
    name: "create contact",
    tool: "create_contact",
    method: "POST",
    path: () => "/api/v1/contacts",
    args: (f) => ({ firstName: "Col", accountId: f.accountId }),
    writes: "contacts",
  },
  {
    name: "list contacts",
    tool: "list_contacts",
    method: "GET",
    path: () => "/api/v1/contacts?limit=10",
    args: () => ({ limit: 10 }),
  },
  {
    name: "get account",
    tool: "get_account",
    method: "GET",
    path: (f) => `/api/v1/accounts/${f.accountId}`,
    args: (f) => ({ id: f.accountId }),
  },
  {
    name: "available appointments",
    tool: "find_available_appointments",
    method: "POST",
    path: () => "/api/v1/ai-agent/available-appointments",
    args: () => ({ dateTime: SLOT, limit: 5 }),
  },
  {
    name: "is booking available",
    tool: "check_booking_availability",
    method: "POST",
    path: () => "/api/v1/ai-agent/is-booking-available",
    args: () => ({ dateTime: SLOT }),
  },
  {
    name: "create incident",
    tool: "create_incident",
    method: "POST",
    path: () => "/api/v1/ai-agent/create-incident",
    args: () => ({ dateTime: SLOT, clientName: ACCOUNT_NAME, insectName: "Termites", phone: PHONE, notes: "Gate 4" }),
    writes: "incidents",
  },
  {
    name: "hold slot",
    tool: "hold_slot",
    method: "POST",
    path: () => "/api/v1/ai-agent/hold-slot",
    args: () => ({ dateTime: SLOT, holdMinutes: 5 }),
    writes: "holds",
    writtenId: "holdId",
    noEvent: true,
  },
  {
    name: "release hold",
    tool: "release_hold",
    method: "POST",
    path: () => "/api/v1/ai-agent/release-hold",
    args: (f) => ({ holdId: f.holdId }),
    hold: true,
    changes: "release",
    noEvent: true,
  },
  {
    name: "get call context",
    tool: "get_call_context",
    method: "GET",
    path: () => "/api/v1/ai-agent/context",
    args: () => ({}),
    services: true,
  },
  {
    name: "list services",
    tool: "list_services",
    method: "GET",
    path: () => "/api/v1/services",
    args: () => ({}),
    services: true,
    noTripOfItsOwn: true,
  },
  {
    name: "find caller",
    tool: "find_caller",
    method: "POST",
    path: () => "/api/v1/ai-agent/find-caller",
    args: () => ({ phone: "(917) 555-0134" }),
    incident: true,
  },
  {
    name: "get incident",
    tool: "get_incident",
    method: "GET",
    path: (f) => `/api/v1/incidents/${f.incidentId}`,
    args: (f) => ({ id: f.incidentId }),
    incident: true,
  },
  {
    name: "list incidents",
    tool: "list_incidents",
    method: "GET",
    path: () => `/api/v1/incidents?limit=10&phone=${encodeURIComponent(PHONE)}`,
    args: () => ({ limit: 10, phone: PHONE }),
    incident: true,
  },
  {
    name: "list events",
    tool: "list_events",
    method: "GET",
    path: () => "/api/v1/events?limit=10",
    args: () => ({ limit: 10 }),
  },
  {
    name: "cancel incident",
    tool: "cancel_incident",
    method: "POST",
    path: (f) => `/api/v1/incidents/${f.incidentId}/cancel`,
    args: () => ({ reason: "Moved away" }),
    incident: true,
    changes: "cancel",
  },
  {
    name: "reschedule incident",
    tool: "reschedule_incident",
    method: "POST",
    path: (f) => `/api/v1/incidents/${f.incidentId}/reschedule`,
    args: () => ({ dateTime: NEW_SLOT }),
    incident: true,
    changes: "reschedule",
  },
  {
    name: "close incident",
    tool: "close_incident",
    method: "POST",
    path: (f) => `/api/v1/incidents/${f.incidentId}/close`,
    args: () => ({ outcome: "completed", note: "Treated the garage" }),
    incident: true,
    started: true,
    changes: "close",
  },
  {
    name: "create plan",
    tool: "create_plan",
    method: "POST",
    path: () => "/api/v1/ai-agent/create-plan",
    args: () => ({
      dateTime: SLOT,
      clientName: ACCOUNT_NAME,
      insectName: "Termites",
      phone: PHONE,
      notes: "Gate 4",
      every: { count: 1, unit: "month" },
    }),
    writes: "plans",
    writtenId: "plan",
    alsoWrites: ["incidents"],
    events: 2,
  },
  {
    name: "get plan",
    tool: "get_plan",
    method: "GET",
    path: (f) => `/api/v1/plans/${f.planId}`,
    args: (f) => ({ id: f.planId }),
    plan: true,
  },
  {
    name: "list plans",
    tool: "list_plans",
    method: "GET",
    path: () => `/api/v1/plans?limit=10&phone=${encodeURIComponent(PHONE)}`,
    args: () => ({ limit: 10, phone: PHONE }),
    plan: true,
  },
  {
    name: "cancel plan",
    tool: "cancel_plan",
    method: "POST",
    path: (f) => `/api/v1/plans/${f.planId}/cancel`,
    args: () => ({ reason: "Moved away" }),
    plan: true,
    changes: "cancel-plan",
  },
  {
    name: "get board",
    tool: "get_board",
    method: "GET",
    path: () => `/api/v1/board?date=${SLOT.slice(0, 10)}`,
    args: () => ({ date: SLOT.slice(0, 10) }),
    incident: true,
    hold: true,
  },
];
export const CHANGES = OPERATIONS.filter((op) => op.changes);
/** The changes of the fixture's incident (cancel, reschedule, close): a conditional UPDATE of it and its event, in one batch. */
export const INCIDENT_CHANGES = CHANGES.filter((op) => op.incident);
/** The sampled tool names, sorted: what a suite's table keyed by tool must hold. */
export const TOOLS = OPERATIONS.map((op) => op.tool).sort();

export type Transport = "http" | "mcp";

// The fixture of a path as src/routes declares it: each id is `{id}`.
const TEMPLATE: Fixture = {
  tenant: { orgId: "", apiKey: "", keyId: "" },
  accountId: "{id}",
  incidentId: "{id}",
  holdId: "{holdId}",
  planId: "{id}",
};

/** The operation's path as src/routes declares it (`/api/v1/incidents/{id}/cancel`), without the sample's query. */
export const pathTemplate = (op: Operation): string => op.path(TEMPLATE).split("?")[0]!;

/** The sample as an HTTP request: its path (with its query) and, for a POST, its body. */
export const httpRequest = (op: Operation, f: Fixture): { path: string; body?: Record<string, unknown> } => ({
  path: op.path(f),
  body: op.method === "POST" ? op.args(f) : undefined,
});

/** The sample as the arguments of the operation's tool: a tool on one incident or plan takes its id (the HTTP path holds it). */
export const toolArguments = (op: Operation, f: Fixture): Record<string, unknown> => ({
  ...(op.incident && op.path(f).includes(f.incidentId) ? { id: f.incidentId } : {}),
  ...(op.plan && op.path(f).includes(f.planId) ? { id: f.planId } : {}),
  ...op.args(f),
});

/** One request to the app with `binding` as its D1, over HTTP or as an MCP tool call. */
export async function send(
  binding: D1Database,
  transport: Transport,
  op: Operation,
  f: Fixture,
  idempotencyKey?: string,
): Promise<ReadResponse> {
  const headers: Record<string, string> = idempotencyKey === undefined ? {} : { "Idempotency-Key": idempotencyKey };
  const bindings = { DB: binding };
  if (transport === "mcp") return mcpCall(f.tenant, op.tool, toolArguments(op, f), { headers, bindings });
  const { path, body } = httpRequest(op, f);
  return call(f.tenant, path, { body, headers, bindings });
}
