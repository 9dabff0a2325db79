// Plans (docs/api.md, "Plans"): create-plan books the first visit as
// create-incident does, with the plan, in one batch (both or neither); the
// visits due within the look-ahead are decided right after the answer — the
// due start with the plan's technician, else the nearest bookable start, else
// plan.visit_unplaced; read, list, cancel (with its future visits);
// find-caller's plans; an agent key bound to its caller.
import { describe, expect, it } from "vitest";
import { createdPlan, plan } from "../../../src/schemas/plans";
import { addTechnician } from "../../support/catalogue";
import { expectProblem } from "../../support/problem";
import { call } from "../../support/request";
import { strict } from "../../support/strict";
import { addAccount, openTenant, type Tenant, withRole } from "../../support/tenants";
import { DAY, daysAhead, HOUR, iso, today } from "../../support/time";
import {
  cancelPlanCall,
  createPlan,
  createPlanCall,
  eventsOf,
  getPlan,
  PLANS,
  type PlanView,
  planBody,
  runCron,
  visitsOf,
} from "./helpers";

const date = (t: number) => iso(t).slice(0, 10);
const book = (t: Tenant, at: number) =>
  call(t, "/api/v1/ai-agent/create-incident", { body: { dateTime: iso(at), clientName: "Other", insectName: "ants" } });

describe("POST /api/v1/ai-agent/create-plan", () => {
  it("books the first visit and stores the plan together: the plan after its first visit, the incident as create-incident answers it, both events", async () => {
    const t = await openTenant("Plan Org");
    const at = daysAhead(2, 10);
    const res = await createPlanCall(t, planBody(at, { every: { count: 3, unit: "month" }, notes: "Gate 4" }));
    expect(res.status, res.text).toBe(200);
    expect(strict(createdPlan()).safeParse(res.body).error?.issues ?? []).toEqual([]);
    const { plan: created, incident } = res.body;
    expect(created).toEqual({
      id: expect.stringMatching(/^plan_[0-9a-z]{26}$/),
      status: "active",
      every: { count: 3, unit: "month" },
      visits: null,
      serviceId: null,
      postalCode: null,
      clientName: "Pat Planner",
      insectName: "ants",
      phone: "+19175550111",
      accountId: null,
      notes: "Gate 4",
      technicianId: null,
      localTime: "10:00",
      firstVisitDate: date(at),
      nextDueDate: expect.any(String),
      visitsMade: 1,
      createdAt: incident.createdAt,
      updatedAt: incident.createdAt,
      cancelledAt: null,
      cancelReason: null,
    });
    const next = new Date(at);
    next.setUTCMonth(next.getUTCMonth() + 3);
    if (next.getUTCDate() === new Date(at).getUTCDate()) expect(created.nextDueDate).toBe(date(next.getTime()));
    expect(incident).toMatchObject({
      status: "scheduled",
      dateTime: iso(at),
      planId: created.id,
      phone: "+19175550111",
      notes: "Gate 4",
      appointment: { start: iso(at), remaining: 0 },
    });
    expect(await getPlan(t, created.id)).toEqual(created);
    const { remaining: _, ...appointment } = incident.appointment;
    expect((await eventsOf(t)).map((e) => [e.type, e.data])).toEqual([
      ["incident.created", { ...incident, appointment }],
      ["plan.created", created],
    ]);
  });

  it("a slot that cannot be booked stores nothing: 409 slot_unavailable, no plan, no event", async () => {
    const t = await openTenant("Plan Full Org");
    const at = daysAhead(2, 10);
    expect((await book(t, at)).status).toBe(200);
    const res = await createPlanCall(t, planBody(at));
    expect(expectProblem(res, 409, "slot_unavailable").reason).toBe("fully_booked");
    expect((await call(t, PLANS)).body.data).toEqual([]);
    expect((await eventsOf(t)).map((e) => e.type)).toEqual(["incident.created"]);
  });

  it("books on a live hold (holdExpired false, at the top level); a lapsed one is booked without (holdExpired true)", async () => {
    const t = await openTenant("Plan Hold Org");
    const at = daysAhead(3, 9);
    const held = await call(t, "/api/v1/ai-agent/hold-slot", { body: { dateTime: iso(at) } });
    expect(held.status, held.text).toBe(200);
    // Another caller cannot take the held place.
    expectProblem(await book(t, at), 409, "slot_unavailable");
    const res = await createPlanCall(t, planBody(at, { holdId: held.body.holdId }));
    expect(res.status, res.text).toBe(200);
    expect(res.body.holdExpired).toBe(false);
    expect(res.body.incident).not.toHaveProperty("holdExpired");
    const again = await createPlanCall(t, planBody(at + HOUR, { holdId: held.body.holdId }));
    expect([again.status, again.body.holdExpired]).toEqual([200, true]);
  });

  it("a weekly plan whose first visit is tomorrow: its second visit is booked right after the answer, same local time, its third not yet", async () => {
    const t = await openTenant("Weekly Org");
    const first = daysAhead(1, 14);
    const { plan: created } = await createPlan(t, first);
    const visits = await visitsOf(created.id);
    expect(visits.map((v) => v.startsAt)).toEqual([first, first + 7 * DAY]);
    expect(visits[1]).toMatchObject({ status: "scheduled", clientName: "Pat Planner", phone: "+19175550111" });
    const now = await getPlan(t, created.id);
    expect(now).toMatchObject({ visitsMade: 2, nextDueDate: date(first + 14 * DAY), status: "active" });
    const booked = (await eventsOf(t)).filter((e) => e.type === "incident.created").at(-1)!;
    expect(booked.actor).toEqual({ keyId: null, role: null, channel: "plan", callId: null, callerPhone: null });
    expect(booked.data).toMatchObject({ planId: created.id, dateTime: iso(first + 7 * DAY) });
    // The cron finds nothing more to do today.
    await runCron();
    expect((await visitsOf(created.id)).length).toBe(2);
  });

  it("keeps the first visit's technician when free at the due start, though the assignment rule would pick another", async () => {
    const t = await openTenant("Plan Tech Org");
    const a = await addTechnician(t, { name: "A" });
    const b = await addTechnician(t, { name: "B" });
    const first = daysAhead(1, 10);
    // A has a visit that day: B, with fewer, takes the plan's first visit.
    expect((await book(t, first - 2 * HOUR)).body.technicianId).toBe(a.id);
    const { plan: created } = await createPlan(t, first);
    expect(created.technicianId).toBe(b.id);
    const visits = await visitsOf(created.id);
    expect(visits.map((v) => [v.startsAt, v.technicianId])).toEqual([
      [first, b.id],
      [first + 7 * DAY, b.id],
    ]);
  });

  it("a due start that is taken moves to the nearest bookable start (on a tie the earlier)", async () => {
    const t = await openTenant("Plan Blocked Org");
    const first = daysAhead(1, 12);
    expect((await book(t, first + 7 * DAY)).status).toBe(200);
    const { plan: created } = await createPlan(t, first);
    expect((await visitsOf(created.id)).map((v) => v.startsAt)).toEqual([first, first + 7 * DAY - HOUR]);
  });

  it("nothing bookable within three days of the due date: no visit, plan.visit_unplaced with the plan and dueDate", async () => {
    const due = today() + 8 * DAY;
    const closed = [-3, -2, -1, 0, 1, 2, 3].map((d) => date(due + d * DAY));
    const t = await openTenant("Plan Unplaced Org", { closedDates: closed });
    const { plan: created } = await createPlan(t, daysAhead(1, 10));
    expect((await visitsOf(created.id)).length).toBe(1);
    const after = await getPlan(t, created.id);
    expect(after).toMatchObject({ visitsMade: 2, nextDueDate: date(due + 7 * DAY) });
    const unplaced = (await eventsOf(t)).filter((e) => e.type === "plan.visit_unplaced");
    expect(unplaced.map((e) => e.data)).toEqual([{ ...after, dueDate: date(due) }]);
    expect(unplaced[0]!.actor).toMatchObject({ channel: "plan", keyId: null });
  });

  it("a plan of 2 visits is completed once the second is decided: no next due date", async () => {
    const t = await openTenant("Plan Two Org");
    const { plan: created } = await createPlan(t, daysAhead(1, 9), { visits: 2 });
    expect(await getPlan(t, created.id)).toMatchObject({ status: "completed", visitsMade: 2, nextDueDate: null });
  });

  it("an Idempotency-Key replays the first answer: one plan, one first visit", async () => {
    const t = await openTenant("Plan Idem Org");
    const body = planBody(daysAhead(2, 11), { every: { count: 1, unit: "month" } });
    const first = await createPlanCall(t, body, { "Idempotency-Key": "plan-1" });
    const again = await createPlanCall(t, body, { "Idempotency-Key": "plan-1" });
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.text).toBe(first.text);
    expect((await call(t, PLANS)).body.data).toHaveLength(1);
  });

  it.each([
    [{ every: undefined }, "every", "required"],
    [{ every: { count: 13, unit: "week" } }, "every.count", "out_of_range"],
    [{ every: { count: 0, unit: "week" } }, "every.count", "out_of_range"],
    [{ every: { count: 1, unit: "day" } }, "every.unit", "invalid_value"],
    [{ every: { count: 1, unit: "week", extra: 1 } }, "every.extra", "unknown_field"],
    [{ visits: 1 }, "visits", "out_of_range"],
    [{ visits: 53 }, "visits", "out_of_range"],
    [{ visitCount: 3 }, "visitCount", "unknown_field"],
  ])("refuses %j with 422 naming %s (%s), storing nothing", async (change, path, code) => {
    const t = await openTenant("Plan 422 Org");
    const res = await createPlanCall(t, { ...planBody(daysAhead(2, 10)), ...change });
    expect(expectProblem(res, 422, "validation_failed").errors).toContainEqual(expect.objectContaining({ path, code }));
    expect((await call(t, PLANS)).body.data).toEqual([]);
  });
});

describe("GET /api/v1/plans and /plans/{id}", () => {
  it("lists newest first by keyset, with status, phone and accountId filters; an unknown or another org's id is 404 plan_not_found", async () => {
    const t = await openTenant("Plan List Org");
    const account = await addAccount(t, "Acme Homes");
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const extra = i === 2 ? { clientName: "Acme Homes", phone: "+19175550122" } : {};
      ids.push((await createPlan(t, daysAhead(2, 8 + i), { every: { count: 1, unit: "month" }, ...extra })).plan.id);
    }
    const page = async (query: string) => (await call(t, `${PLANS}?${query}`)).body;
    expect((await page("limit=10")).data.map((p: PlanView) => p.id)).toEqual([...ids].reverse());
    const first = await page("limit=3");
    expect([first.data.length, first.hasMore]).toEqual([3, true]);
    const second = await page(`limit=3&cursor=${first.nextCursor}`);
    expect(second.data.map((p: PlanView) => p.id)).toEqual([ids[0]]);
    expect(second.nextCursor).toBeNull();
    // A cursor is bound to its filters.
    expectProblem(await call(t, `${PLANS}?status=active&cursor=${first.nextCursor}`), 422, "validation_failed");
    expect((await page("phone=%2B1%20917%20555%200122")).data.map((p: PlanView) => p.id)).toEqual([ids[2]]);
    expect((await page(`accountId=${account.id}`)).data.map((p: PlanView) => p.id)).toEqual([ids[2]]);
    expect((await cancelPlanCall(t, ids[1]!)).status).toBe(200);
    expect((await page("status=cancelled")).data.map((p: PlanView) => p.id)).toEqual([ids[1]]);
    for (const plan of (await page("limit=10")).data) expect(strict(planSchema()).safeParse(plan).success).toBe(true);
    expectProblem(await call(t, `${PLANS}/plan_00000000000000000000000000`), 404, "plan_not_found");
    const other = await openTenant("Plan Other Org");
    expectProblem(await call(other, `${PLANS}/${ids[0]}`), 404, "plan_not_found");
    expectProblem(await cancelPlanCall(other, ids[0]!), 404, "plan_not_found");
    expect((await getPlan(t, ids[0]!)).status).toBe("active");
  });
});

const planSchema = plan;

describe("POST /api/v1/plans/{id}/cancel", () => {
  it("cancels the plan and its visits not started, each with incident.cancelled; again is 200 unchanged; nothing more is booked", async () => {
    const t = await openTenant("Plan Cancel Org");
    const first = daysAhead(1, 9);
    const { plan: created } = await createPlan(t, first);
    const res = await cancelPlanCall(t, created.id, { reason: "Moved away" });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      status: "cancelled",
      nextDueDate: null,
      cancelReason: "Moved away",
      cancelledAt: res.body.updatedAt,
      visitsMade: 2,
    });
    const visits = await visitsOf(created.id);
    expect(visits.map((v) => [v.status, v.cancelReason])).toEqual([
      ["cancelled", "Moved away"],
      ["cancelled", "Moved away"],
    ]);
    const recent = (await eventsOf(t)).slice(-3) as unknown as { id: string; type: string; data: { id: string } }[];
    // The plan's event first, then its visits' by start; each event's data is what a read shows now.
    expect(recent.map((e) => e.type)).toEqual(["plan.cancelled", "incident.cancelled", "incident.cancelled"]);
    expect(recent[0]!.data).toEqual(res.body);
    for (const [i, event] of recent.slice(1).entries()) {
      expect(event.data.id).toBe(visits[i]!.id);
      expect(event.data).toEqual((await call(t, `/api/v1/incidents/${event.data.id}`)).body);
    }
    expect(new Set(recent.map((e) => e.id)).size).toBe(3);
    const again = await cancelPlanCall(t, created.id, { reason: "Again" });
    expect([again.status, again.body]).toEqual([200, res.body]);
    // Weeks later the cron books nothing for it.
    await runCron(Date.now() + 14 * DAY);
    expect((await visitsOf(created.id)).length).toBe(2);
  });

  it("with cancelVisits false keeps its visits; a completed plan can be cancelled", async () => {
    const t = await openTenant("Plan Keep Org");
    const { plan: created } = await createPlan(t, daysAhead(1, 9), { visits: 2 });
    expect((await getPlan(t, created.id)).status).toBe("completed");
    const res = await cancelPlanCall(t, created.id, { cancelVisits: false });
    expect([res.status, res.body.status]).toEqual([200, "cancelled"]);
    expect((await visitsOf(created.id)).map((v) => v.status)).toEqual(["scheduled", "scheduled"]);
  });
});

describe("plans and the caller", () => {
  const CALLER = "+19175550144";
  it("find-caller lists the caller's active plans, newest first", async () => {
    const t = await openTenant("Plan Caller Org");
    const older = (await createPlan(t, daysAhead(2, 8), { phone: CALLER, every: { count: 1, unit: "month" } })).plan;
    const newer = (await createPlan(t, daysAhead(2, 9), { phone: CALLER, every: { count: 2, unit: "month" } })).plan;
    const gone = (await createPlan(t, daysAhead(2, 10), { phone: CALLER, every: { count: 3, unit: "month" } })).plan;
    await createPlan(t, daysAhead(2, 11), { phone: "+19175550155", every: { count: 1, unit: "month" } });
    expect((await cancelPlanCall(t, gone.id)).status).toBe(200);
    const res = await call(t, "/api/v1/ai-agent/find-caller", { body: { phone: CALLER } });
    expect(res.body.plans).toEqual([await getPlan(t, newer.id), await getPlan(t, older.id)]);
  });

  it("an agent key reaches only its caller's plans; create-plan without phone stores the caller's", async () => {
    const t = await openTenant("Plan Agent Org");
    const agent = await withRole(t, "agent");
    const asCaller = { "X-Caller-Phone": CALLER };
    const mine = await call(agent, "/api/v1/ai-agent/create-plan", {
      body: { ...planBody(daysAhead(2, 9), { every: { count: 1, unit: "month" } }), phone: undefined },
      headers: asCaller,
    });
    expect(mine.status, mine.text).toBe(200);
    expect([mine.body.plan.phone, mine.body.incident.phone]).toEqual([CALLER, CALLER]);
    const theirs = (await createPlan(t, daysAhead(2, 10), { every: { count: 1, unit: "month" } })).plan;
    expectProblem(await call(agent, `${PLANS}/${theirs.id}`, { headers: asCaller }), 404, "plan_not_found");
    expectProblem(
      await call(agent, `${PLANS}/${theirs.id}/cancel`, { body: {}, headers: asCaller }),
      404,
      "plan_not_found",
    );
    expect((await getPlan(t, theirs.id)).status).toBe("active");
    const listed = await call(agent, PLANS, { headers: asCaller });
    expect(listed.body.data.map((p: PlanView) => p.id)).toEqual([mine.body.plan.id]);
    expectProblem(await call(agent, `${PLANS}?phone=%2B19175550111`, { headers: asCaller }), 403, "caller_mismatch");
    expectProblem(await call(agent, PLANS), 403, "caller_unknown");
    const cancelled = await call(agent, `${PLANS}/${mine.body.plan.id}/cancel`, { body: {}, headers: asCaller });
    expect([cancelled.status, cancelled.body.status]).toEqual([200, "cancelled"]);
  });
});

describe("the cron", () => {
  it("decides a visit once it comes within the look-ahead, at most once however often it runs", async () => {
    const t = await openTenant("Plan Cron Org");
    const first = daysAhead(2, 15);
    const { plan: created } = await createPlan(t, first, { every: { count: 3, unit: "week" } });
    // Due in 23 days: beyond 14.
    expect((await visitsOf(created.id)).length).toBe(1);
    const later = Date.now() + 10 * DAY;
    await Promise.all([runCron(later), runCron(later), runCron(later, "23 * * * *")]);
    const visits = await visitsOf(created.id);
    expect(visits.map((v) => v.startsAt)).toEqual([first, first + 21 * DAY]);
    expect(await getPlan(t, created.id)).toMatchObject({ visitsMade: 2, nextDueDate: date(first + 42 * DAY) });
  });
});
