// Cancelling and rescheduling an incident (docs/api.md, "Cancel" and
// "Reschedule"): what changes and what does not, the slots freed and held,
// the refusals (409 incident_not_changeable, 409 slot_unavailable, 404
// incident_not_found, 422 before 404), Idempotency-Key replays and racing
// changes.
import { beforeAll, describe, expect, it } from "vitest";
import { createKey } from "../../../src/db/api-keys";
import { incidentNotChangeable, problem, slotUnavailable } from "../../../src/openapi/problems";
import { incident } from "../../../src/schemas/incidents";
import { bookIncident } from "../../support/incidents";
import { expectProblem } from "../../support/problem";
import { call } from "../../support/request";
import { everyDay } from "../../support/schedules";
import { strict } from "../../support/strict";
import { db, openAlways, openTenant, type ScheduleDocument, type Tenant } from "../../support/tenants";
import { DAY, daysAhead, HOUR, hoursAhead, iso, MINUTE, today } from "../../support/time";
import {
  AVAILABLE,
  book,
  CREATE,
  cancel,
  check,
  current,
  INCIDENTS,
  type Incident,
  insertIncident,
  pause,
  reschedule,
  utcAppointment,
  utcSlot,
} from "./helpers";

const UNKNOWN_ID = "inc_00000000000000000000000000";

/** `t` written with a +02:00 offset instead of Z: the same instant. */
const plusTwo = (t: number) => `${iso(t + 2 * HOUR).slice(0, 19)}+02:00`;

/** For the tests that need no schedule of their own: each books at a fresh hour (bookIncident). */
let shared: Tenant;
beforeAll(async () => {
  shared = await openTenant("Shared Changes Org");
});

const replayed = (res: { headers: Headers }) => res.headers.get("Idempotent-Replayed");

/** is-booking-available's answer for the slot at `at`: [available, reason, remaining]. */
async function slotState(t: Tenant, at: number) {
  const res = await check(t, at);
  expect(res.status, res.text).toBe(200);
  return [res.body.available, res.body.reason, res.body.slot?.remaining];
}
const FREE = [true, null, 1];
const FULL = [false, "fully_booked", 0];

/** An incident whose appointment started an hour ago, or a day ago (ended): inserted directly, as the API books only future slots. */
async function startedIncident(t: Tenant, ended = false) {
  const startsAt = ended ? hoursAhead(-25) : hoursAhead(-1);
  const row = await insertIncident(t, { startsAt, endsAt: startsAt + HOUR });
  return current(t, row.id);
}

describe("POST /api/v1/incidents/{id}/cancel", () => {
  it("cancels with {}: status cancelled, cancelledAt and updatedAt set to the time of the cancel, nothing else changed", async () => {
    const tenant = await openTenant("Cancel Org");
    const created = await book(tenant, daysAhead(2, 15), { phone: "(917) 555-0134", notes: "Gate 4412" });
    const before = await current(tenant, created.id);
    await pause();
    const started = Date.now();
    const res = await cancel(tenant, created.id, {});
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(strict(incident()).safeParse(res.body).success).toBe(true);
    expect(res.body).toEqual({
      ...before,
      status: "cancelled",
      updatedAt: res.body.updatedAt,
      cancelledAt: res.body.updatedAt,
      cancelReason: null,
    });
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThan(Date.parse(before.updatedAt));
    expect(Date.parse(res.body.cancelledAt)).toBeGreaterThanOrEqual(started);
    expect(Date.parse(res.body.cancelledAt)).toBeLessThanOrEqual(Date.now());
    expect(await current(tenant, created.id)).toEqual(res.body);
  });

  it.each([
    [{ reason: "  Customer sold the house  " }, "Customer sold the house"],
    [{ reason: "r".repeat(500) }, "r".repeat(500)],
    [{ reason: "" }, null],
    [{ reason: "   " }, null],
    [{ reason: null }, null],
    [{ reason: "Ça s'est réglé — 🐜 gone" }, "Ça s'est réglé — 🐜 gone"],
  ])("stores the reason of %j as %j", async (body, stored) => {
    const created = await bookIncident(shared);
    const res = await cancel(shared, created.id, body);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: "cancelled", cancelReason: stored });
    expect((await current(shared, created.id)).cancelReason).toBe(stored);
  });

  it("frees the slot at once: listed, available and bookable again (capacity 1)", async () => {
    const tenant = await openTenant("Free Slot Org");
    const at = daysAhead(2, 15);
    const created = await book(tenant, at);
    expect(await slotState(tenant, at)).toEqual(FULL);
    const listedBefore = await call(tenant, AVAILABLE, { body: { dateTime: iso(at), limit: 1 } });
    expect(listedBefore.body.slots[0].start).toBe(iso(at + HOUR));

    expect((await cancel(tenant, created.id)).status).toBe(200);

    const listed = await call(tenant, AVAILABLE, { body: { dateTime: iso(at), limit: 1 } });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.slots).toEqual([utcSlot(at, 1)]);
    expect(await slotState(tenant, at)).toEqual(FREE);
    const rebooked = await call(tenant, CREATE, {
      body: { dateTime: iso(at), clientName: "Next", insectName: "ants" },
    });
    expect(rebooked.status, rebooked.text).toBe(200);
    expect(rebooked.body.id).not.toBe(created.id);
    expect(await slotState(tenant, at)).toEqual(FULL);
    // The cancelled incident stays cancelled.
    expect((await current(tenant, created.id)).status).toBe("cancelled");
  });

  it("answers a second cancel 200 with the incident unchanged, whatever reason it gives", async () => {
    const tenant = await openTenant("Cancel Twice Org");
    const created = await book(tenant, daysAhead(2, 15));
    const first = await cancel(tenant, created.id, { reason: "first" });
    expect(first.status, first.text).toBe(200);
    await pause();
    for (const body of [{}, { reason: "second" }, { reason: "first" }]) {
      const again = await cancel(tenant, created.id, body);
      expect(again.status, again.text).toBe(200);
      expect(again.body).toEqual(first.body);
      expect(replayed(again)).toBeNull();
    }
    expect(await current(tenant, created.id)).toEqual(first.body);
  });

  it.each([
    ["started", false],
    ["ended", true],
  ])(
    "refuses an appointment that has %s: 409 incident_not_changeable, reason in_the_past, nothing changed",
    async (_case, ended) => {
      const tenant = await openTenant("Started Org");
      const before = await startedIncident(tenant, ended);
      expect(before.status).toBe("scheduled");
      for (const body of [{}, { reason: "too late" }]) {
        const res = await cancel(tenant, before.id, body);
        const problemBody = expectProblem(res, 409, "incident_not_changeable");
        expect(problemBody.reason).toBe("in_the_past");
        expect(strict(incidentNotChangeable()).safeParse(problemBody).success).toBe(true);
      }
      expect(await current(tenant, before.id)).toEqual(before);
    },
  );

  it("answers 404 incident_not_found for an unknown, a malformed or another org's id, leaving that incident as it was", async () => {
    const owner = await openTenant("Cancel Owner");
    const other = await openTenant("Cancel Other");
    const at = daysAhead(2, 15);
    const theirs = await book(owner, at);
    const before = await current(owner, theirs.id);
    for (const id of [UNKNOWN_ID, "nope", theirs.id.toUpperCase(), theirs.id]) {
      for (const body of [{}, { reason: "not mine" }]) {
        const res = await call(other, `${INCIDENTS}/${id}/cancel`, { body });
        expect(strict(problem()).safeParse(expectProblem(res, 404, "incident_not_found")).success).toBe(true);
      }
    }
    expect(await current(owner, theirs.id)).toEqual(before);
    expect(await slotState(owner, at)).toEqual(FULL);
  });

  describe("validates the body before looking the incident up", () => {
    it.each([
      [{ reason: "r".repeat(501) }, "reason", "too_long"],
      [{ reason: 5 }, "reason", "invalid_type"],
      [{ reason: "a\u0000b" }, "reason", "invalid_string"],
      [{ reasn: "x" }, "reasn", "unknown_field"],
      [{ cancelReason: "x" }, "cancelReason", "unknown_field"],
      [{ status: "scheduled" }, "status", "unknown_field"],
    ])("refuses %j with 422, for its own incident and for an unknown one", async (body, path, code) => {
      const created = await bookIncident(shared);
      for (const id of [created.id, UNKNOWN_ID, "nope"]) {
        const res = await cancel(shared, id, body);
        const problemBody = expectProblem(res, 422, "validation_failed");
        expect(problemBody.errors).toEqual([{ path, code, message: expect.any(String) }]);
      }
      expect((await current(shared, created.id)).status).toBe("scheduled");
    });

    it("hints at the known name of a misspelt field", async () => {
      const res = await cancel(shared, UNKNOWN_ID, { Reason: "x" });
      expect(expectProblem(res, 422, "validation_failed").errors).toEqual([
        { path: "Reason", code: "unknown_field", message: expect.stringContaining("did you mean 'reason'") },
      ]);
    });

    it.each([["[]"], ["{"], ['"reason"'], ["null"]])(
      "refuses the body %s as 400 malformed_json, even for an unknown id",
      async (raw) => {
        const res = await call(shared, `${INCIDENTS}/${UNKNOWN_ID}/cancel`, {
          rawBody: raw,
          headers: { "Content-Type": "application/json" },
        });
        expectProblem(res, 400, "malformed_json");
      },
    );
  });
});

describe("POST /api/v1/incidents/{id}/reschedule", () => {
  it("moves the appointment: same id, new dateTime, appointment and updatedAt; the old slot freed, the new one held", async () => {
    const tenant = await openTenant("Move Org");
    const from = daysAhead(2, 15);
    const to = daysAhead(3, 9);
    const created = await book(tenant, from, { phone: "+19175550134", notes: "back door" });
    const before = await current(tenant, created.id);
    await pause();
    const res = await reschedule(tenant, created.id, plusTwo(to));
    expect(res.status, res.text).toBe(200);
    expect(strict(incident()).safeParse(res.body).success).toBe(true);
    expect(res.body).toEqual({
      ...before,
      dateTime: iso(to),
      appointment: utcAppointment(to),
      updatedAt: res.body.updatedAt,
    });
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThan(Date.parse(before.updatedAt));
    expect(await current(tenant, created.id)).toEqual(res.body);

    expect(await slotState(tenant, from)).toEqual(FREE);
    expect(await slotState(tenant, to)).toEqual(FULL);
    const bookNew = await call(tenant, CREATE, { body: { dateTime: iso(to), clientName: "B", insectName: "ants" } });
    expect(expectProblem(bookNew, 409, "slot_unavailable").reason).toBe("fully_booked");
    const bookOld = await call(tenant, CREATE, { body: { dateTime: iso(from), clientName: "C", insectName: "ants" } });
    expect(bookOld.status, bookOld.text).toBe(200);
  });

  it("answers a move to the slot it already holds 200 with the incident unchanged", async () => {
    const tenant = await openTenant("Same Slot Org");
    const at = daysAhead(2, 15);
    const created = await book(tenant, at);
    const before = await current(tenant, created.id);
    await pause();
    for (const dateTime of [iso(at), plusTwo(at), `${iso(at).slice(0, 19)}z`]) {
      const res = await reschedule(tenant, created.id, dateTime);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual(before);
    }
    expect(await current(tenant, created.id)).toEqual(before);
    expect(await slotState(tenant, at)).toEqual(FULL);
  });

  it("refuses a full slot: 409 slot_unavailable, fully_booked, with the next bookable slots; nothing changed", async () => {
    const tenant = await openTenant("Full Slot Org");
    const taken = daysAhead(2, 10);
    const mine = taken + 5 * HOUR;
    await book(tenant, taken);
    const created = await book(tenant, mine);
    const before = await current(tenant, created.id);
    const res = await reschedule(tenant, created.id, taken);
    const body = expectProblem(res, 409, "slot_unavailable");
    expect(strict(slotUnavailable()).safeParse(body).success).toBe(true);
    expect(body.reason).toBe("fully_booked");
    expect(body.alternatives).toEqual([1, 2, 3].map((h) => utcSlot(taken + h * HOUR, 1)));
    expect(await current(tenant, created.id)).toEqual(before);
    expect(await slotState(tenant, mine)).toEqual(FULL);
    expect(await slotState(tenant, taken)).toEqual(FULL);
  });

  const notBookable: [string, ScheduleDocument, () => number, () => number][] = [
    ["in_the_past", {}, () => daysAhead(2, 15), () => hoursAhead(-3)],
    ["not_a_slot_start", {}, () => daysAhead(2, 15), () => daysAhead(2, 17) + 30 * MINUTE],
    ["closed", { closedDates: [iso(today() + 3 * DAY).slice(0, 10)] }, () => daysAhead(2, 15), () => daysAhead(3, 15)],
    ["closed", { weeklyHours: everyDay(["08:00", "17:00"]) }, () => daysAhead(2, 10), () => daysAhead(2, 20)],
    ["too_soon", { minNoticeMinutes: 24 * 60 }, () => daysAhead(3, 15), () => hoursAhead(2)],
    ["beyond_horizon", { horizonDays: 3 }, () => daysAhead(1, 15), () => daysAhead(5, 15)],
  ];
  it.each(notBookable)(
    "refuses a slot that is not bookable (%s): 409 slot_unavailable with that reason; nothing changed",
    async (reason, schedule, bookedAt, target) => {
      const tenant = await openTenant("Unbookable Org", schedule);
      const at = bookedAt();
      const created = await book(tenant, at);
      const before = await current(tenant, created.id);
      const res = await reschedule(tenant, created.id, target());
      const body = expectProblem(res, 409, "slot_unavailable");
      expect(strict(slotUnavailable()).safeParse(body).success).toBe(true);
      expect(body.reason).toBe(reason);
      expect(body.alternatives.length).toBeLessThanOrEqual(3);
      const starts = body.alternatives.map((s: { start: string }) => Date.parse(s.start));
      expect(starts).toEqual([...starts].sort((a, b) => a - b));
      for (const start of starts) expect(start).toBeGreaterThan(target());
      // The same answer is-booking-available gives for it.
      expect((await check(tenant, target())).body.reason).toBe(reason);
      expect(await current(tenant, created.id)).toEqual(before);
      expect(await slotState(tenant, at)).toEqual(FULL);
    },
  );

  it("does not count the incident's own booking: 15:00 to 16:00 and back with capacity 1", async () => {
    const tenant = await openTenant("Own Booking Org");
    const at = daysAhead(2, 15);
    const created = await book(tenant, at);
    const there = await reschedule(tenant, created.id, at + HOUR);
    expect(there.status, there.text).toBe(200);
    expect(there.body.appointment).toEqual(utcAppointment(at + HOUR));
    const back = await reschedule(tenant, created.id, at);
    expect(back.status, back.text).toBe(200);
    expect(back.body.appointment).toEqual(utcAppointment(at));
    expect(await slotState(tenant, at)).toEqual(FULL);
    expect(await slotState(tenant, at + HOUR)).toEqual(FREE);
  });

  it("does not count its own booking in a slot it overlaps after slotMinutes changed, but counts the others'", async () => {
    const tenant = await openTenant("Slot Length Org", { slotMinutes: 120 });
    const at = daysAhead(2, 14);
    const long = await book(tenant, at);
    expect(long.appointment).toMatchObject({ start: iso(at), end: iso(at + 2 * HOUR) });
    // Hourly slots from now on; a new key, as a verified key keeps its org's schedule for a few seconds.
    await openAlways(tenant, { slotMinutes: 60 });
    const hourly = { ...tenant, apiKey: (await createKey(db(), tenant.orgId))!.apiKey };
    const other = await book(hourly, at + 5 * HOUR);
    // The 2-hour booking still holds 14:00 and 15:00: the other incident cannot move into either.
    for (const target of [at, at + HOUR]) {
      const refused = await reschedule(hourly, other.id, target);
      expect(expectProblem(refused, 409, "slot_unavailable").reason).toBe("fully_booked");
    }
    // It itself can move to 15:00, which it overlaps.
    const moved = await reschedule(hourly, long.id, at + HOUR);
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.appointment).toEqual(utcAppointment(at + HOUR));
    expect(await slotState(hourly, at)).toEqual(FREE);
    expect(await slotState(hourly, at + HOUR)).toEqual(FULL);
  });

  it("refuses a cancelled incident: 409 incident_not_changeable, reason cancelled; nothing changed", async () => {
    const tenant = await openTenant("Cancelled Move Org");
    const at = daysAhead(2, 15);
    const created = await book(tenant, at);
    const cancelled = (await cancel(tenant, created.id)).body;
    for (const target of [at + 2 * HOUR, at]) {
      const res = await reschedule(tenant, created.id, target);
      const body = expectProblem(res, 409, "incident_not_changeable");
      expect(body.reason).toBe("cancelled");
      expect(strict(incidentNotChangeable()).safeParse(body).success).toBe(true);
    }
    expect(await current(tenant, created.id)).toEqual(cancelled);
    expect(await slotState(tenant, at)).toEqual(FREE);
    expect(await slotState(tenant, at + 2 * HOUR)).toEqual(FREE);
  });

  it.each([
    ["started", false],
    ["ended", true],
  ])(
    "refuses an appointment that has %s: 409 incident_not_changeable, reason in_the_past; nothing changed",
    async (_case, ended) => {
      const tenant = await openTenant("Started Move Org");
      const before = await startedIncident(tenant, ended);
      const target = daysAhead(2, 15);
      for (const dateTime of [target, Date.parse(before.dateTime)]) {
        const res = await reschedule(tenant, before.id, dateTime);
        const body = expectProblem(res, 409, "incident_not_changeable");
        expect(body.reason).toBe("in_the_past");
        expect(strict(incidentNotChangeable()).safeParse(body).success).toBe(true);
      }
      expect(await current(tenant, before.id)).toEqual(before);
      expect(await slotState(tenant, target)).toEqual(FREE);
    },
  );

  it("answers 404 incident_not_found for an unknown, a malformed or another org's id, leaving that incident as it was", async () => {
    const owner = await openTenant("Move Owner");
    const other = await openTenant("Move Other");
    const at = daysAhead(2, 15);
    const theirs = await book(owner, at);
    const before = await current(owner, theirs.id);
    for (const id of [UNKNOWN_ID, "nope", theirs.id]) {
      const res = await reschedule(other, id, at + HOUR);
      expect(strict(problem()).safeParse(expectProblem(res, 404, "incident_not_found")).success).toBe(true);
    }
    expect(await current(owner, theirs.id)).toEqual(before);
    expect(await slotState(owner, at + HOUR)).toEqual(FREE);
    expect(await slotState(other, at + HOUR)).toEqual(FREE);
  });

  it.each([
    [{}, "dateTime", "required"],
    [{ dateTime: null }, "dateTime", "required"],
    [{ dateTime: "2030-11-23T14:00:00" }, "dateTime", "invalid_format"],
    [{ dateTime: "2030-02-30T10:00:00Z" }, "dateTime", "invalid_format"],
    [{ dateTime: 1795572000000 }, "dateTime", "invalid_type"],
    [{ dateTime: "2030-11-23T14:00:00Z", date_time: "x" }, "date_time", "unknown_field"],
  ])("refuses %j with 422 before looking the incident up", async (body, path, code) => {
    const created = await bookIncident(shared);
    const before = await current(shared, created.id);
    for (const id of [created.id, UNKNOWN_ID, "nope"]) {
      const res = await call(shared, `${INCIDENTS}/${id}/reschedule`, { body });
      const problemBody = expectProblem(res, 422, "validation_failed");
      expect(problemBody.errors).toEqual([{ path, code, message: expect.any(String) }]);
    }
    expect(await current(shared, created.id)).toEqual(before);
  });
});

describe("Idempotency-Key on cancel and reschedule", () => {
  it("replays a retried cancel and refuses the key for another body or another incident", async () => {
    const tenant = await openTenant("Idem Cancel Org");
    const created = await book(tenant, daysAhead(2, 15));
    const other = await book(tenant, daysAhead(2, 18));
    const first = await cancel(tenant, created.id, { reason: "moved away" }, "cancel-1");
    expect(first.status, first.text).toBe(200);
    expect(replayed(first)).toBeNull();
    await pause();
    const retry = await cancel(tenant, created.id, { reason: "moved away" }, "cancel-1");
    expect(retry.status).toBe(200);
    expect(replayed(retry)).toBe("true");
    expect(retry.text).toBe(first.text);
    expect(retry.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(await current(tenant, created.id)).toEqual(first.body);

    const reused = await cancel(tenant, created.id, { reason: "other reason" }, "cancel-1");
    expectProblem(reused, 422, "idempotency_key_reused");
    const elsewhere = await cancel(tenant, other.id, { reason: "moved away" }, "cancel-1");
    expectProblem(elsewhere, 422, "idempotency_key_reused");
    expect(await current(tenant, created.id)).toEqual(first.body);
    expect((await current(tenant, other.id)).status).toBe("scheduled");
  });

  it("replays a retried reschedule without moving the incident again, and refuses the key for another slot", async () => {
    const tenant = await openTenant("Idem Move Org");
    const at = daysAhead(2, 10);
    const created = await book(tenant, at);
    const first = await reschedule(tenant, created.id, at + HOUR, "move-1");
    expect(first.status, first.text).toBe(200);
    expect(replayed(first)).toBeNull();
    // Moved on since, without a key.
    const later = await reschedule(tenant, created.id, at + 3 * HOUR);
    expect(later.status, later.text).toBe(200);

    const retry = await reschedule(tenant, created.id, at + HOUR, "move-1");
    expect(retry.status).toBe(200);
    expect(replayed(retry)).toBe("true");
    expect(retry.text).toBe(first.text);
    expect(await current(tenant, created.id)).toEqual(later.body);
    expect(await slotState(tenant, at + HOUR)).toEqual(FREE);
    expect(await slotState(tenant, at + 3 * HOUR)).toEqual(FULL);

    const reused = await reschedule(tenant, created.id, at + 5 * HOUR, "move-1");
    expectProblem(reused, 422, "idempotency_key_reused");
    expect(await current(tenant, created.id)).toEqual(later.body);
    expect(await slotState(tenant, at + 5 * HOUR)).toEqual(FREE);
  });

  it("replays a reschedule's 409 slot_unavailable even after the slot was freed", async () => {
    const tenant = await openTenant("Idem Refusal Org");
    const at = daysAhead(2, 10);
    const blocker = await book(tenant, at);
    const created = await book(tenant, at + 4 * HOUR);
    const before = await current(tenant, created.id);
    const first = await reschedule(tenant, created.id, at, "move-full");
    expect(expectProblem(first, 409, "slot_unavailable").reason).toBe("fully_booked");
    expect((await cancel(tenant, blocker.id)).status).toBe(200);
    const retry = await reschedule(tenant, created.id, at, "move-full");
    expect(retry.status).toBe(409);
    expect(replayed(retry)).toBe("true");
    expect(retry.text).toBe(first.text);
    expect(await current(tenant, created.id)).toEqual(before);
    expect(await slotState(tenant, at)).toEqual(FREE);
    // Without the key, the move now succeeds.
    expect((await reschedule(tenant, created.id, at)).status).toBe(200);
  });

  it("keeps keys of different orgs apart", async () => {
    const a = await openTenant("Idem A");
    const b = await openTenant("Idem B");
    const incA = await book(a, daysAhead(2, 15));
    const incB = await book(b, daysAhead(2, 15));
    const resA = await cancel(a, incA.id, {}, "shared-key");
    const resB = await cancel(b, incB.id, {}, "shared-key");
    expect(resA.status).toBe(200);
    expect(resB.status, resB.text).toBe(200);
    expect(replayed(resB)).toBeNull();
    expect(resB.body.id).toBe(incB.id);
    expect((await current(b, incB.id)).status).toBe("cancelled");
  });
});

describe("racing changes", () => {
  it("lets exactly one of several incidents move into a slot with one place", async () => {
    const tenant = await openTenant("Race Org");
    const target = daysAhead(2, 12);
    const movers = [];
    for (let i = 1; i <= 4; i++) movers.push(await book(tenant, target + i * HOUR));
    const results = await Promise.all(movers.map((m) => reschedule(tenant, m.id, target)));
    const won = results.filter((r) => r.status === 200);
    expect(won).toHaveLength(1);
    for (const lost of results.filter((r) => r.status !== 200)) {
      expect(expectProblem(lost, 409, "slot_unavailable").reason).toBe("fully_booked");
    }
    expect(await slotState(tenant, target)).toEqual(FULL);
    // The winner left its old slot; every loser still holds its own.
    for (const [i, m] of movers.entries()) {
      const moved = won[0]!.body.id === m.id;
      expect(await slotState(tenant, target + (i + 1) * HOUR)).toEqual(moved ? FREE : FULL);
      expect((await current(tenant, m.id)).dateTime).toBe(moved ? iso(target) : m.dateTime);
    }
  });

  it("when a reschedule races a cancel, the cancel succeeds and the incident ends cancelled, holding no slot", async () => {
    const tenant = await openTenant("Race Cancel Org");
    const at = daysAhead(2, 12);
    for (let round = 0; round < 3; round++) {
      const start = at + round * 4 * HOUR;
      const created: Incident = await book(tenant, start);
      const [moved, cancelled] = await Promise.all([
        reschedule(tenant, created.id, start + HOUR),
        cancel(tenant, created.id, { reason: "race" }),
      ]);
      expect(cancelled.status, cancelled.text).toBe(200);
      expect(cancelled.body.status).toBe("cancelled");
      if (moved.status !== 200) {
        expect(expectProblem(moved, 409, "incident_not_changeable").reason).toBe("cancelled");
      }
      expect((await current(tenant, created.id)).status).toBe("cancelled");
      expect(await slotState(tenant, start)).toEqual(FREE);
      expect(await slotState(tenant, start + HOUR)).toEqual(FREE);
    }
  });
});
