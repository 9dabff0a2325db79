// GET /api/v1/events (docs/api.md, "Events"): oldest first in commit order, the limit
// and its bounds, paging with a cursor that is never null (a poller calls again
// with the last one and meets the events written since), the type filter,
// cursors bound to their org and filter, strict query parameters, tenant
// isolation, and the documented Event schema.
import { env } from "cloudflare:test";
import { asc, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import * as z from "zod/v4";
import { EVENT_TYPES, type EventType, events, services } from "../../../drizzle/schema";
import { COMMANDS } from "../../../src/cli/commands";
import { event, eventPage } from "../../../src/schemas/events";
import { addService, addTechnician } from "../../support/catalogue";
import type { ReadResponse } from "../../support/http";
import { bookIncident } from "../../support/incidents";
import { expectProblem } from "../../support/problem";
import { call } from "../../support/request";
import { strict } from "../../support/strict";
import { db, openTenant, type Tenant } from "../../support/tenants";
import { DAY, HOUR, slotIn } from "../../support/time";
import { insertIncident } from "../incidents/helpers";
import { runCron } from "../plans/helpers";

const EVENTS = "/api/v1/events";
const INCIDENTS = "/api/v1/incidents";

interface Event {
  id: string;
  type: EventType;
  timestamp: string;
  data: { id: string };
  previous?: unknown;
}

const list = (t: Tenant, query = ""): Promise<ReadResponse> => call(t, `${EVENTS}${query ? `?${query}` : ""}`);

/** A 200 page; fails the test otherwise. */
async function page(t: Tenant, query = ""): Promise<{ data: Event[]; hasMore: boolean; nextCursor: string }> {
  const res = await list(t, query);
  expect(res.status, res.text).toBe(200);
  expect(typeof res.body.nextCursor).toBe("string");
  return res.body;
}

const ids = (rows: { id: string }[]) => rows.map((row) => row.id);

/** The org's events as stored, in commit order (seq). */
async function stored(t: Tenant): Promise<Event[]> {
  const rows = await db().select().from(events).where(eq(events.orgId, t.orgId)).orderBy(asc(events.seq));
  return rows.map((row) => JSON.parse(row.body));
}

const lead = async (t: Tenant, firstName = "Lee") => {
  const res = await call(t, "/api/v1/leads", { body: { firstName } });
  expect(res.status, res.text).toBe(200);
  return res.body as { id: string };
};

/**
 * One event of every type: lead, contact, two bookings, a cancel, a reschedule,
 * an operator's reassignment of the rescheduled visit, two started visits
 * closed, completed and no_show, and a plan (its first visit booked with it),
 * whose next visit finds its service gone (unplaced) before it is cancelled
 * (14 events). The org has two technicians and a service from the start (the
 * catalogue is read with the key).
 */
async function oneOfEach(t: Tenant) {
  await addTechnician(t, { name: "First" });
  await addTechnician(t, { name: "Second" });
  const service = await addService(t, { name: "Quarterly", durationMinutes: 60 });
  await lead(t);
  expect((await call(t, "/api/v1/contacts", { body: { firstName: "Cal" } })).status).toBe(200);
  const a = await bookIncident(t);
  const b = await bookIncident(t);
  expect((await call(t, `${INCIDENTS}/${a.id}/cancel`, { body: {} })).status).toBe(200);
  expect((await call(t, `${INCIDENTS}/${b.id}/reschedule`, { body: { dateTime: slotIn(700) } })).status).toBe(200);
  // Taking the rescheduled visit's technician off moves it to the other one.
  const { technicianId } = (await call(t, `${INCIDENTS}/${b.id}`)).body;
  const flags = { org: t.orgId, id: technicianId, active: "false", reassign: true };
  const { reassigned } = (await COMMANDS["technician update"]!(db(), flags, { webhookKey: () => "" })) as {
    reassigned: string[];
  };
  expect(reassigned).toEqual([b.id]);
  for (const outcome of ["completed", "no_show"]) {
    const startsAt = Date.now() - HOUR;
    const started = await insertIncident(t, { startsAt, endsAt: startsAt + HOUR, occupiedUntil: startsAt + HOUR });
    expect((await call(t, `${INCIDENTS}/${started.id}/close`, { body: { outcome } })).status).toBe(200);
  }
  const created = await call(t, "/api/v1/ai-agent/create-plan", {
    body: {
      dateTime: slotIn(300),
      clientName: "Pat",
      insectName: "ants",
      serviceId: service.id,
      every: { count: 3, unit: "week" },
    },
  });
  expect(created.status, created.text).toBe(200);
  await db().update(services).set({ active: false }).where(eq(services.id, service.id));
  // Its second visit (due in 33 days) comes within the look-ahead 20 days on: its service is gone, nothing is booked.
  await runCron(Date.now() + 20 * DAY);
  expect((await call(t, `/api/v1/plans/${created.body.plan.id}/cancel`, { body: {} })).status).toBe(200);
}

/** Each option of the Event union made strict: an undocumented field fails. */
const strictEvent = z.union(event().options.map((option) => strict(option)) as [z.ZodType, z.ZodType]);

/** Every page of `query` with `limit`, until hasMore is false; returns the events and the last cursor. */
async function pageThrough(t: Tenant, limit: number, query = "") {
  const seen: Event[] = [];
  let cursor: string | undefined;
  for (let n = 0; n < 100; n++) {
    const res = await page(t, `limit=${limit}${query}${cursor ? `&cursor=${cursor}` : ""}`);
    expect(res.data.length).toBeLessThanOrEqual(limit);
    seen.push(...res.data);
    cursor = res.nextCursor;
    if (!res.hasMore) return { seen, cursor, pages: n + 1 };
    expect(res.data).toHaveLength(limit);
  }
  throw new Error("paging did not end");
}

let mixed: Tenant;
let many: Tenant;
beforeAll(async () => {
  mixed = await openTenant("Mixed Events Org");
  await oneOfEach(mixed);
  many = await openTenant("Many Events Org");
  for (let i = 0; i < 55; i++) await lead(many, `L${i}`);
});

describe("GET /api/v1/events", () => {
  it("lists the org's events oldest first in commit order, as JSON matching the Event schema", async () => {
    const res = await list(mixed);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^application\/json\b/);
    expect(JSON.parse(res.text)).toEqual(res.body);
    expect(strict(eventPage()).safeParse(res.body).error?.issues ?? []).toEqual([]);
    const { data, hasMore } = res.body as { data: Event[]; hasMore: boolean };
    expect(data.map((e) => e.type)).toEqual([
      "lead.created",
      "contact.created",
      "incident.created",
      "incident.created",
      "incident.cancelled",
      "incident.rescheduled",
      "incident.reassigned",
      "incident.completed",
      "incident.no_show",
      "incident.created",
      "plan.created",
      "plan.visit_unplaced",
      "plan.cancelled",
      "incident.cancelled",
    ]);
    expect(data).toEqual(await stored(mixed));
    expect(hasMore).toBe(false);
    for (const e of data) expect(strictEvent.safeParse(e).error?.issues ?? [], JSON.stringify(e)).toEqual([]);
    expect(data.filter((e) => "previous" in e).map((e) => e.type)).toEqual([
      "incident.rescheduled",
      "incident.reassigned",
    ]);
  });

  it("the schema check can fail: an undocumented field or a missing previous", async () => {
    const [first] = (await page(mixed)).data;
    expect(strictEvent.safeParse({ ...first, extra: 1 }).success).toBe(false);
    const rescheduled = (await page(mixed, "type=incident.rescheduled")).data[0]!;
    const { previous: _, ...withoutPrevious } = rescheduled;
    expect(strictEvent.safeParse(rescheduled).success).toBe(true);
    expect(strictEvent.safeParse(withoutPrevious).success).toBe(false);
  });

  it("limit defaults to 50 and takes 1 to 200", async () => {
    const all = await stored(many);
    expect(all).toHaveLength(55);
    const byDefault = await page(many);
    expect(ids(byDefault.data)).toEqual(ids(all.slice(0, 50)));
    expect(byDefault.hasMore).toBe(true);
    const one = await page(many, "limit=1");
    expect(ids(one.data)).toEqual([all[0]!.id]);
    expect(one.hasMore).toBe(true);
    const exact = await page(many, "limit=55");
    expect(ids(exact.data)).toEqual(ids(all));
    expect(exact.hasMore).toBe(false);
    const most = await page(many, "limit=200");
    expect(ids(most.data)).toEqual(ids(all));
    expect(most.hasMore).toBe(false);
  });

  it.each([
    ["0", "limit=0"],
    ["201", "limit=201"],
    ["abc", "limit=abc"],
    ["-1", "limit=-1"],
    ["1.5", "limit=1.5"],
    ["empty", "limit="],
    ["repeated", "limit=1&limit=2"],
  ])("refuses limit %s: 422 validation_failed naming limit", async (_name, query) => {
    const res = await list(mixed, query);
    expectProblem(res, 422, "validation_failed");
    expect(res.body.errors).toEqual([{ path: "limit", code: expect.any(String), message: expect.any(String) }]);
  });

  it("pages through every event once; at the end the cursor holds its place and later finds new events", async () => {
    const t = await openTenant();
    for (let i = 0; i < 12; i++) await lead(t, `P${i}`);
    const { seen, cursor, pages } = await pageThrough(t, 5);
    expect(pages).toBe(3);
    expect(ids(seen)).toEqual(ids(await stored(t)));
    expect(new Set(ids(seen)).size).toBe(12);

    const again = await page(t, `cursor=${cursor}`);
    expect(again).toEqual({ data: [], hasMore: false, nextCursor: cursor });

    const fresh = await lead(t, "Fresh");
    const later = await page(t, `cursor=${cursor}`);
    expect(later.data.map((e) => e.data.id)).toEqual([fresh.id]);
    expect(later.hasMore).toBe(false);
    expect(later.nextCursor).not.toBe(cursor);
    expect((await page(t, `cursor=${later.nextCursor}`)).data).toEqual([]);
  });

  it("a page that ends exactly at the last event says hasMore false, and its cursor finds nothing more", async () => {
    const t = await openTenant();
    for (let i = 0; i < 4; i++) await lead(t, `E${i}`);
    const first = await page(t, "limit=2");
    expect(first.hasMore).toBe(true);
    const second = await page(t, `limit=2&cursor=${first.nextCursor}`);
    expect(second.data).toHaveLength(2);
    expect(second.hasMore).toBe(false);
    expect(await page(t, `limit=2&cursor=${second.nextCursor}`)).toEqual({
      data: [],
      hasMore: false,
      nextCursor: second.nextCursor,
    });
  });

  it("with no events at all, the cursor is not null and later finds the first event", async () => {
    const t = await openTenant();
    const empty = await page(t);
    expect(empty.data).toEqual([]);
    expect(empty.hasMore).toBe(false);
    const created = await lead(t, "First");
    const later = await page(t, `cursor=${empty.nextCursor}`);
    expect(later.data.map((e) => [e.type, e.data.id])).toEqual([["lead.created", created.id]]);
  });

  it.each(EVENT_TYPES)("type=%s lists that type only, in commit order", async (type) => {
    const all = await stored(mixed);
    const expected = all.filter((e) => e.type === type);
    expect(expected.length).toBeGreaterThan(0);
    const res = await page(mixed, `type=${type}`);
    expect(res.data).toEqual(expected);
    expect(res.hasMore).toBe(false);
  });

  it("pages through a type filter with its own cursor", async () => {
    const t = await openTenant();
    for (let i = 0; i < 3; i++) {
      await lead(t, `T${i}`);
      await bookIncident(t);
    }
    const { seen, pages } = await pageThrough(t, 1, "&type=incident.created");
    expect(pages).toBe(3);
    expect(seen).toEqual((await stored(t)).filter((e) => e.type === "incident.created"));
  });

  it("refuses an unknown type and an unknown query parameter (422)", async () => {
    for (const [query, path, code] of [
      ["type=lead.updated", "type", expect.any(String)],
      ["type=", "type", expect.any(String)],
      ["foo=1", "foo", "unknown_field"],
      ["since=2026-01-01T00:00:00Z", "since", "unknown_field"],
    ] as const) {
      const res = await list(mixed, query);
      expectProblem(res, 422, "validation_failed");
      expect(res.body.errors, query).toEqual([{ path, code, message: expect.any(String) }]);
    }
  });

  describe("cursors are bound to their org and type filter", () => {
    const invalidCursor = (res: ReadResponse) => {
      expectProblem(res, 422, "validation_failed");
      expect(res.body.errors).toEqual([{ path: "cursor", code: "invalid_cursor", message: expect.any(String) }]);
    };

    it("refuses a cursor issued for another type filter, or for none", async () => {
      const leads = (await page(mixed, "type=lead.created&limit=1")).nextCursor;
      const unfiltered = (await page(mixed, "limit=1")).nextCursor;
      expect((await list(mixed, `type=lead.created&cursor=${leads}`)).status).toBe(200);
      invalidCursor(await list(mixed, `cursor=${leads}`));
      invalidCursor(await list(mixed, `type=contact.created&cursor=${leads}`));
      invalidCursor(await list(mixed, `type=lead.created&cursor=${unfiltered}`));
    });

    it("refuses another org's cursor and another list's", async () => {
      const other = await openTenant();
      const theirs = (await page(other)).nextCursor;
      invalidCursor(await list(mixed, `cursor=${theirs}`));
      const incidents = await call(mixed, `${INCIDENTS}?limit=1`);
      expect(incidents.body.nextCursor).toEqual(expect.any(String));
      invalidCursor(await list(mixed, `cursor=${incidents.body.nextCursor}`));
    });

    it.each([
      ["garbage", "not a cursor!"],
      ["not base64 JSON", "abc"],
      ["JSON without a position", btoa(JSON.stringify({ s: "x" }))],
    ])("refuses a %s cursor", async (_name, cursor) => {
      invalidCursor(await list(mixed, `cursor=${encodeURIComponent(cursor)}`));
    });

    it("refuses an empty cursor as an empty value", async () => {
      const res = await list(mixed, "cursor=");
      expectProblem(res, 422, "validation_failed");
      expect(res.body.errors).toEqual([{ path: "cursor", code: "empty_value", message: expect.any(String) }]);
    });
  });

  it("an org never sees another org's events, with or without a type filter", async () => {
    const a = await openTenant();
    const b = await openTenant();
    for (let i = 0; i < 3; i++) {
      await lead(a, `A${i}`);
      await lead(b, `B${i}`);
      await bookIncident(b);
    }
    const seenA = await page(a, "limit=200");
    const seenB = await page(b, "limit=200");
    expect(ids(seenA.data)).toEqual(ids(await stored(a)));
    expect(ids(seenB.data)).toEqual(ids(await stored(b)));
    expect(seenA.data).toHaveLength(3);
    expect(seenB.data).toHaveLength(6);
    expect(ids(seenA.data).filter((id) => ids(seenB.data).includes(id))).toEqual([]);
    expect((await page(a, "type=incident.created")).data).toEqual([]);
    // And the events table does hold the other org's rows.
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM events WHERE org_id IN (?, ?)")
      .bind(a.orgId, b.orgId)
      .first<{ n: number }>();
    expect(rows?.n).toBe(9);
  });
});
