// Cost budgets of every endpoint, measured on the real app over a recording
// D1 binding: at most 2 round trips per request including authentication (a
// key the isolate has not verified yet), 1 once the isolate has verified the
// key, and no statement that scans a tenant table instead of searching an index.
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { and, eq, inArray } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { apiKeys, events, webhookEndpoints } from "../../../drizzle/schema";
import app from "../../../src/app";
import { WEBHOOK_COMMANDS } from "../../../src/cli/webhooks";
import { createKey } from "../../../src/db/api-keys";
import type { Bindings as WorkerBindings } from "../../../src/env";
import { newId } from "../../../src/lib/ids";
import { storeVisit } from "../../support/board";
import { addService, addTechnician } from "../../support/catalogue";
import { type Statement, type Trip, type WrappedD1, wrapD1 } from "../../support/d1";
import { toRequest } from "../../support/http";
import { bookIncident } from "../../support/incidents";
import { fakeQueue } from "../../support/queue";
import { call } from "../../support/request";
import { addAccount, db, openTenant, type Tenant } from "../../support/tenants";
import { slotAt, slotIn } from "../../support/time";

const TENANT_TABLES = [
  "holds",
  "orgs",
  "api_keys",
  "accounts",
  "contacts",
  "leads",
  "incidents",
  "events",
  "webhook_endpoints",
  "webhook_secrets",
  "services",
  "technicians",
];

let tenant: Tenant;
let accountId: string;
let cursor: string;
let incidentId: string;
let incidentCursor: string;
let eventCursor: string;
let contactEventCursor: string;
// A whole UTC hour two days ahead: open, far from notice and horizon edges.
const slot = slotAt(2, 15);

/** A GET, or a POST of `body`, as the tenant with `apiKey`, on the recording binding. */
const send = (recorder: WrappedD1, path: string, body?: unknown, apiKey = tenant.apiKey, idempotencyKey?: string) =>
  call({ ...tenant, apiKey }, path, {
    body,
    headers: idempotencyKey ? { "Idempotency-Key": idempotencyKey } : {},
    bindings: { DB: recorder.db },
  });

async function plan({ sql, params }: Statement): Promise<string[]> {
  const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .bind(...params)
    .all<{ detail: string }>();
  return results.map((row) => row.detail);
}

beforeAll(async () => {
  tenant = await openTenant(undefined, { capacity: 5 });
  accountId = (await addAccount(tenant, "Budget Account")).id;
  const warm = wrapD1(env.DB);
  // The first request of a key records its last use (off the response path).
  for (let i = 0; i < 3; i++) await send(warm, "/api/v1/contacts", { firstName: `c${i}` });
  cursor = (await send(warm, "/api/v1/contacts?limit=1")).body.nextCursor;
  for (let i = 0; i < 2; i++) incidentId = (await bookIncident(tenant, { phone: "+19175550134" })).id;
  incidentCursor = (await send(warm, "/api/v1/incidents?limit=1")).body.nextCursor;
  eventCursor = (await send(warm, "/api/v1/events?limit=1")).body.nextCursor;
  contactEventCursor = (await send(warm, "/api/v1/events?type=contact.created&limit=1")).body.nextCursor;
});

describe("D1 budget per request", () => {
  it.each([
    ["create a lead", "/api/v1/leads", {}],
    ["create a contact", "/api/v1/contacts", { firstName: "A" }],
    ["create a contact linked to an account", "/api/v1/contacts", () => ({ firstName: "B", accountId })],
    ["list contacts", "/api/v1/contacts?limit=2", undefined],
    ["list contacts after a cursor", () => `/api/v1/contacts?limit=2&cursor=${cursor}`, undefined],
    ["list contacts by account", () => `/api/v1/contacts?accountId=${accountId}`, undefined],
    ["list contacts by email", "/api/v1/contacts?email=a@b.co", undefined],
    ["list contacts updated since", "/api/v1/contacts?updatedSince=2026-01-01T00:00:00Z", undefined],
    ["list contacts by phone", "/api/v1/contacts?phone=%2B19175550134", undefined],
    ["read an account", () => `/api/v1/accounts/${accountId}`, undefined],
    ["find a caller", "/api/v1/ai-agent/find-caller", { phone: "917 555 0134" }],
    ["read an incident", () => `/api/v1/incidents/${incidentId}`, undefined],
    ["list incidents", "/api/v1/incidents?limit=2", undefined],
    ["list incidents after a cursor", () => `/api/v1/incidents?limit=2&cursor=${incidentCursor}`, undefined],
    ["list incidents in a window", `/api/v1/incidents?from=${slot}&to=2030-01-01T00:00:00Z`, undefined],
    ["list incidents by status", "/api/v1/incidents?status=scheduled", undefined],
    ["list incidents by account", () => `/api/v1/incidents?accountId=${accountId}`, undefined],
    ["list incidents by phone", "/api/v1/incidents?phone=%2B19175550134", undefined],
    ["list incidents updated since", "/api/v1/incidents?updatedSince=2026-01-01T00:00:00Z", undefined],
    ["list events", "/api/v1/events?limit=2", undefined],
    ["list events of a type", "/api/v1/events?type=contact.created&limit=2", undefined],
    ["list events after a cursor", () => `/api/v1/events?limit=2&cursor=${eventCursor}`, undefined],
    [
      "list events of a type after a cursor",
      () => `/api/v1/events?type=contact.created&limit=2&cursor=${contactEventCursor}`,
      undefined,
    ],
    ["get the call context", "/api/v1/ai-agent/context", undefined],
    ["find available appointments", "/api/v1/ai-agent/available-appointments", () => ({ dateTime: slot, limit: 20 })],
    ["check a booking", "/api/v1/ai-agent/is-booking-available", () => ({ dateTime: slot })],
    [
      "book an incident",
      "/api/v1/ai-agent/create-incident",
      () => ({ dateTime: slot, clientName: "Budget Account", insectName: "Ants" }),
    ],
  ] as const)("%s: 2 round trips cold, 1 warm, every statement on an index", async (_name, path, body) => {
    const request = () =>
      [typeof path === "function" ? path() : path, typeof body === "function" ? body() : body] as const;
    // A key this isolate has never verified, used within the minute (so its last-use hint is not due).
    const { apiKey, keyId } = (await createKey(db(), tenant.orgId))!;
    await db().update(apiKeys).set({ lastUsedAt: Date.now() }).where(eq(apiKeys.id, keyId));

    const cold = wrapD1(env.DB);
    expect((await send(cold, ...request(), apiKey)).status).toBe(200);
    // Authentication (with the org's schedule) is one, the operation the other.
    expect(cold.trips.length, JSON.stringify(cold.trips)).toBe(2);

    const warm = wrapD1(env.DB);
    expect((await send(warm, ...request(), apiKey)).status).toBe(200);
    // The isolate verified the key a moment ago: only the operation remains.
    expect(warm.trips.length, JSON.stringify(warm.trips)).toBe(1);
    const sqlOf = (trip?: Trip) => trip?.sql;
    expect(sqlOf(warm.trips[0])).toEqual(sqlOf(cold.trips[1]));

    for (const statement of cold.trips.flatMap((trip) => trip.statements)) {
      const details = await plan(statement);
      const scans = details.filter((d) => TENANT_TABLES.some((table) => new RegExp(`^SCAN ${table}\\b`).test(d)));
      expect(scans, `${statement.sql}\n${details.join("\n")}`).toEqual([]);
    }
  });

  it.each([
    ["create a lead", "/api/v1/leads", { firstName: "Idem" }],
    ["create a contact", "/api/v1/contacts", { firstName: "Idem" }],
    [
      "book an incident",
      "/api/v1/ai-agent/create-incident",
      { dateTime: slot, clientName: "Idem", insectName: "Ants" },
    ],
  ] as const)(
    "%s with an Idempotency-Key: 1 round trip warm (the claim, the write and its recorded outcome in one batch), 2 to replay",
    async (_name, path, body) => {
      const key = crypto.randomUUID();
      // The isolate's key cache lasts 3 s: verify the key just before measuring.
      await send(wrapD1(env.DB), "/api/v1/contacts?limit=1");
      const first = wrapD1(env.DB);
      expect((await send(first, path, body, tenant.apiKey, key)).status).toBe(200);
      expect(first.trips.length, JSON.stringify(first.trips)).toBe(1);
      expect(first.trips[0]!.sql[1]).toMatch(/^insert into "idempotency_keys"/i);
      // The replay's batch meets the record and is rolled back; the record is the answer.
      const replay = wrapD1(env.DB);
      const replayed = await send(replay, path, body, tenant.apiKey, key);
      expect(replayed.headers.get("Idempotent-Replayed")).toBe("true");
      expect(replay.trips.length, JSON.stringify(replay.trips)).toBe(2);
    },
  );

  /** A visit that started half an hour ago, stored (the API books only future slots): what the office closes. */
  const startedVisit = () => storeVisit(tenant, { start: new Date(Date.now() - 30 * 60_000).toISOString() });
  const bookedVisit = async () => (await bookIncident(tenant)).id;

  it.each([
    ["cancel an incident", "cancel", bookedVisit, () => ({ reason: "budget" })],
    ["reschedule an incident", "reschedule", bookedVisit, () => ({ dateTime: slotAt(3, 10) })],
    ["close an incident", "close", startedVisit, () => ({ outcome: "completed", note: "budget" })],
  ] as const)(
    "%s: 2 round trips cold, 1 warm (the change decided and written by its batch), 1 with an Idempotency-Key (its claim and record in that batch), every statement on an index",
    async (_name, action, visit, body) => {
      const { apiKey, keyId } = (await createKey(db(), tenant.orgId))!;
      await db().update(apiKeys).set({ lastUsedAt: Date.now() }).where(eq(apiKeys.id, keyId));
      const cold = wrapD1(env.DB);
      expect((await send(cold, `/api/v1/incidents/${await visit()}/${action}`, body(), apiKey)).status).toBe(200);
      expect(cold.trips.length, JSON.stringify(cold.trips)).toBe(2);

      const other = await visit();
      const warm = wrapD1(env.DB);
      const answer = await send(warm, `/api/v1/incidents/${other}/${action}`, body(), apiKey);
      expect(answer.status).toBe(200);
      expect(warm.trips.length, JSON.stringify(warm.trips)).toBe(1);
      // The event and the change, nothing else: the incident is read only when the change does not apply.
      expect(warm.trips[0]!.statements.length, JSON.stringify(warm.trips)).toBe(2);
      // The answer is the incident as a read of it after the change shows it.
      expect(answer.body).toEqual((await call(tenant, `/api/v1/incidents/${other}`)).body);

      const keyed = wrapD1(env.DB);
      const path = `/api/v1/incidents/${await visit()}/${action}`;
      expect((await send(keyed, path, body(), apiKey, crypto.randomUUID())).status).toBe(200);
      // The change with the key's claim and its recorded outcome: nothing after it.
      expect(keyed.trips.length, JSON.stringify(keyed.trips)).toBe(1);
      expect(keyed.trips.at(-1)?.sql.some((sql) => sql.includes("idempotency_keys"))).toBe(true);

      for (const statement of [...cold.trips, ...keyed.trips].flatMap((trip) => trip.statements)) {
        const details = await plan(statement);
        const scans = details.filter((d) => TENANT_TABLES.some((table) => new RegExp(`^SCAN ${table}\\b`).test(d)));
        expect(scans, `${statement.sql}\n${details.join("\n")}`).toEqual([]);
      }
    },
  );

  it("availability reads the partial index of the incidents that occupy their span, covering, without a temporary b-tree", async () => {
    const recorded = wrapD1(env.DB);
    await send(recorded, "/api/v1/ai-agent/available-appointments", { dateTime: slot, limit: 5 });
    const read = recorded.trips.flatMap((trip) => trip.statements).find((s) => /from "incidents"/i.test(s.sql));
    const details = await plan(read!);
    expect(details.join("\n")).toMatch(/USING COVERING INDEX incidents_occupying_org_starts_occupied/);
    expect(details.join("\n")).not.toMatch(/TEMP B-TREE/);
  });

  it("a hold, a booking on it and a release: 1 round trip warm each, every statement on an index; the hold's occupancy read from holds_org_starts", async () => {
    // Its own start: the holds must not take places the other cases book.
    const start = slotAt(4, 11);
    await send(wrapD1(env.DB), "/api/v1/contacts?limit=1");
    const held = wrapD1(env.DB);
    const hold = await send(held, "/api/v1/ai-agent/hold-slot", { dateTime: start });
    expect(hold.status).toBe(200);
    const booked = wrapD1(env.DB);
    const booking = { dateTime: start, clientName: "Held", insectName: "Ants", holdId: hold.body.holdId };
    expect((await send(booked, "/api/v1/ai-agent/create-incident", booking)).body.holdExpired).toBe(false);
    const second = await send(wrapD1(env.DB), "/api/v1/ai-agent/hold-slot", { dateTime: start });
    const released = wrapD1(env.DB);
    expect((await send(released, "/api/v1/ai-agent/release-hold", { holdId: second.body.holdId })).status).toBe(200);
    for (const recorder of [held, booked, released]) {
      expect(recorder.trips.length, JSON.stringify(recorder.trips)).toBe(1);
      for (const statement of recorder.trips.flatMap((trip) => trip.statements)) {
        const details = await plan(statement);
        const scans = details.filter((d) => TENANT_TABLES.some((table) => new RegExp(`^SCAN ${table}\\b`).test(d)));
        expect(scans, `${statement.sql}\n${details.join("\n")}`).toEqual([]);
      }
    }
    const recorded = wrapD1(env.DB);
    await send(recorded, "/api/v1/ai-agent/available-appointments", { dateTime: start, limit: 5 });
    const read = recorded.trips.flatMap((trip) => trip.statements).find((s) => /from "holds"/i.test(s.sql));
    expect((await plan(read!)).join("\n")).toMatch(/SEARCH holds USING COVERING INDEX holds_org_starts/);
    // A booking on a hold reads the hold only when refused, in the refusal's own trip (a booking that
    // goes ahead takes no extra trip: `booked` above); here the hold is unknown to the org.
    const refused = wrapD1(env.DB);
    const unknown = `${hold.body.holdId.slice(0, -1)}${hold.body.holdId.endsWith("0") ? "1" : "0"}`;
    const again = await send(refused, "/api/v1/ai-agent/create-incident", { ...booking, holdId: unknown });
    expect(again.status, JSON.stringify(again.body)).toBe(422);
    expect(refused.trips.map((trip) => trip.statements.length)).toEqual([3, 1]);
  });

  it.each([
    ["no filter", (): string => "/api/v1/events?limit=5", "events_org_seq"],
    ["a cursor", (): string => `/api/v1/events?limit=5&cursor=${eventCursor}`, "events_org_seq"],
    ["a type", (): string => "/api/v1/events?type=contact.created", "events_org_type_seq"],
    [
      "a type and a cursor",
      (): string => `/api/v1/events?type=contact.created&cursor=${contactEventCursor}`,
      "events_org_type_seq",
    ],
  ] as const)(
    "the events list with %s searches %s in seq order, without a temporary b-tree",
    async (_name, path, index) => {
      const recorded = wrapD1(env.DB);
      expect((await send(recorded, path())).status).toBe(200);
      const reads = recorded.trips.flatMap((trip) => trip.statements).filter((s) => /from "events"/i.test(s.sql));
      expect(reads).toHaveLength(1);
      const details = (await plan(reads[0]!)).join("\n");
      expect(details).toMatch(new RegExp(`^SEARCH events USING (COVERING )?INDEX ${index} \\(org_id=\\?`, "m"));
      expect(details).not.toMatch(/TEMP B-TREE/);
    },
  );

  it("with a subscribed endpoint, a write is still 1 round trip warm; marking its event sent is 1 more, after the answer; the endpoints are read from webhook_endpoints_org", async () => {
    const subscribed = await openTenant(undefined, { capacity: 5 });
    await WEBHOOK_COMMANDS["webhook add"]!(
      db(),
      { org: subscribed.orgId, url: "https://hooks.example.com/x" },
      { webhookKey: () => (env as unknown as WorkerBindings).WEBHOOK_SECRET_KEY! },
    );
    // A fake delivery queue: the real one would deliver to the URL above.
    const { queue, messages: sent } = fakeQueue();
    const answerWithQueue = async (recorder: WrappedD1, path: string, body?: unknown) => {
      const ctx = createExecutionContext();
      const bindings = { ...(env as unknown as WorkerBindings), DB: recorder.db, WEBHOOKS: queue };
      const response = await app.fetch(toRequest(`https://api.test${path}`, subscribed, { body }), bindings, ctx);
      await waitOnExecutionContext(ctx);
      return response;
    };
    const sendWithQueue = async (recorder: WrappedD1, path: string, body?: unknown) =>
      (await answerWithQueue(recorder, path, body)).status;
    for (const [path, body] of [
      ["/api/v1/leads", { firstName: "Hook" }],
      ["/api/v1/contacts", { firstName: "Hook" }],
      ["/api/v1/ai-agent/create-incident", { dateTime: slotIn(30), clientName: "Hook", insectName: "Ants" }],
    ] as const) {
      // Verify the key (its cache lasts 3 s) and record its first use before measuring.
      expect(await sendWithQueue(wrapD1(env.DB), "/api/v1/contacts?limit=1")).toBe(200);
      const recorder = wrapD1(env.DB);
      expect(await sendWithQueue(recorder, path, body)).toBe(200);
      expect(recorder.trips.length, JSON.stringify(recorder.trips)).toBe(2);
      expect(recorder.trips[1]!.sql).toEqual([expect.stringMatching(/^update "events" set "enqueued_at"/)]);
      const statements = recorder.trips.flatMap((trip) => trip.statements);
      for (const statement of statements) {
        const details = await plan(statement);
        const scans = details.filter((d) => TENANT_TABLES.some((table) => new RegExp(`^SCAN ${table}\\b`).test(d)));
        expect(scans, `${statement.sql}\n${details.join("\n")}`).toEqual([]);
      }
      // The event's insert returns its subscribers' ids: no statement of the batch reads them apart.
      expect(statements.filter((s) => /^select .* from "webhook_endpoints"/.test(s.sql))).toEqual([]);
      const insert = statements.find((s) => /^insert into "events"/.test(s.sql));
      expect(insert!.sql).toMatch(/returning .*webhook_endpoints/);
      expect((await plan(insert!)).join("\n")).toMatch(
        /SEARCH webhook_endpoints USING INDEX webhook_endpoints_org \(org_id=\?\)/,
      );
    }
    expect(sent()).toHaveLength(3);

    // Cancel-plan's events (the plan's, then one per visit to come) reach the endpoint as the creates' do.
    const planned = await answerWithQueue(wrapD1(env.DB), "/api/v1/ai-agent/create-plan", {
      dateTime: slotIn(30),
      clientName: "Hook",
      insectName: "Ants",
      phone: "+19175550111",
      every: { count: 1, unit: "week" },
    });
    expect(planned.status, await planned.clone().text()).toBe(200);
    const created = (await planned.json()) as { plan: { id: string } };
    const before = sent().length;
    const recorder = wrapD1(env.DB);
    expect(await sendWithQueue(recorder, `/api/v1/plans/${created.plan.id}/cancel`, {})).toBe(200);
    // One batch, then each event marked sent after the answer.
    for (const trip of recorder.trips.slice(1))
      expect(trip.sql).toEqual([expect.stringMatching(/^update "events" set "enqueued_at"/)]);
    const [endpoint] = await db()
      .select({ id: webhookEndpoints.id })
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.orgId, subscribed.orgId));
    const cancelled = await db()
      .select({ id: events.id, type: events.type })
      .from(events)
      .where(and(eq(events.orgId, subscribed.orgId), inArray(events.type, ["plan.cancelled", "incident.cancelled"])));
    expect(cancelled.filter((e) => e.type === "incident.cancelled").length).toBeGreaterThan(0);
    expect(recorder.trips).toHaveLength(1 + cancelled.length);
    expect(
      sent()
        .slice(before)
        .map((m) => [m.event, m.endpoint])
        .sort(),
    ).toEqual(cancelled.map((e) => [e.id, endpoint!.id]).sort());
  });

  it("the plan check can fail: an unindexed filter is a SCAN", async () => {
    expect(await plan({ sql: "SELECT * FROM contacts WHERE city = ?", params: ["x"] })).toContainEqual(
      expect.stringMatching(/^SCAN contacts/),
    );
  });
});

describe("D1 budget with services and technicians", () => {
  let techTenant: Tenant;
  let serviceId: string;
  const at = slotAt(2, 10);

  beforeAll(async () => {
    techTenant = await openTenant(undefined, { capacity: 5 });
    serviceId = (
      await addService(techTenant, {
        name: "Termites",
        durationMinutes: 180,
        bufferMinutes: 30,
        arrivalWindowMinutes: 120,
        skills: ["termite-license"],
      })
    ).id;
    for (const [i, postalCodes] of [["112"], ["100"], []].entries())
      await addTechnician(techTenant, { name: `Tech ${i}`, skills: ["termite-license"], postalCodes });
  });

  const sendAs = (recorder: WrappedD1, path: string, body: unknown, apiKey: string) =>
    call({ ...techTenant, apiKey }, path, { body, bindings: { DB: recorder.db } });

  it.each([
    [
      "find available appointments",
      "/api/v1/ai-agent/available-appointments",
      () => ({ dateTime: at, limit: 20, serviceId, postalCode: "11201" }),
    ],
    [
      "check a booking",
      "/api/v1/ai-agent/is-booking-available",
      () => ({ dateTime: at, serviceId, postalCode: "11201" }),
    ],
    [
      "book an incident (the technician chosen in the insert)",
      "/api/v1/ai-agent/create-incident",
      () => ({ dateTime: at, clientName: "T", insectName: "termites", serviceId, postalCode: "11201" }),
    ],
  ] as const)(
    "%s: 2 round trips cold (the key with the catalogue), 1 warm, every statement on an index",
    async (_name, path, body) => {
      const { apiKey, keyId } = (await createKey(db(), techTenant.orgId))!;
      await db().update(apiKeys).set({ lastUsedAt: Date.now() }).where(eq(apiKeys.id, keyId));
      const cold = wrapD1(env.DB);
      const first = await sendAs(cold, path, body(), apiKey);
      expect(first.status, first.text).toBe(200);
      expect(cold.trips.length, JSON.stringify(cold.trips)).toBe(2);
      const warm = wrapD1(env.DB);
      expect((await sendAs(warm, path, body(), apiKey)).status).toBe(200);
      expect(warm.trips.length, JSON.stringify(warm.trips)).toBe(1);
      for (const statement of cold.trips.flatMap((trip) => trip.statements)) {
        const details = await plan(statement);
        const scans = details.filter((d) => TENANT_TABLES.some((table) => new RegExp(`^SCAN ${table}\\b`).test(d)));
        expect(scans, `${statement.sql}\n${details.join("\n")}`).toEqual([]);
      }
    },
  );

  it("reschedule a technician's visit: 2 round trips cold, 1 warm (the technician chosen in the change's batch), the answer as a read shows it, every statement on an index", async () => {
    const { apiKey, keyId } = (await createKey(db(), techTenant.orgId))!;
    await db().update(apiKeys).set({ lastUsedAt: Date.now() }).where(eq(apiKeys.id, keyId));
    const book = async (hour: number) => {
      const booked = await call(techTenant, "/api/v1/ai-agent/create-incident", {
        body: { dateTime: slotAt(4, hour), clientName: "T", insectName: "termites", serviceId, postalCode: "11201" },
      });
      expect(booked.status, booked.text).toBe(200);
      return booked.body.id as string;
    };
    const moves = [await book(14), await book(14)];
    const trips = [];
    for (const [i, id] of moves.entries()) {
      const recorder = wrapD1(env.DB);
      const moved = await sendAs(
        recorder,
        `/api/v1/incidents/${id}/reschedule`,
        { dateTime: slotAt(5, 13 + i) },
        apiKey,
      );
      expect(moved.status, moved.text).toBe(200);
      expect(moved.body.technicianId).not.toBeNull();
      expect(moved.body).toEqual((await call(techTenant, `/api/v1/incidents/${id}`)).body);
      trips.push(recorder.trips);
    }
    expect(trips.map((t) => t.length)).toEqual([2, 1]);
    for (const statement of trips.flat().flatMap((trip) => trip.statements)) {
      const details = await plan(statement);
      const scans = details.filter((d) => TENANT_TABLES.some((table) => new RegExp(`^SCAN ${table}\\b`).test(d)));
      expect(scans, `${statement.sql}\n${details.join("\n")}`).toEqual([]);
    }
  });

  it("the assignment, made once by its statement, reads each technician's visits by the (org, technician, start) index", async () => {
    const recorded = wrapD1(env.DB);
    const res = await sendAs(
      recorded,
      "/api/v1/ai-agent/create-incident",
      {
        dateTime: slotAt(3, 10),
        clientName: "T",
        insectName: "termites",
        serviceId,
      },
      techTenant.apiKey,
    );
    expect(res.status, res.text).toBe(200);
    const insert = recorded.trips.flatMap((t) => t.statements).find((s) => /^insert into "incidents"/i.test(s.sql));
    const details = (await plan(insert!)).join("\n");
    expect(details).toMatch(/SEARCH incidents USING (COVERING )?INDEX incidents_org_technician_starts/);
    expect(details).not.toMatch(/SCAN incidents\b/);
    // One assignment, read for the row and for the room (SQLite evaluates a subquery each time it is written).
    expect(insert!.sql.match(/FROM "technicians"/g)).toHaveLength(1);
    const held = wrapD1(env.DB);
    const hold = await sendAs(
      held,
      "/api/v1/ai-agent/hold-slot",
      { dateTime: slotAt(3, 11), serviceId },
      techTenant.apiKey,
    );
    expect(hold.status, hold.text).toBe(200);
    const holdInsert = held.trips.flatMap((t) => t.statements).find((s) => /^insert into "holds"/i.test(s.sql));
    expect(holdInsert!.sql.match(/FROM "technicians"/g)).toHaveLength(1);
  });

  it("a place no technician covers is answered without a scan: no round trip warm", async () => {
    const far = await openTenant();
    await addTechnician(far, { name: "Brooklyn only", postalCodes: ["112"] });
    const body = { dateTime: at, limit: 10, postalCode: "90210" };
    const first = await call(far, "/api/v1/ai-agent/available-appointments", { body });
    expect(first.body).toEqual({ timeZone: "UTC", slots: [] });
    const warm = wrapD1(env.DB);
    const res = await call(far, "/api/v1/ai-agent/available-appointments", { body, bindings: { DB: warm.db } });
    expect(res.body).toEqual({ timeZone: "UTC", slots: [] });
    expect(warm.trips).toEqual([]);
  });

  it("the services list is answered from the catalogue read with the key: no round trip warm", async () => {
    await sendAs(wrapD1(env.DB), "/api/v1/services", undefined, techTenant.apiKey);
    const warm = wrapD1(env.DB);
    expect((await sendAs(warm, "/api/v1/services", undefined, techTenant.apiKey)).status).toBe(200);
    expect(warm.trips).toEqual([]);
  });
});

describe("D1 budget of an agent key bound to its caller (docs/api.md, 'The caller of a call')", () => {
  // The caller of the incidents booked in beforeAll (+19175550134), as a platform may spell it.
  const CALLER = { "X-Caller-Phone": "+1 (917) 555-0134" };
  const OTHER_PHONE = "+19175550155";
  let hour = 0;
  /** Another whole hour five days ahead or more: rescheduling there never meets a full slot. */
  const newSlot = () => slotAt(5 + Math.floor(hour / 20), 1 + (hour++ % 20));

  /** A key of `role` this isolate has never verified, used within the minute (its last-use hint is not due). */
  async function coldKey(role: "office" | "agent"): Promise<string> {
    const { apiKey, keyId } = (await createKey(db(), tenant.orgId, role))!;
    await db().update(apiKeys).set({ lastUsedAt: Date.now() }).where(eq(apiKeys.id, keyId));
    return apiKey;
  }

  const sendWith = (
    recorder: WrappedD1,
    apiKey: string,
    path: string,
    body: unknown,
    headers: Record<string, string>,
  ) => call({ ...tenant, apiKey }, path, { body, headers, bindings: { DB: recorder.db } });

  type Request = () => Promise<readonly [string, unknown?]>;

  /** The round trips of one request with a new key of `role` (cold), then of another (warm); each request is built anew (a cancel happens once). */
  async function measure(role: "office" | "agent", request: Request, status = 200) {
    const apiKey = await coldKey(role);
    const headers = role === "agent" ? CALLER : {};
    const [coldPath, coldBody] = await request();
    const cold = wrapD1(env.DB);
    const first = await sendWith(cold, apiKey, coldPath, coldBody, headers);
    expect(first.status, first.text).toBe(status);
    const [warmPath, warmBody] = await request();
    const warm = wrapD1(env.DB);
    const second = await sendWith(warm, apiKey, warmPath, warmBody, headers);
    expect(second.status, second.text).toBe(status);
    return { cold, warm, answers: [first, second] };
  }

  async function expectIndexed(recorders: WrappedD1[]) {
    for (const statement of recorders.flatMap((r) => r.trips).flatMap((trip) => trip.statements)) {
      const details = await plan(statement);
      const scans = details.filter((d) => TENANT_TABLES.some((table) => new RegExp(`^SCAN ${table}\\b`).test(d)));
      expect(scans, `${statement.sql}\n${details.join("\n")}`).toEqual([]);
    }
  }

  /** A new incident of the caller (or of `phone`), booked by the office key. */
  const booked = async (phone = "+19175550134") => (await bookIncident(tenant, { phone })).id;

  it.each([
    ["read an incident", () => Promise.resolve([`/api/v1/incidents/${incidentId}`] as const), undefined],
    ["list incidents", () => Promise.resolve(["/api/v1/incidents?limit=2"] as const), undefined],
    ["list incidents by phone", () => Promise.resolve(["/api/v1/incidents?phone=%2B19175550134"] as const), undefined],
    [
      "find a caller",
      () => Promise.resolve(["/api/v1/ai-agent/find-caller", { phone: "917 555 0134" }] as const),
      // The agent leaves the phone out: it is the caller's.
      () => Promise.resolve(["/api/v1/ai-agent/find-caller", {}] as const),
    ],
    [
      "cancel an incident",
      async () => [`/api/v1/incidents/${await booked()}/cancel`, { reason: "budget" }] as const,
      undefined,
    ],
    [
      "reschedule an incident",
      async () => [`/api/v1/incidents/${await booked()}/reschedule`, { dateTime: newSlot() }] as const,
      undefined,
    ],
  ] as const)(
    "%s: an agent key with a caller takes the round trips an office key takes, every statement on an index",
    async (_name, request: Request, agentRequest: Request | undefined) => {
      const office = await measure("office", request);
      const agent = await measure("agent", agentRequest ?? request);
      expect(agent.cold.trips.length, JSON.stringify(agent.cold.trips)).toBe(office.cold.trips.length);
      expect(agent.warm.trips.length, JSON.stringify(agent.warm.trips)).toBe(office.warm.trips.length);
      // The binding is a condition of the operation's own statements, not a statement of its own.
      expect(agent.warm.trips.map((trip) => trip.statements.length)).toEqual(
        office.warm.trips.map((trip) => trip.statements.length),
      );
      // The agent's answers are its caller's: the same records the office key sees for that number.
      for (const answer of agent.answers) {
        const phones = answer.body.data
          ? answer.body.data.map((row: { phone: string }) => row.phone)
          : [answer.body.phone];
        expect(phones.length, answer.text).toBeGreaterThan(0);
        for (const phone of phones) expect(phone, answer.text).toBe("+19175550134");
      }
      await expectIndexed([agent.cold, agent.warm]);
    },
  );

  it.each([
    ["read", (id: string) => [`/api/v1/incidents/${id}`] as const],
    ["cancel", (id: string) => [`/api/v1/incidents/${id}/cancel`, { reason: "budget" }] as const],
    ["reschedule", (id: string) => [`/api/v1/incidents/${id}/reschedule`, { dateTime: newSlot() }] as const],
  ] as const)(
    "%s another caller's incident: the 404 an unknown id gets, in the same round trips and statements, and nothing changes",
    async (_name, request) => {
      const others = [await booked(OTHER_PHONE), await booked(OTHER_PHONE)];
      let next = 0;
      const other = await measure("agent", async () => request(others[next++]!), 404);
      const unknown = await measure("agent", async () => request(newId("inc")), 404);
      for (const m of [other, unknown]) for (const a of m.answers) expect(a.body.code).toBe("incident_not_found");
      expect(other.cold.trips.length, JSON.stringify(other.cold.trips)).toBe(unknown.cold.trips.length);
      expect(other.warm.trips.length, JSON.stringify(other.warm.trips)).toBe(unknown.warm.trips.length);
      expect(other.warm.trips.map((trip) => trip.sql)).toEqual(unknown.warm.trips.map((trip) => trip.sql));
      // The office key sees both incidents as they were booked.
      for (const id of others) {
        const seen = await call(tenant, `/api/v1/incidents/${id}`);
        expect(seen.body).toMatchObject({ status: "scheduled", phone: OTHER_PHONE });
        expect(seen.body.updatedAt).toBe(seen.body.createdAt);
      }
      await expectIndexed([other.cold, other.warm]);
    },
  );
});

describe("D1 budget of a tool call: an agent key's call over MCP, Vapi or Retell takes its operation's round trips over HTTP", () => {
  // The caller of the incidents booked in beforeAll, as each transport reports it.
  const PHONE = "+19175550134";
  const envelope = { id: "call-budget", from_number: PHONE, customer: { number: PHONE } };
  let agentKey: string;
  beforeAll(async () => {
    const { apiKey, keyId } = (await createKey(db(), tenant.orgId, "agent"))!;
    await db().update(apiKeys).set({ lastUsedAt: Date.now() }).where(eq(apiKeys.id, keyId));
    agentKey = apiKey;
  });

  type Operation = { tool: string; path: string; args: Record<string, unknown>; body?: unknown };
  /** The request (path, body, headers) of the operation over each transport. */
  const TRANSPORTS: Record<string, (op: Operation) => [string, unknown, Record<string, string>]> = {
    http: (op) => [op.path, op.body, { "X-Caller-Phone": PHONE }],
    mcp: (op) => [
      "/mcp",
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: op.tool, arguments: op.args } },
      { Accept: "application/json, text/event-stream", "X-Caller-Phone": PHONE },
    ],
    vapi: (op) => [
      "/api/v1/integrations/vapi/tool-calls",
      {
        message: {
          type: "tool-calls",
          call: envelope,
          toolCallList: [{ id: "c1", type: "function", function: { name: op.tool, arguments: op.args } }],
        },
      },
      {},
    ],
    retell: (op) => [`/api/v1/integrations/retell/${op.tool}`, { name: op.tool, call: envelope, args: op.args }, {}],
  };

  /** The operation's answer as its transport carries it (the text a platform hands its model). */
  function answerOf(transport: string, res: Awaited<ReturnType<typeof call>>): { ok: boolean; text: string } {
    if (transport === "mcp") return { ok: !res.body.result.isError, text: res.body.result.content[0].text };
    if (transport === "vapi") return { ok: !res.body.results[0].error, text: res.body.results[0].result };
    return { ok: res.status === 200, text: res.text };
  }

  it.each([
    ["find the caller", () => ({ tool: "find_caller", path: "/api/v1/ai-agent/find-caller", args: {}, body: {} })],
    [
      "check a booking",
      () => ({
        tool: "check_booking_availability",
        path: "/api/v1/ai-agent/is-booking-available",
        args: { dateTime: slot },
        body: { dateTime: slot },
      }),
    ],
    [
      "read an incident",
      () => ({ tool: "get_incident", path: `/api/v1/incidents/${incidentId}`, args: { id: incidentId } }),
    ],
    [
      "create a lead",
      () => ({ tool: "create_lead", path: "/api/v1/leads", args: { firstName: "Tool" }, body: { firstName: "Tool" } }),
    ],
  ] as const)("%s: 1 round trip warm over each, the very statements of HTTP's", async (_name, operation) => {
    const op: Operation = operation();
    const trips: Record<string, Trip[]> = {};
    for (const [transport, request] of Object.entries(TRANSPORTS)) {
      const [path, body, headers] = request(op);
      const send = (recorder: WrappedD1) =>
        call({ ...tenant, apiKey: agentKey }, path, { body, headers, bindings: { DB: recorder.db } });
      await send(wrapD1(env.DB));
      const warm = wrapD1(env.DB);
      const answer = answerOf(transport, await send(warm));
      expect(answer.ok, `${transport}: ${answer.text}`).toBe(true);
      // The call is bound to the caller its transport reported.
      if (op.tool === "find_caller") expect(JSON.parse(answer.text).phone, transport).toBe(PHONE);
      trips[transport] = warm.trips;
    }
    for (const [transport, warm] of Object.entries(trips)) {
      expect(warm.length, `${transport}: ${JSON.stringify(warm.map((trip) => trip.sql))}`).toBe(1);
      expect(
        warm.map((trip) => trip.sql),
        transport,
      ).toEqual(trips.http!.map((trip) => trip.sql));
    }
  });
});
