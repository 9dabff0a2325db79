// Holds (docs/api.md, "Holding a slot"): hold-slot and release-hold over HTTP
// and MCP, a live hold counted by availability, booking, holding and
// rescheduling, create-incident's holdId (used, mismatched, unknown, lapsed),
// the limit of 100 live holds, expiry as a query condition (the app's clock,
// Date.now, is moved by a spy: the app runs in this isolate), the hourly
// cron's sweep, Idempotency-Key, events, and technician mode.
import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { inArray } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { holds } from "../../../drizzle/schema";
import type { Bindings as WorkerBindings } from "../../../src/env";
import worker from "../../../src/index";
import { heldSlot } from "../../../src/schemas/holds";
import { bookedIncident } from "../../../src/schemas/incidents";
import { addService, addTechnician } from "../../support/catalogue";
import { mcpCall, toolAnswer } from "../../support/mcp";
import { expectProblem } from "../../support/problem";
import { call } from "../../support/request";
import { OPEN_ALWAYS } from "../../support/schedules";
import { strict } from "../../support/strict";
import { db, openTenant, type Tenant } from "../../support/tenants";
import { DAY, daysAhead, HOUR, iso, MINUTE } from "../../support/time";

const AVAILABLE = "/api/v1/ai-agent/available-appointments";
const CHECK = "/api/v1/ai-agent/is-booking-available";
const BOOK = "/api/v1/ai-agent/create-incident";
const HOLD = "/api/v1/ai-agent/hold-slot";
const RELEASE = "/api/v1/ai-agent/release-hold";

/** 08:00–17:00 UTC every day. */
const OFFICE = Object.fromEntries(Object.keys(OPEN_ALWAYS).map((d) => [d, [["08:00", "17:00"]]]));

/** Technician ids are global primary keys: a suffix keeps each test's own, in the order their prefixes give. */
const unique = () => crypto.randomUUID().slice(0, 8);

const HOLD_ID = /^hold_[0-9a-z]{26}$/;

// The app's clock. Date.now is read by every handler; the spy is removed after each test.
const realNow = Date.now.bind(Date);
/** Freezes the app's clock at `t` (default: the real now) and returns it. */
function setClock(t = realNow()) {
  vi.spyOn(Date, "now").mockReturnValue(t);
  return t;
}
afterEach(() => {
  vi.restoreAllMocks();
});

const hold = (t: Tenant, at: number, extra: object = {}, headers?: HeadersInit) =>
  call(t, HOLD, { body: { dateTime: iso(at), ...extra }, headers });
const release = (t: Tenant, holdId: string) => call(t, RELEASE, { body: { holdId } });
const check = (t: Tenant, at: number, extra: object = {}) => call(t, CHECK, { body: { dateTime: iso(at), ...extra } });
const book = (t: Tenant, at: number, extra: object = {}) =>
  call(t, BOOK, { body: { dateTime: iso(at), clientName: "Pat Caller", insectName: "ants", ...extra } });
const listed = async (t: Tenant, from: number, limit = 3) =>
  (await call(t, AVAILABLE, { body: { dateTime: iso(from), limit } })).body.slots.map(
    (s: { start: string }) => s.start,
  );
const incidentIds = async (t: Tenant) =>
  (await call(t, "/api/v1/incidents")).body.data.map((x: { id: string }) => x.id);
const eventsOf = async (t: Tenant) => {
  const res = await call(t, "/api/v1/events?limit=200");
  expect(res.status, res.text).toBe(200);
  return res.body.data as { type: string; data: { id: string } }[];
};

/** A slot object of an hourly UTC schedule with no service. */
const slotOf = (start: number, remaining: number) => ({
  start: iso(start),
  end: iso(start + HOUR),
  localStart: `${iso(start).slice(0, 19)}+00:00`,
  localEnd: `${iso(start + HOUR).slice(0, 19)}+00:00`,
  remaining,
  serviceId: null,
  arrivalWindow: null,
});

/** 422 validation_failed whose errors[] holds `{path, code}`. */
function expectFieldError(res: Awaited<ReturnType<typeof call>>, path: string, code?: string) {
  const body = expectProblem(res, 422, "validation_failed");
  expect(body.errors).toContainEqual(expect.objectContaining(code === undefined ? { path } : { path, code }));
}

/** The hourly cron (not the minute's sweep of webhooks) at `scheduledTime`. */
async function hourlyCron(scheduledTime: number) {
  const ctx = createExecutionContext();
  await worker.scheduled(
    createScheduledController({ cron: "23 * * * *", scheduledTime }),
    env as unknown as WorkerBindings,
    ctx,
  );
  await waitOnExecutionContext(ctx);
}

const holdRows = (ids: string[]) => db().select().from(holds).where(inArray(holds.id, ids));

describe("hold-slot", () => {
  it("holds a bookable start: holdId, expiresAt now + holdMinutes (default 5), the slot counting the hold, technicianId null", async () => {
    const t = await openTenant(undefined, { capacity: 3 });
    const at = daysAhead(2, 10);
    const now = setClock();
    const first = await hold(t, at);
    expect(first.status, first.text).toBe(200);
    expect(first.body).toEqual({
      holdId: expect.stringMatching(HOLD_ID),
      expiresAt: iso(now + 5 * MINUTE),
      slot: slotOf(at, 2),
      technicianId: null,
    });
    expect(strict(heldSlot()).safeParse(first.body).success).toBe(true);
    const second = await hold(t, at, { holdMinutes: 15 });
    expect(second.status, second.text).toBe(200);
    expect(second.body).toMatchObject({ expiresAt: iso(now + 15 * MINUTE), slot: slotOf(at, 1) });
    const third = await hold(t, at, { holdMinutes: null });
    expect(third.status, third.text).toBe(200);
    expect(third.body).toMatchObject({ expiresAt: iso(now + 5 * MINUTE), slot: slotOf(at, 0) });
    expect(new Set([first.body.holdId, second.body.holdId, third.body.holdId]).size).toBe(3);
    // Holds are not incidents: nothing is listed.
    expect(await incidentIds(t)).toEqual([]);
  });

  it("validates its body: holdMinutes 1–15 integer, dateTime required with a zone, unknown fields refused; nothing held", async () => {
    const t = await openTenant(undefined, { capacity: 1 });
    const at = daysAhead(2, 10);
    for (const holdMinutes of [0, 16, -1, 2.5, "5"]) {
      expectFieldError(await hold(t, at, { holdMinutes }), "holdMinutes");
    }
    expectFieldError(await call(t, HOLD, { body: {} }), "dateTime");
    expectFieldError(await call(t, HOLD, { body: { dateTime: iso(at).slice(0, 19) } }), "dateTime");
    expectFieldError(await hold(t, at, { holdminutes: 5 }), "holdminutes", "unknown_field");
    expectFieldError(await hold(t, at, { serviceId: "svc_unknown" }), "serviceId", "not_found");
    expect((await check(t, at)).body).toMatchObject({ available: true, slot: { remaining: 1 } });
    // The edges are accepted.
    expect((await hold(t, at, { holdMinutes: 1 })).status).toBe(200);
    expect((await hold(t, at + HOUR, { holdMinutes: 15 })).status).toBe(200);
  });

  it("a start that is not bookable is 409 slot_unavailable with the reason and alternatives create-incident gives", async () => {
    const closedDay = daysAhead(3, 0);
    const t = await openTenant(undefined, { capacity: 1, closedDates: [iso(closedDay).slice(0, 10)] });
    const full = daysAhead(2, 10);
    expect((await book(t, full)).status).toBe(200);
    setClock();
    const cases: [number, string][] = [
      [daysAhead(-1, 10), "in_the_past"],
      [daysAhead(40, 10), "beyond_horizon"],
      [closedDay + 10 * HOUR, "closed"],
      [daysAhead(2, 11) + 30 * MINUTE, "not_a_slot_start"],
      [full, "fully_booked"],
    ];
    for (const [at, reason] of cases) {
      const held = await hold(t, at);
      const body = expectProblem(held, 409, "slot_unavailable");
      expect(body.reason, reason).toBe(reason);
      expect(body).not.toHaveProperty("holdExpired");
      const booked = await book(t, at);
      expect(booked.status, reason).toBe(409);
      expect({ reason: body.reason, alternatives: body.alternatives }).toEqual({
        reason: booked.body.reason,
        alternatives: booked.body.alternatives,
      });
    }
    // The alternatives after the full slot start right after it: nothing was held by the refusals.
    expect((await hold(t, full)).body.alternatives[0]).toEqual(slotOf(full + HOUR, 1));
    expect(await incidentIds(t)).toHaveLength(1);
  });
});

describe("a live hold occupies its place", () => {
  it("for availability, booking, holding and rescheduling; released, the place is free at once", async () => {
    const t = await openTenant(undefined, { capacity: 1 });
    const at = daysAhead(2, 10);
    const elsewhere = await book(t, at + 3 * HOUR);
    expect(elsewhere.status, elsewhere.text).toBe(200);
    const held = await hold(t, at);
    expect(held.status, held.text).toBe(200);
    expect(held.body.slot.remaining).toBe(0);

    expect((await check(t, at)).body).toMatchObject({
      available: false,
      reason: "fully_booked",
      slot: slotOf(at, 0),
    });
    expect(await listed(t, at, 2)).toEqual([iso(at + HOUR), iso(at + 2 * HOUR)]);
    const booked = await book(t, at);
    expect(expectProblem(booked, 409, "slot_unavailable").reason).toBe("fully_booked");
    expect(booked.body).not.toHaveProperty("holdExpired");
    expect(expectProblem(await hold(t, at), 409, "slot_unavailable").reason).toBe("fully_booked");
    const moved = await call(t, `/api/v1/incidents/${elsewhere.body.id}/reschedule`, { body: { dateTime: iso(at) } });
    expect(expectProblem(moved, 409, "slot_unavailable").reason).toBe("fully_booked");
    expect((await call(t, `/api/v1/incidents/${elsewhere.body.id}`)).body.dateTime).toBe(iso(at + 3 * HOUR));

    const released = await release(t, held.body.holdId);
    expect(released.status, released.text).toBe(200);
    expect(released.body).toEqual({ holdId: held.body.holdId, released: true });
    expect((await check(t, at)).body).toMatchObject({ available: true, slot: { remaining: 1 } });
    expect(await listed(t, at, 1)).toEqual([iso(at)]);
    const movedNow = await call(t, `/api/v1/incidents/${elsewhere.body.id}/reschedule`, {
      body: { dateTime: iso(at) },
    });
    expect(movedNow.status, movedNow.text).toBe(200);
    expect(movedNow.body.dateTime).toBe(iso(at));
  });

  it("counts over a visit's whole span in crew mode (a 3-hour visit meets a hold two hours later)", async () => {
    const t = await openTenant(undefined, { capacity: 1, weeklyHours: OFFICE as never });
    const long = await addService(t, { name: "Long", durationMinutes: 180 });
    await addService(t, { name: "Short", durationMinutes: 60, isDefault: true });
    const held = await hold(t, daysAhead(2, 11));
    expect(held.status, held.text).toBe(200);
    expect((await check(t, daysAhead(2, 9), { serviceId: long.id })).body).toMatchObject({
      available: false,
      reason: "fully_booked",
    });
    expect((await book(t, daysAhead(2, 9), { serviceId: long.id })).status).toBe(409);
    // A 1-hour visit at 09:00 ends before the hold: free.
    expect((await check(t, daysAhead(2, 9))).body.available).toBe(true);
    expect((await release(t, held.body.holdId)).status).toBe(200);
    expect((await book(t, daysAhead(2, 9), { serviceId: long.id })).status).toBe(200);
  });

  it("holds and bookings racing for one slot: exactly capacity of them win", async () => {
    const t = await openTenant(undefined, { capacity: 3 });
    const at = daysAhead(2, 10);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? hold(t, at) : book(t, at))));
    expect(results.filter((r) => r.status === 200)).toHaveLength(3);
    for (const lost of results.filter((r) => r.status !== 200)) {
      expect(expectProblem(lost, 409, "slot_unavailable").reason).toBe("fully_booked");
    }
    expect((await check(t, at)).body).toMatchObject({ available: false, slot: { remaining: 0 } });
  });
});

describe("create-incident with holdId", () => {
  it("takes the held place even when the slot is full to others: holdExpired false, the hold used up, one incident.created event", async () => {
    const t = await openTenant(undefined, { capacity: 2 });
    const at = daysAhead(2, 10);
    const held = await hold(t, at);
    expect(held.status, held.text).toBe(200);
    // Holds are not events, and are not listed.
    expect(await eventsOf(t)).toEqual([]);
    expect(await incidentIds(t)).toEqual([]);
    const other = await book(t, at);
    expect(other.status, other.text).toBe(200);
    expect(other.body.appointment.remaining).toBe(0);
    expect(expectProblem(await book(t, at), 409, "slot_unavailable").reason).toBe("fully_booked");

    const booked = await book(t, at, { holdId: held.body.holdId, clientName: "Held Caller" });
    expect(booked.status, booked.text).toBe(200);
    expect(booked.body).toMatchObject({
      dateTime: iso(at),
      clientName: "Held Caller",
      status: "scheduled",
      technicianId: null,
      appointment: { start: iso(at), end: iso(at + HOUR), remaining: 0 },
      holdExpired: false,
    });
    expect(strict(bookedIncident()).safeParse(booked.body).success).toBe(true);
    const events = await eventsOf(t);
    expect(events.map((e) => [e.type, e.data.id])).toEqual([
      ["incident.created", other.body.id],
      ["incident.created", booked.body.id],
    ]);
    // Evented like any booking: the incident resource, without remaining or holdExpired.
    expect(events[1]!.data).toEqual((await call(t, `/api/v1/incidents/${booked.body.id}`)).body);
    const [row] = await holdRows([held.body.holdId]);
    expect(row?.incidentId).toBe(booked.body.id);

    // Used up: a second booking naming it books as if it were absent — no place left.
    const again = await book(t, at, { holdId: held.body.holdId });
    expect(expectProblem(again, 409, "slot_unavailable")).toMatchObject({ reason: "fully_booked", holdExpired: true });
    expect(again.body.alternatives[0]).toEqual(slotOf(at + HOUR, 2));
    // Releasing a used hold is 200 and frees nothing the booking took.
    const released = await release(t, held.body.holdId);
    expect(released.status, released.text).toBe(200);
    expect(released.body).toEqual({ holdId: held.body.holdId, released: true });
    expect((await check(t, at)).body).toMatchObject({ available: false, reason: "fully_booked" });
    // With a place left, the used hold books as if absent: 200 and holdExpired true.
    expect((await call(t, `/api/v1/incidents/${other.body.id}/cancel`, { body: {} })).status).toBe(200);
    const third = await book(t, at, { holdId: held.body.holdId });
    expect(third.status, third.text).toBe(200);
    expect(third.body).toMatchObject({ dateTime: iso(at), holdExpired: true, appointment: { remaining: 0 } });
    expect((await eventsOf(t)).filter((e) => e.type === "incident.created")).toHaveLength(3);
  });

  it("a live hold for another start is 422 hold_mismatch; nothing is booked and the hold stays live", async () => {
    const t = await openTenant(undefined, { capacity: 1 });
    const at = daysAhead(2, 10);
    const held = await hold(t, at);
    const wrong = await book(t, at + HOUR, { holdId: held.body.holdId });
    expectFieldError(wrong, "holdId", "hold_mismatch");
    expectFieldError(await book(t, at + 30 * MINUTE, { holdId: held.body.holdId }), "holdId", "hold_mismatch");
    expect(await incidentIds(t)).toEqual([]);
    expect((await check(t, at + HOUR)).body.available).toBe(true);
    expect((await check(t, at)).body).toMatchObject({ available: false, reason: "fully_booked" });
    const right = await book(t, at, { holdId: held.body.holdId });
    expect(right.status, right.text).toBe(200);
    expect(right.body).toMatchObject({ dateTime: iso(at), holdExpired: false });
  });

  it("a live hold for another service at the same start is 422 hold_mismatch", async () => {
    const t = await openTenant(undefined, { capacity: 1 });
    const ants = await addService(t, { name: "Ants", durationMinutes: 60, keywords: ["ants"], isDefault: true });
    const wasps = await addService(t, { name: "Wasps", durationMinutes: 60, keywords: ["wasps"] });
    const at = daysAhead(2, 10);
    const held = await hold(t, at, { insectName: "ants" });
    expect(held.status, held.text).toBe(200);
    expect(held.body.slot.serviceId).toBe(ants.id);
    expectFieldError(await book(t, at, { holdId: held.body.holdId, serviceId: wasps.id }), "holdId", "hold_mismatch");
    expectFieldError(await book(t, at, { holdId: held.body.holdId, insectName: "wasps" }), "holdId", "hold_mismatch");
    expect(await incidentIds(t)).toEqual([]);
    const booked = await book(t, at, { holdId: held.body.holdId, serviceId: ants.id });
    expect(booked.status, booked.text).toBe(200);
    expect(booked.body).toMatchObject({ serviceId: ants.id, holdExpired: false });
  });

  it("an unknown or another org's holdId is 422 not_found, for create-incident and release-hold; theirs stays live", async () => {
    const mine = await openTenant(undefined, { capacity: 1 });
    const theirs = await openTenant(undefined, { capacity: 1 });
    const at = daysAhead(2, 10);
    const foreign = await hold(theirs, at);
    expect(foreign.status, foreign.text).toBe(200);
    for (const holdId of [foreign.body.holdId, "hold_00000000000000000000000000", "nothing-like-an-id"]) {
      expectFieldError(await book(mine, at, { holdId }), "holdId", "not_found");
      expectFieldError(await release(mine, holdId), "holdId", "not_found");
    }
    expect(await incidentIds(mine)).toEqual([]);
    expect((await check(mine, at)).body.available).toBe(true);
    expect((await check(theirs, at)).body).toMatchObject({ available: false, reason: "fully_booked" });
    // An id longer than any hold's is refused by validation.
    expectFieldError(await book(mine, at, { holdId: `hold_${"x".repeat(80)}` }), "holdId");
  });

  it("a live hold books its start even once the start is within the minimum notice", async () => {
    const t = await openTenant(undefined, { capacity: 1, minNoticeMinutes: 120 });
    const at = daysAhead(2, 10);
    setClock(at - 125 * MINUTE);
    const held = await hold(t, at, { holdMinutes: 15 });
    expect(held.status, held.text).toBe(200);
    setClock(at - 115 * MINUTE);
    expect((await check(t, at)).body).toMatchObject({ available: false, reason: "too_soon" });
    expect(expectProblem(await book(t, at), 409, "slot_unavailable").reason).toBe("too_soon");
    const booked = await book(t, at, { holdId: held.body.holdId });
    expect(booked.status, booked.text).toBe(200);
    expect(booked.body).toMatchObject({ dateTime: iso(at), holdExpired: false });
  });

  it("a released hold books as if absent: 200 with holdExpired true", async () => {
    const t = await openTenant(undefined, { capacity: 1 });
    const at = daysAhead(2, 10);
    const held = await hold(t, at);
    expect((await release(t, held.body.holdId)).status).toBe(200);
    const booked = await book(t, at, { holdId: held.body.holdId });
    expect(booked.status, booked.text).toBe(200);
    expect(booked.body).toMatchObject({ dateTime: iso(at), holdExpired: true, appointment: { remaining: 0 } });
  });
});

describe("clocks that disagree", () => {
  it("a used or released hold is never live again, even to a request whose clock lags the one that ended it", async () => {
    const t = await openTenant(undefined, { capacity: 1 });
    const at = daysAhead(2, 10);
    const now = realNow();
    const used = (await hold(t, at)).body.holdId;
    setClock(now + 2_000);
    expect((await book(t, at, { holdId: used })).body.holdExpired).toBe(false);
    // Another isolate, 1 s behind: the hold it names was used a moment "later".
    setClock(now + 1_000);
    const again = expectProblem(await book(t, at, { holdId: used }), 409, "slot_unavailable");
    expect(again.holdExpired).toBe(true);
    expect(await incidentIds(t)).toHaveLength(1);

    const other = daysAhead(2, 11);
    setClock(now);
    const released = (await hold(t, other)).body.holdId;
    setClock(now + 2_000);
    expect((await release(t, released)).status).toBe(200);
    setClock(now + 1_000);
    expect((await book(t, other, { holdId: released })).body.holdExpired).toBe(true);
    expect(await incidentIds(t)).toHaveLength(2);
  });
});

describe("release-hold", () => {
  it("is 200 again and again (agents retry), frees only what the hold kept, and validates its body", async () => {
    const t = await openTenant(undefined, { capacity: 1 });
    const at = daysAhead(2, 10);
    const first = await hold(t, at);
    for (let i = 0; i < 2; i++) {
      const res = await release(t, first.body.holdId);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({ holdId: first.body.holdId, released: true });
    }
    // A new hold takes the place; releasing the old one again does not free it.
    const second = await hold(t, at);
    expect(second.status, second.text).toBe(200);
    expect((await release(t, first.body.holdId)).status).toBe(200);
    expect((await check(t, at)).body).toMatchObject({ available: false, reason: "fully_booked" });
    // The old id now books as if absent, and the place is gone.
    const late = await book(t, at, { holdId: first.body.holdId });
    expect(expectProblem(late, 409, "slot_unavailable")).toMatchObject({ reason: "fully_booked", holdExpired: true });
    expectFieldError(await call(t, RELEASE, { body: {} }), "holdId");
    expectFieldError(
      await call(t, RELEASE, { body: { holdId: second.body.holdId, hold: 1 } }),
      "hold",
      "unknown_field",
    );
    expect((await check(t, at)).body.available).toBe(false);
  });
});

describe("expiry, with the app's clock moved (no sweep)", () => {
  it("a hold lasts holdMinutes: then availability lists the place and its holdId books with holdExpired true", async () => {
    const t = await openTenant(undefined, { capacity: 1 });
    const at = daysAhead(2, 10);
    const now = setClock();
    const held = await hold(t, at, { holdMinutes: 1 });
    expect(held.body.expiresAt).toBe(iso(now + MINUTE));
    setClock(now + MINUTE - 1);
    expect((await check(t, at)).body).toMatchObject({ available: false, reason: "fully_booked" });
    expect(await listed(t, at, 1)).toEqual([iso(at + HOUR)]);
    setClock(now + MINUTE);
    expect((await check(t, at)).body).toMatchObject({ available: true, slot: { remaining: 1 } });
    expect(await listed(t, at, 1)).toEqual([iso(at)]);
    // Not swept: the row is still there, lapsed by the query condition alone.
    expect(await holdRows([held.body.holdId])).toHaveLength(1);
    const booked = await book(t, at, { holdId: held.body.holdId });
    expect(booked.status, booked.text).toBe(200);
    expect(booked.body).toMatchObject({ dateTime: iso(at), holdExpired: true, appointment: { remaining: 0 } });
    // Releasing the expired hold is 200 and frees nothing the booking took.
    const released = await release(t, held.body.holdId);
    expect(released.status, released.text).toBe(200);
    expect(released.body).toEqual({ holdId: held.body.holdId, released: true });
    expect((await check(t, at)).body).toMatchObject({ available: false, reason: "fully_booked" });
  });

  it("once expired, a plain booking or a reschedule may take the place: the holdId then gets 409 with holdExpired true", async () => {
    const t = await openTenant(undefined, { capacity: 1 });
    const at = daysAhead(2, 10);
    const elsewhere = await book(t, at + 4 * HOUR);
    const now = setClock();
    const held = await hold(t, at);
    expect(held.status, held.text).toBe(200);
    const path = `/api/v1/incidents/${elsewhere.body.id}/reschedule`;
    setClock(now + 5 * MINUTE - 1);
    expect((await book(t, at)).status).toBe(409);
    expect((await call(t, path, { body: { dateTime: iso(at) } })).status).toBe(409);
    setClock(now + 5 * MINUTE);
    const moved = await call(t, path, { body: { dateTime: iso(at) } });
    expect(moved.status, moved.text).toBe(200);
    const late = await book(t, at, { holdId: held.body.holdId });
    expect(expectProblem(late, 409, "slot_unavailable")).toMatchObject({ reason: "fully_booked", holdExpired: true });
    expect(late.body.alternatives[0]).toEqual(slotOf(at + HOUR, 1));
    expect(await incidentIds(t)).toEqual([elsewhere.body.id]);
    const released = await release(t, held.body.holdId);
    expect(released.status, released.text).toBe(200);
    expect(released.body).toEqual({ holdId: held.body.holdId, released: true });
    expect((await call(t, `/api/v1/incidents/${elsewhere.body.id}`)).body).toMatchObject({
      status: "scheduled",
      dateTime: iso(at),
    });
  });
});

describe("the hourly cron's sweep", () => {
  it("deletes holds more than a day past expiry (their ids then unknown), keeps younger ones", async () => {
    const t = await openTenant(undefined, { capacity: 1 });
    const real = realNow();
    const at = daysAhead(2, 10, real);
    setClock(real - 2 * DAY);
    const old = await hold(t, at);
    expect(old.status, old.text).toBe(200);
    setClock(real - 23 * HOUR);
    const young = await hold(t, at + HOUR);
    expect(young.status, young.text).toBe(200);
    vi.restoreAllMocks();
    expect(await holdRows([old.body.holdId, young.body.holdId])).toHaveLength(2);
    // Both lapsed long ago: their places are free before any sweep.
    expect((await check(t, at)).body.available).toBe(true);
    expect((await check(t, at + HOUR)).body.available).toBe(true);

    await hourlyCron(real);
    const rows = await holdRows([old.body.holdId, young.body.holdId]);
    expect(rows.map((r) => r.id)).toEqual([young.body.holdId]);
    expectFieldError(await release(t, old.body.holdId), "holdId", "not_found");
    expectFieldError(await book(t, at, { holdId: old.body.holdId }), "holdId", "not_found");
    expect((await release(t, young.body.holdId)).status).toBe(200);
    const booked = await book(t, at + HOUR, { holdId: young.body.holdId });
    expect(booked.status, booked.text).toBe(200);
    expect(booked.body.holdExpired).toBe(true);
  });
});

describe("the limit of 100 live holds", () => {
  it("the 101st is 409 hold_limit_reached whatever the start; releasing one or expiry makes room; other orgs unaffected", async () => {
    const t = await openTenant(undefined, { capacity: 1000 });
    const at = daysAhead(2, 10);
    const now = setClock();
    const results = await Promise.all(Array.from({ length: 104 }, () => hold(t, at)));
    const won = results.filter((r) => r.status === 200);
    expect(won).toHaveLength(100);
    for (const lost of results.filter((r) => r.status !== 200)) expectProblem(lost, 409, "hold_limit_reached");
    expect((await check(t, at)).body.slot.remaining).toBe(900);

    // Checked after validation and before the slot.
    for (const start of [daysAhead(-1, 10), daysAhead(40, 10), at + 30 * MINUTE, at + HOUR]) {
      expectProblem(await hold(t, start), 409, "hold_limit_reached");
    }
    expectFieldError(await hold(t, at, { holdMinutes: 16 }), "holdMinutes");
    // Bookings are not limited; another org's holds are its own.
    expect((await book(t, at)).status).toBe(200);
    expect((await hold(await openTenant(), at)).status).toBe(200);

    expect((await release(t, won[0]!.body.holdId)).status).toBe(200);
    const next = await hold(t, at + HOUR);
    expect(next.status, next.text).toBe(200);
    expectProblem(await hold(t, at + 2 * HOUR), 409, "hold_limit_reached");
    // A used hold no longer counts.
    expect((await book(t, at, { holdId: won[1]!.body.holdId })).body.holdExpired).toBe(false);
    expect((await hold(t, at + 2 * HOUR)).status).toBe(200);
    expectProblem(await hold(t, at + 3 * HOUR), 409, "hold_limit_reached");
    // All expired: room again, without any sweep.
    setClock(now + 5 * MINUTE - 1);
    expectProblem(await hold(t, at + 3 * HOUR), 409, "hold_limit_reached");
    setClock(now + 5 * MINUTE);
    const later = await hold(t, at + 3 * HOUR);
    expect(later.status, later.text).toBe(200);
  });
});

describe("Idempotency-Key on hold-slot", () => {
  it("a retry with the same key replays the same hold and holds nothing more", async () => {
    const t = await openTenant(undefined, { capacity: 3 });
    const at = daysAhead(2, 10);
    const key = { "Idempotency-Key": `hold-${unique()}` };
    const first = await hold(t, at, {}, key);
    expect(first.status, first.text).toBe(200);
    const again = await hold(t, at, {}, key);
    expect(again.status, again.text).toBe(200);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect((await check(t, at)).body.slot.remaining).toBe(2);
    expectProblem(await hold(t, at + HOUR, {}, key), 422, "idempotency_key_reused");
    expect((await check(t, at + HOUR)).body.slot.remaining).toBe(3);
  });

  it("a release refused for its reused key releases nothing; its own retry replays", async () => {
    const t = await openTenant(undefined, { capacity: 1 });
    const [first, second] = [daysAhead(2, 10), daysAhead(2, 11)];
    const ids = [(await hold(t, first)).body.holdId, (await hold(t, second)).body.holdId];
    const key = { "Idempotency-Key": `release-${unique()}` };
    const released = await call(t, RELEASE, { body: { holdId: ids[0] }, headers: key });
    expect(released.status, released.text).toBe(200);
    expectProblem(await call(t, RELEASE, { body: { holdId: ids[1] }, headers: key }), 422, "idempotency_key_reused");
    expect((await check(t, second)).body.available).toBe(false);
    const again = await call(t, RELEASE, { body: { holdId: ids[0] }, headers: key });
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.body).toEqual({ holdId: ids[0], released: true });
  });
});

describe("MCP tools hold_slot and release_hold", () => {
  it("answer as the HTTP operations do", async () => {
    const t = await openTenant(undefined, { capacity: 1 });
    const at = daysAhead(2, 10);
    const now = setClock();
    const held = toolAnswer(await mcpCall(t, "hold_slot", { dateTime: iso(at), holdMinutes: 3 }));
    expect(held.isError, held.text).toBe(false);
    expect(held.body).toEqual({
      holdId: expect.stringMatching(HOLD_ID),
      expiresAt: iso(now + 3 * MINUTE),
      slot: slotOf(at, 0),
      technicianId: null,
    });
    const full = toolAnswer(await mcpCall(t, "hold_slot", { dateTime: iso(at) }));
    expect(full.isError).toBe(true);
    expect(full.body).toMatchObject({ status: 409, code: "slot_unavailable", reason: "fully_booked" });
    const holdId = held.body.holdId as string;
    const booked = toolAnswer(
      await mcpCall(t, "create_incident", { dateTime: iso(at), clientName: "Pat", insectName: "ants", holdId }),
    );
    expect(booked.isError, booked.text).toBe(false);
    expect(booked.body).toMatchObject({ dateTime: iso(at), holdExpired: false });
    const released = toolAnswer(await mcpCall(t, "release_hold", { holdId }));
    expect(released.isError, released.text).toBe(false);
    expect(released.body).toEqual({ holdId, released: true });
    const unknown = toolAnswer(await mcpCall(t, "release_hold", { holdId: "hold_00000000000000000000000000" }));
    expect(unknown.isError).toBe(true);
    expect(unknown.body).toMatchObject({ status: 422, code: "validation_failed" });
    expect(unknown.body.errors).toContainEqual(expect.objectContaining({ path: "holdId", code: "not_found" }));
    const limitless = toolAnswer(await mcpCall(t, "hold_slot", { dateTime: iso(at), holdMinutes: 20 }));
    expect(limitless.isError).toBe(true);
    expect(limitless.status).toBe(422);
  });
});

describe("technician mode", () => {
  async function pair() {
    const t = await openTenant(undefined, { weeklyHours: OFFICE as never });
    const general = await addService(t, { name: "General", durationMinutes: 60, isDefault: true });
    const suffix = unique();
    const ana = await addTechnician(t, { id: `tech_1ana${suffix}`, name: "Ana", postalCodes: ["100"] });
    const ben = await addTechnician(t, { id: `tech_2ben${suffix}`, name: "Ben", postalCodes: ["100"] });
    return { t, general, ana, ben };
  }

  it("a hold takes a technician by the booking's rule; the next takes the other; a third is fully_booked; each booking gets its hold's technician", async () => {
    const { t, general, ana, ben } = await pair();
    const at = daysAhead(2, 9);
    const place = { postalCode: "10001" };
    const first = await hold(t, at, place);
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ technicianId: ana.id, slot: { remaining: 1, serviceId: general.id } });
    expect((await check(t, at, place)).body.slot.remaining).toBe(1);
    const second = await hold(t, at, place);
    expect(second.status, second.text).toBe(200);
    expect(second.body).toMatchObject({ technicianId: ben.id, slot: { remaining: 0 } });
    expect(expectProblem(await hold(t, at, place), 409, "slot_unavailable").reason).toBe("fully_booked");
    expect(expectProblem(await book(t, at, place), 409, "slot_unavailable").reason).toBe("fully_booked");
    expect((await check(t, at, place)).body).toMatchObject({ available: false, reason: "fully_booked" });
    const away = await hold(t, at, { postalCode: "90210" });
    expect(expectProblem(away, 409, "slot_unavailable").reason).toBe("out_of_service_area");

    const bens = await book(t, at, { ...place, holdId: second.body.holdId });
    expect(bens.status, bens.text).toBe(200);
    expect(bens.body).toMatchObject({ technicianId: ben.id, holdExpired: false, postalCode: "10001" });
    // The same start at another postal code (which both cover), or none: not the visit held.
    expectFieldError(await book(t, at, { postalCode: "10002", holdId: first.body.holdId }), "holdId", "hold_mismatch");
    expectFieldError(await book(t, at, { holdId: first.body.holdId }), "holdId", "hold_mismatch");
    const anas = await book(t, at, { ...place, holdId: first.body.holdId });
    expect(anas.status, anas.text).toBe(200);
    expect(anas.body).toMatchObject({ technicianId: ana.id, holdExpired: false });
    expect((await incidentIds(t)).sort()).toEqual([bens.body.id, anas.body.id].sort());
  });

  it("a plain booking next to a hold gets the other technician; once released, the held one is free again", async () => {
    const { t, ana, ben } = await pair();
    const at = daysAhead(3, 10);
    const held = await hold(t, at);
    expect(held.body.technicianId).toBe(ana.id);
    const booked = await book(t, at);
    expect(booked.status, booked.text).toBe(200);
    expect(booked.body.technicianId).toBe(ben.id);
    expect((await book(t, at)).status).toBe(409);
    expect((await release(t, held.body.holdId)).status).toBe(200);
    const next = await book(t, at);
    expect(next.status, next.text).toBe(200);
    expect(next.body.technicianId).toBe(ana.id);
  });

  it("a reschedule counts the technicians' holds", async () => {
    const { t, ana, ben } = await pair();
    const booked = await book(t, daysAhead(5, 14));
    expect(booked.body.technicianId).toBe(ana.id);
    const at = daysAhead(5, 10);
    // Ana has a visit that day, Ben none: Ben is held first.
    const first = await hold(t, at);
    const second = await hold(t, at);
    expect([first.body.technicianId, second.body.technicianId]).toEqual([ben.id, ana.id]);
    const path = `/api/v1/incidents/${booked.body.id}/reschedule`;
    expect(expectProblem(await call(t, path, { body: { dateTime: iso(at) } }), 409, "slot_unavailable").reason).toBe(
      "fully_booked",
    );
    expect((await release(t, first.body.holdId)).status).toBe(200);
    const moved = await call(t, path, { body: { dateTime: iso(at) } });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body).toMatchObject({ dateTime: iso(at), technicianId: ben.id });
  });

  it("an expired hold frees its technician without the sweep", async () => {
    const { t, ana, ben } = await pair();
    const at = daysAhead(4, 10);
    const now = setClock();
    const a = await hold(t, at, { holdMinutes: 2 });
    const b = await hold(t, at, { holdMinutes: 10 });
    expect([a.body.technicianId, b.body.technicianId]).toEqual([ana.id, ben.id]);
    expect((await check(t, at)).body.reason).toBe("fully_booked");
    setClock(now + 2 * MINUTE);
    expect((await check(t, at)).body).toMatchObject({ available: true, slot: { remaining: 1 } });
    const booked = await book(t, at, { holdId: a.body.holdId });
    expect(booked.status, booked.text).toBe(200);
    expect(booked.body).toMatchObject({ technicianId: ana.id, holdExpired: true });
    // Ben's hold is still live.
    expect((await book(t, at)).status).toBe(409);
  });
});
