// The outbox (docs/webhooks.md, "Events"): every change the API makes records exactly
// one event in its own batch, carrying the resource as the API answered; a
// refused, replayed or no-op request records none. The event goes to the
// delivery queue once per subscribed endpoint after the answer (or, when that
// send fails, by the minute's sweep), and the hourly cron purges events after
// 30 days. Driven through the real app and D1; the queue is a fake that
// records what is sent (the real one would deliver to the test's URLs).
import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { and, eq, gt } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { type EventType, events, webhookEndpoints } from "../../../drizzle/schema";
import app from "../../../src/app";
import { WEBHOOK_COMMANDS } from "../../../src/cli/webhooks";
import type { Bindings as WorkerBindings } from "../../../src/env";
import worker from "../../../src/index";
import type { DeliveryMessage } from "../../../src/webhooks/queue";
import { SWEEP_CRON, sweep } from "../../../src/webhooks/sweep";
import { type ReadResponse, type RequestOptions, readResponse, toRequest } from "../../support/http";
import { bookIncident } from "../../support/incidents";
import { expectProblem } from "../../support/problem";
import { fakeQueue } from "../../support/queue";
import { call } from "../../support/request";
import { addAccount, db, openTenant, type Tenant } from "../../support/tenants";
import { DAY, slotIn } from "../../support/time";

const LEADS = "/api/v1/leads";
const CONTACTS = "/api/v1/contacts";
const CREATE = "/api/v1/ai-agent/create-incident";
const INCIDENTS = "/api/v1/incidents";

const workerEnv = env as unknown as WorkerBindings;

type EventRow = typeof events.$inferSelect;

/** `t`'s events after seq `after`, in commit order, as stored. */
const eventsAfter = (t: Tenant, after = 0): Promise<EventRow[]> =>
  db()
    .select()
    .from(events)
    .where(and(eq(events.orgId, t.orgId), gt(events.seq, after)))
    .orderBy(events.seq);

const lastSeq = async (t: Tenant) => (await eventsAfter(t)).at(-1)?.seq ?? 0;

/** Runs `action` and returns its answer with the events `t`'s org recorded meanwhile. */
async function recording<T>(t: Tenant, action: () => Promise<T>): Promise<{ res: T; rows: EventRow[] }> {
  const before = await lastSeq(t);
  const res = await action();
  return { res, rows: await eventsAfter(t, before) };
}

/** The stored event is `type` with this data (and previous), stamped `timestamp`. */
function expectEvent(row: EventRow, type: EventType, data: unknown, timestamp: string, previous?: unknown) {
  expect(row.id).toMatch(/^evt_[0-9a-z]{26}$/);
  expect(row.type).toBe(type);
  expect(row.createdAt).toBe(Date.parse(timestamp));
  expect(JSON.parse(row.body)).toStrictEqual({
    id: row.id,
    type,
    timestamp,
    // Made by the tenant's office key over HTTP (who made each change is tested in actor.test.ts).
    actor: { keyId: expect.stringMatching(/^key_/), role: "office", channel: "http", callId: null, callerPhone: null },
    data,
    ...(previous === undefined ? {} : { previous }),
  });
}

/** create-incident's answer as the incident resource: without appointment.remaining. */
function withoutRemaining<T extends { appointment: { remaining?: number } }>(booked: T): T {
  const { remaining, ...appointment } = booked.appointment;
  expect(remaining).toEqual(expect.any(Number));
  return { ...booked, appointment };
}

const post = (t: Tenant, path: string, body: unknown, key?: string) =>
  call(t, path, { body, headers: key === undefined ? {} : { "Idempotency-Key": key } });

const bookAt = (t: Tenant, dateTime: string, body: Record<string, unknown> = {}, key?: string) =>
  post(t, CREATE, { dateTime, clientName: "Ann Caller", insectName: "ants", ...body }, key);

/** One request through the app with `queue` as the delivery queue, once its waitUntil work is done. */
async function callWithQueue(
  queue: Queue<DeliveryMessage>,
  t: Tenant,
  path: string,
  options: RequestOptions,
): Promise<ReadResponse> {
  const ctx = createExecutionContext();
  const response = await app.fetch(
    toRequest(`https://api.test${path}`, t, options),
    { ...workerEnv, WEBHOOKS: queue },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return readResponse(response);
}

/** `webhook add` of the admin CLI; `events` as its --events flag. */
async function addEndpoint(t: Tenant, events?: string): Promise<string> {
  const added = await WEBHOOK_COMMANDS["webhook add"]!(
    db(),
    { org: t.orgId, url: "https://hooks.example.com/x", ...(events === undefined ? {} : { events }) },
    { webhookKey: () => workerEnv.WEBHOOK_SECRET_KEY! },
  );
  return (added as { endpointId: string }).endpointId;
}

const disable = (endpointId: string) =>
  db()
    .update(webhookEndpoints)
    .set({ status: "disabled", disabledAt: Date.now() })
    .where(eq(webhookEndpoints.id, endpointId));

const messageFor = (t: Tenant, row: EventRow, endpoint: string): DeliveryMessage => ({
  org: t.orgId,
  event: row.id,
  endpoint,
  since: row.createdAt,
});

const byEndpoint = (a: DeliveryMessage, b: DeliveryMessage) => a.endpoint.localeCompare(b.endpoint);

describe("each change records one event carrying the API's answer", () => {
  it("create-lead → lead.created", async () => {
    const t = await openTenant();
    const { res, rows } = await recording(t, () =>
      post(t, LEADS, { firstName: "Lee", email: "lee@example.com", estimatedCloseDate: "2026-12-01" }),
    );
    expect(res.status, res.text).toBe(200);
    expect(rows).toHaveLength(1);
    expectEvent(rows[0]!, "lead.created", res.body, res.body.createdAt);
  });

  it("create-contact → contact.created, with the account it links", async () => {
    const t = await openTenant();
    const account = await addAccount(t, "Linked Co");
    const { res, rows } = await recording(t, () =>
      post(t, CONTACTS, { firstName: "Cal", mobilePhone: "(917) 555-0134", accountId: account.id }),
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.accountId).toBe(account.id);
    expect(rows).toHaveLength(1);
    expectEvent(rows[0]!, "contact.created", res.body, res.body.createdAt);
  });

  it("create-incident → incident.created: the answer without remaining, with the account the booking linked", async () => {
    const t = await openTenant(undefined, { capacity: 3 });
    const account = await addAccount(t, "Acme Farms");
    const { res, rows } = await recording(t, () =>
      bookAt(t, slotIn(30), { clientName: "acme farms", phone: "917 555 0134", notes: "gate 12" }),
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.accountId).toBe(account.id);
    expect(res.body.appointment.remaining).toBe(2);
    expect(rows).toHaveLength(1);
    const data = withoutRemaining(res.body);
    expect(data.accountId).toBe(account.id);
    expectEvent(rows[0]!, "incident.created", data, res.body.createdAt);
  });

  it("cancel → incident.cancelled, stamped with the cancel's updatedAt", async () => {
    const t = await openTenant();
    const booked = await bookIncident(t);
    const { res, rows } = await recording(t, () => post(t, `${INCIDENTS}/${booked.id}/cancel`, { reason: "sold" }));
    expect(res.status, res.text).toBe(200);
    expect(res.body.status).toBe("cancelled");
    expect(rows).toHaveLength(1);
    expectEvent(rows[0]!, "incident.cancelled", res.body, res.body.updatedAt);
  });

  it("reschedule → incident.rescheduled, with previous = the slot it left", async () => {
    const t = await openTenant();
    const booked = await bookIncident(t);
    const before = (await call(t, `${INCIDENTS}/${booked.id}`)).body;
    const to = slotIn(700);
    const { res, rows } = await recording(t, () => post(t, `${INCIDENTS}/${booked.id}/reschedule`, { dateTime: to }));
    expect(res.status, res.text).toBe(200);
    expect(res.body.dateTime).toBe(to);
    expect(rows).toHaveLength(1);
    expectEvent(rows[0]!, "incident.rescheduled", res.body, res.body.updatedAt, {
      dateTime: before.dateTime,
      appointment: before.appointment,
    });
    expect(before.dateTime).not.toBe(to);
  });

  it("a second reschedule's previous is the slot the first one moved to", async () => {
    const t = await openTenant();
    const booked = await bookIncident(t);
    const first = await post(t, `${INCIDENTS}/${booked.id}/reschedule`, { dateTime: slotIn(701) });
    expect(first.status, first.text).toBe(200);
    const { res, rows } = await recording(t, () =>
      post(t, `${INCIDENTS}/${booked.id}/reschedule`, { dateTime: slotIn(702) }),
    );
    expect(res.status, res.text).toBe(200);
    expect(rows).toHaveLength(1);
    expectEvent(rows[0]!, "incident.rescheduled", res.body, res.body.updatedAt, {
      dateTime: first.body.dateTime,
      appointment: first.body.appointment,
    });
  });
});

describe("nothing is recorded for a request that changes nothing", () => {
  it("a 422 (invalid lead, contact, booking)", async () => {
    const t = await openTenant();
    const { res, rows } = await recording(t, async () => [
      await post(t, LEADS, { email: "not-an-email" }),
      await post(t, CONTACTS, {}),
      await bookAt(t, "tomorrow"),
    ]);
    for (const r of res) expectProblem(r, 422, "validation_failed");
    expect(rows).toEqual([]);
  });

  it("a contact with an unknown accountId or another org's", async () => {
    const t = await openTenant();
    const other = await openTenant();
    const foreign = await addAccount(other, "Foreign Co");
    const { res, rows } = await recording(t, async () => [
      await post(t, CONTACTS, { firstName: "Eve", accountId: "acct_00000000000000000000000000" }),
      await post(t, CONTACTS, { firstName: "Eve", accountId: foreign.id }),
    ]);
    for (const r of res) {
      expectProblem(r, 422, "validation_failed");
      expect(r.body.errors).toEqual([{ path: "accountId", code: "account_not_found", message: expect.any(String) }]);
    }
    expect(rows).toEqual([]);
    expect(await eventsAfter(other)).toEqual([]);
  });

  it("create-incident refused as slot_unavailable, also when racing bookings lose at the write", async () => {
    const t = await openTenant();
    const slot = slotIn(40);
    const { res, rows } = await recording(t, async () => [
      await bookAt(t, "2020-01-01T00:00:00Z"),
      ...(await Promise.all([1, 2, 3, 4].map(() => bookAt(t, slot)))),
      await bookAt(t, slot),
    ]);
    const booked = res.filter((r) => r.status === 200);
    expect(booked).toHaveLength(1);
    for (const r of res.filter((r) => r.status !== 200)) expectProblem(r, 409, "slot_unavailable");
    expect(rows).toHaveLength(1);
    expectEvent(rows[0]!, "incident.created", withoutRemaining(booked[0]!.body), booked[0]!.body.createdAt);
  });

  it("a no-op cancel (already cancelled): 200 unchanged", async () => {
    const t = await openTenant();
    const { id } = await bookIncident(t);
    const cancelled = await post(t, `${INCIDENTS}/${id}/cancel`, {});
    expect(cancelled.status).toBe(200);
    const { res, rows } = await recording(t, () => post(t, `${INCIDENTS}/${id}/cancel`, { reason: "again" }));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual(cancelled.body);
    expect(rows).toEqual([]);
  });

  it("a no-op reschedule (to the slot it holds): 200 unchanged", async () => {
    const t = await openTenant();
    const booked = await bookIncident(t);
    const { res, rows } = await recording(t, () =>
      post(t, `${INCIDENTS}/${booked.id}/reschedule`, { dateTime: booked.dateTime }),
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.updatedAt).toBe((await call(t, `${INCIDENTS}/${booked.id}`)).body.updatedAt);
    expect(rows).toEqual([]);
  });

  it("a reschedule refused: incident_not_changeable (cancelled) and slot_unavailable (taken)", async () => {
    const t = await openTenant();
    const gone = await bookIncident(t);
    expect((await post(t, `${INCIDENTS}/${gone.id}/cancel`, {})).status).toBe(200);
    const moving = await bookIncident(t);
    const taken = await bookIncident(t);
    const { res, rows } = await recording(t, async () => [
      await post(t, `${INCIDENTS}/${gone.id}/reschedule`, { dateTime: slotIn(703) }),
      await post(t, `${INCIDENTS}/${moving.id}/reschedule`, { dateTime: taken.dateTime }),
    ]);
    expectProblem(res[0]!, 409, "incident_not_changeable");
    expectProblem(res[1]!, 409, "slot_unavailable");
    expect(rows).toEqual([]);
  });

  it("another org's incident: 404 for cancel and reschedule, no event in either org", async () => {
    const owner = await openTenant();
    const intruder = await openTenant();
    const { id } = await bookIncident(owner);
    const { res, rows } = await recording(owner, async () => [
      await post(intruder, `${INCIDENTS}/${id}/cancel`, {}),
      await post(intruder, `${INCIDENTS}/${id}/reschedule`, { dateTime: slotIn(704) }),
    ]);
    for (const r of res) expectProblem(r, 404, "incident_not_found");
    expect(rows).toEqual([]);
    expect(await eventsAfter(intruder)).toEqual([]);
  });
});

describe("an Idempotency-Key write records its event exactly once", () => {
  type Write = (t: Tenant, key: string) => Promise<ReadResponse>;
  it.each<[string, EventType, (t: Tenant) => Promise<Write>]>([
    ["create-lead", "lead.created", async () => (t, key) => post(t, LEADS, { firstName: "Kay" }, key)],
    ["create-contact", "contact.created", async () => (t, key) => post(t, CONTACTS, { firstName: "Kay" }, key)],
    ["create-incident", "incident.created", async () => (t, key) => bookAt(t, slotIn(50), {}, key)],
    [
      "cancel",
      "incident.cancelled",
      async (t) => {
        const { id } = await bookIncident(t);
        return (t, key) => post(t, `${INCIDENTS}/${id}/cancel`, { reason: "key" }, key);
      },
    ],
    [
      "reschedule",
      "incident.rescheduled",
      async (t) => {
        const { id } = await bookIncident(t);
        return (t, key) => post(t, `${INCIDENTS}/${id}/reschedule`, { dateTime: slotIn(705) }, key);
      },
    ],
  ])("%s: the first call records %s, the replay (same key and body) nothing", async (_name, type, prepare) => {
    const t = await openTenant();
    const write = await prepare(t);
    const key = crypto.randomUUID();
    const first = await recording(t, () => write(t, key));
    expect(first.res.status, first.res.text).toBe(200);
    expect(first.rows).toHaveLength(1);
    const data = type === "incident.created" ? withoutRemaining(first.res.body) : first.res.body;
    const stamp = type.endsWith(".created") ? "createdAt" : "updatedAt";
    expect(first.rows[0]!.type).toBe(type);
    expect(JSON.parse(first.rows[0]!.body).data).toStrictEqual(data);
    expect(first.rows[0]!.createdAt).toBe(Date.parse(first.res.body[stamp]));

    const again = await recording(t, () => write(t, key));
    expect(again.res.status).toBe(200);
    expect(again.res.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.res.text).toBe(first.res.text);
    expect(again.rows).toEqual([]);
  });

  it("concurrent retries of one keyed lead: one lead, one event", async () => {
    const t = await openTenant();
    const key = crypto.randomUUID();
    const { res, rows } = await recording(t, () =>
      Promise.all([1, 2, 3].map(() => post(t, LEADS, { firstName: "Race" }, key))),
    );
    const ok = res.filter((r) => r.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const r of ok) expect(r.body).toEqual(ok[0]!.body);
    for (const r of res.filter((r) => r.status !== 200)) expectProblem(r, 409, "idempotency_in_progress");
    expect(rows).toHaveLength(1);
    expect(JSON.parse(rows[0]!.body).data).toStrictEqual(ok[0]!.body);
  });
});

describe("sending to the delivery queue", () => {
  it("with no endpoint, the event is recorded as enqueued already and nothing is sent", async () => {
    const t = await openTenant();
    const fake = fakeQueue();
    const { res, rows } = await recording(t, () => callWithQueue(fake.queue, t, LEADS, { body: { firstName: "N" } }));
    expect(res.status, res.text).toBe(200);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.enqueuedAt).not.toBeNull();
    expect(fake.sends).toEqual([]);
  });

  it("one message {org, event, endpoint, since} per enabled endpoint subscribed to the type, then marked enqueued", async () => {
    const t = await openTenant();
    const all = await addEndpoint(t);
    const leadsOnly = await addEndpoint(t, "lead.created");
    const contactsOnly = await addEndpoint(t, "contact.created,incident.cancelled");
    const disabled = await addEndpoint(t);
    await disable(disabled);
    const fake = fakeQueue();

    const lead = await recording(t, () => callWithQueue(fake.queue, t, LEADS, { body: { firstName: "Q" } }));
    expect(lead.res.status, lead.res.text).toBe(200);
    expect(lead.rows).toHaveLength(1);
    expect(fake.sends).toHaveLength(1);
    expect(fake.messages().sort(byEndpoint)).toEqual(
      [messageFor(t, lead.rows[0]!, all), messageFor(t, lead.rows[0]!, leadsOnly)].sort(byEndpoint),
    );
    const [leadRow] = await eventsAfter(t, lead.rows[0]!.seq - 1);
    expect(leadRow!.enqueuedAt).not.toBeNull();

    fake.sends.length = 0;
    const contact = await recording(t, () => callWithQueue(fake.queue, t, CONTACTS, { body: { firstName: "Q" } }));
    expect(contact.res.status, contact.res.text).toBe(200);
    expect(fake.messages().sort(byEndpoint)).toEqual(
      [messageFor(t, contact.rows[0]!, all), messageFor(t, contact.rows[0]!, contactsOnly)].sort(byEndpoint),
    );

    fake.sends.length = 0;
    const booking = await recording(t, () =>
      callWithQueue(fake.queue, t, CREATE, { body: { dateTime: slotIn(60), clientName: "Q", insectName: "ants" } }),
    );
    expect(booking.res.status, booking.res.text).toBe(200);
    expect(fake.messages()).toEqual([messageFor(t, booking.rows[0]!, all)]);
    expect((await eventsAfter(t, booking.rows[0]!.seq - 1))[0]!.enqueuedAt).not.toBeNull();
  });

  it("cancel and reschedule are sent too, and a keyed replay sends nothing again", async () => {
    const t = await openTenant();
    const endpoint = await addEndpoint(t, "incident.cancelled,incident.rescheduled");
    const fake = fakeQueue();
    const a = await bookIncident(t);
    const b = await bookIncident(t);
    const cancel = await recording(t, () =>
      callWithQueue(fake.queue, t, `${INCIDENTS}/${a.id}/cancel`, { body: {}, headers: { "Idempotency-Key": "c1" } }),
    );
    const move = await recording(t, () =>
      callWithQueue(fake.queue, t, `${INCIDENTS}/${b.id}/reschedule`, { body: { dateTime: slotIn(706) } }),
    );
    expect([cancel.res.status, move.res.status]).toEqual([200, 200]);
    expect(fake.messages()).toEqual([messageFor(t, cancel.rows[0]!, endpoint), messageFor(t, move.rows[0]!, endpoint)]);
    const replay = await callWithQueue(fake.queue, t, `${INCIDENTS}/${a.id}/cancel`, {
      body: {},
      headers: { "Idempotency-Key": "c1" },
    });
    expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
    expect(fake.sends).toHaveLength(2);
  });

  it("endpoints subscribed to other types only, or disabled, do not count: nothing to send", async () => {
    const t = await openTenant();
    await addEndpoint(t, "contact.created");
    await disable(await addEndpoint(t, "lead.created"));
    // A send would fail and leave the event unmarked: it must not be tried.
    const fake = fakeQueue({ failing: true });
    const { res, rows } = await recording(t, () => callWithQueue(fake.queue, t, LEADS, { body: { firstName: "O" } }));
    expect(res.status, res.text).toBe(200);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.enqueuedAt).not.toBeNull();
    expect(fake.sends).toEqual([]);
  });

  it("a failed send still answers 200 and leaves the event to the sweep, which sends it after 60 s", async () => {
    const t = await openTenant();
    const endpoint = await addEndpoint(t);
    const failing = fakeQueue({ failing: true });
    const { res, rows } = await recording(t, () =>
      callWithQueue(failing.queue, t, LEADS, { body: { firstName: "Lost" } }),
    );
    expect(res.status, res.text).toBe(200);
    expect(failing.sends).toHaveLength(1);
    const row = rows[0]!;
    expect(rows).toHaveLength(1);
    expect(row.enqueuedAt).toBeNull();
    expectEvent(row, "lead.created", res.body, res.body.createdAt);

    const fake = fakeQueue();
    const mine = () => fake.messages().filter((m) => m.event === row.id);
    await sweep({ WEBHOOKS: fake.queue }, db(), row.createdAt + 30_000);
    expect(mine()).toEqual([]);
    expect((await eventsAfter(t, row.seq - 1))[0]!.enqueuedAt).toBeNull();

    await sweep({ WEBHOOKS: fake.queue }, db(), row.createdAt + 61_000);
    expect(mine()).toEqual([messageFor(t, row, endpoint)]);
    expect((await eventsAfter(t, row.seq - 1))[0]!.enqueuedAt).toBe(row.createdAt + 61_000);

    await sweep({ WEBHOOKS: fake.queue }, db(), row.createdAt + 120_000);
    expect(mine()).toHaveLength(1);
  });
});

describe("commit order", () => {
  it("30 concurrent creates: one event each, in the order their rows were inserted, all listed once", async () => {
    const t = await openTenant();
    const writes = Array.from({ length: 30 }, (_, i) =>
      i % 3 === 0
        ? post(t, LEADS, { firstName: `L${i}` })
        : i % 3 === 1
          ? post(t, CONTACTS, { firstName: `C${i}` })
          : bookAt(t, slotIn(100 + i)),
    );
    const answers = await Promise.all(writes);
    for (const r of answers) expect(r.status, r.text).toBe(200);
    const rows = await eventsAfter(t);
    expect(rows).toHaveLength(30);
    const dataIds = rows.map((row) => JSON.parse(row.body).data.id as string);
    expect(new Set(dataIds)).toEqual(new Set(answers.map((r) => r.body.id)));
    expect(new Set(rows.map((row) => row.id)).size).toBe(30);

    // Each table's rowid is its own insertion order: within a type, the
    // events' seq order must be exactly that order.
    for (const [table, type] of [
      ["leads", "lead.created"],
      ["contacts", "contact.created"],
      ["incidents", "incident.created"],
    ] as const) {
      const inserted = await env.DB.prepare(`SELECT id FROM ${table} WHERE org_id = ? ORDER BY rowid`)
        .bind(t.orgId)
        .all<{ id: string }>();
      expect(inserted.results).toHaveLength(10);
      expect(rows.filter((row) => row.type === type).map((row) => JSON.parse(row.body).data.id)).toEqual(
        inserted.results.map((r) => r.id),
      );
    }

    const listed = await call(t, "/api/v1/events?limit=200");
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data.map((e: { id: string }) => e.id)).toEqual(rows.map((row) => row.id));
  });
});

describe("the 30-day purge (hourly cron)", () => {
  const runCron = async (cron: string, scheduledTime: number) => {
    const ctx = createExecutionContext();
    // The minute's cron runs the sweep: its sends go to a fake queue.
    await worker.scheduled(
      createScheduledController({ cron, scheduledTime }),
      { ...workerEnv, WEBHOOKS: fakeQueue().queue },
      ctx,
    );
    await waitOnExecutionContext(ctx);
  };
  const listed = async (t: Tenant) => {
    const res = await call(t, "/api/v1/events");
    expect(res.status, res.text).toBe(200);
    return res.body.data.map((e: { id: string }) => e.id);
  };

  it("deletes events older than 30 days at the hourly cron, and nothing at the minute's", async () => {
    const t = await openTenant();
    const older = await post(t, LEADS, { firstName: "Old" });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const newer = await post(t, CONTACTS, { firstName: "New" });
    const [a, b] = await eventsAfter(t);
    expect(b!.createdAt).toBeGreaterThan(a!.createdAt);
    expect(JSON.parse(a!.body).data.id).toBe(older.body.id);
    expect(JSON.parse(b!.body).data.id).toBe(newer.body.id);

    await runCron(SWEEP_CRON, Date.now() + 31 * DAY);
    expect(await listed(t)).toEqual([a!.id, b!.id]);

    // Exactly 30 days after the newer one: it stays, the older one goes.
    await runCron("23 * * * *", b!.createdAt + 30 * DAY);
    expect(await listed(t)).toEqual([b!.id]);

    await runCron("23 * * * *", Date.now() + 31 * DAY);
    expect(await listed(t)).toEqual([]);
    expect(await eventsAfter(t)).toEqual([]);
    // The resources themselves are kept.
    expect((await call(t, "/api/v1/contacts")).body.data.map((c: { id: string }) => c.id)).toEqual([newer.body.id]);
  });
});
