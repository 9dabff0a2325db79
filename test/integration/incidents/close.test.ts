// Closing a visit (docs/api.md, "Close"): completed or no_show, the office
// only, once started; the refusals in their order (cancelled, not_started,
// closed); the same outcome again is 200 unchanged; a closed visit keeps its
// place and can be neither cancelled nor rescheduled; its event; the list's
// status filter.
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { orgs } from "../../../drizzle/schema";
import { incidentNotChangeable } from "../../../src/openapi/problems";
import { incident } from "../../../src/schemas/incidents";
import { expectProblem } from "../../support/problem";
import { call } from "../../support/request";
import { strict } from "../../support/strict";
import { db, openTenant, type Tenant, withRole } from "../../support/tenants";
import { HOUR, hoursAhead, iso, MINUTE } from "../../support/time";
import { book, cancel, check, current, type Incident, insertIncident, listIncidents, reschedule } from "./helpers";

const close = (t: Tenant, id: string, body: unknown) => call(t, `/api/v1/incidents/${id}/close`, { body });

/** A visit that started `minutesAgo` minutes ago and lasts `hours` hours: inserted, as the API books only future slots. */
async function started(t: Tenant, { minutesAgo = 30, hours = 1 } = {}): Promise<Incident> {
  const startsAt = Date.now() - minutesAgo * MINUTE;
  const row = await insertIncident(t, {
    startsAt,
    endsAt: startsAt + hours * HOUR,
    occupiedUntil: startsAt + hours * HOUR,
  });
  return current(t, row.id);
}

const eventsOf = async (t: Tenant, type: string) =>
  (await call(t, `/api/v1/events?type=${type}&limit=200`)).body.data as { data: Incident; actor: unknown }[];

let tenant: Tenant;
beforeAll(async () => {
  tenant = await openTenant("Close Org");
});

describe("POST /api/v1/incidents/{id}/close", () => {
  it("closes a started visit as completed: status, closedAt, outcomeNote and updatedAt set, nothing else changed, its event recorded", async () => {
    const visit = await started(tenant);
    const before = Date.now();
    const res = await close(tenant, visit.id, { outcome: "completed", note: "Treated the garage" });
    expect(res.status, res.text).toBe(200);
    expect(strict(incident()).safeParse(res.body).success).toBe(true);
    const closedAt = Date.parse(res.body.closedAt);
    expect(closedAt).toBeGreaterThanOrEqual(before);
    expect(res.body).toEqual({
      ...visit,
      status: "completed",
      closedAt: res.body.closedAt,
      outcomeNote: "Treated the garage",
      updatedAt: res.body.closedAt,
    });
    expect(await current(tenant, visit.id)).toEqual(res.body);
    const [event] = (await eventsOf(tenant, "incident.completed")).filter((e) => e.data.id === visit.id);
    expect(event?.data).toEqual(res.body);
    expect(event?.actor).toMatchObject({ channel: "http", role: "office" });
  });

  it("closes a visit as no_show without a note (outcomeNote null), with an incident.no_show event", async () => {
    const visit = await started(tenant);
    const res = await close(tenant, visit.id, { outcome: "no_show" });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: "no_show", outcomeNote: null, closedAt: expect.any(String) });
    expect((await eventsOf(tenant, "incident.no_show")).map((e) => e.data.id)).toContain(visit.id);
  });

  it("closing again with the same outcome is 200 with the incident unchanged (a new note ignored) and no event", async () => {
    const visit = await started(tenant);
    const first = await close(tenant, visit.id, { outcome: "completed", note: "First" });
    const again = await close(tenant, visit.id, { outcome: "completed", note: "Second" });
    expect(again.status, again.text).toBe(200);
    expect(again.body).toEqual(first.body);
    expect((await eventsOf(tenant, "incident.completed")).filter((e) => e.data.id === visit.id)).toHaveLength(1);
  });

  it.each([
    ["completed", "no_show"],
    ["no_show", "completed"],
  ] as const)("a visit closed %s cannot be closed %s: 409 closed, unchanged", async (first, second) => {
    const visit = await started(tenant);
    const closed = await close(tenant, visit.id, { outcome: first });
    const res = await close(tenant, visit.id, { outcome: second });
    const body = expectProblem(res, 409, "incident_not_changeable");
    expect(strict(incidentNotChangeable()).safeParse(body).success).toBe(true);
    expect(body.reason).toBe("closed");
    expect(await current(tenant, visit.id)).toEqual(closed.body);
  });

  it("a visit not started yet is 409 not_started; a cancelled one 409 cancelled, checked first", async () => {
    const future = await book(tenant, hoursAhead(30));
    expect(
      expectProblem(await close(tenant, future.id, { outcome: "completed" }), 409, "incident_not_changeable").reason,
    ).toBe("not_started");
    expect((await cancel(tenant, future.id)).status).toBe(200);
    expect(
      expectProblem(await close(tenant, future.id, { outcome: "no_show" }), 409, "incident_not_changeable").reason,
    ).toBe("cancelled");
    expect((await current(tenant, future.id)).status).toBe("cancelled");
  });

  it("a closed visit can be neither cancelled nor rescheduled: 409 reason closed, unchanged", async () => {
    const visit = await started(tenant);
    const closed = (await close(tenant, visit.id, { outcome: "completed" })).body;
    expect(expectProblem(await cancel(tenant, visit.id), 409, "incident_not_changeable").reason).toBe("closed");
    const moved = await reschedule(tenant, visit.id, hoursAhead(40));
    expect(expectProblem(moved, 409, "incident_not_changeable").reason).toBe("closed");
    expect(await current(tenant, visit.id)).toEqual(closed);
  });

  it("a closed visit keeps occupying its span: the slots it overlaps stay full", async () => {
    const t = await openTenant("Close Span Org", { capacity: 1 });
    // The window reads visits from the org's longest span before: 3 hours.
    await db().update(orgs).set({ maxSlotMinutes: 180 }).where(eq(orgs.id, t.orgId));
    const visit = await started(t, { minutesAgo: 10, hours: 3 });
    const inside = hoursAhead(1);
    expect((await check(t, inside)).body).toMatchObject({ available: false, reason: "fully_booked" });
    expect((await close(t, visit.id, { outcome: "completed" })).status).toBe(200);
    expect((await check(t, inside)).body).toMatchObject({ available: false, reason: "fully_booked" });
    const booked = await call(t, "/api/v1/ai-agent/create-incident", {
      body: { dateTime: iso(inside), clientName: "Late", insectName: "ants" },
    });
    expectProblem(booked, 409, "slot_unavailable");
    // After its span (it ends before the next whole hour but two) the place is free.
    expect((await check(t, hoursAhead(3))).body.available).toBe(true);
  });

  it("GET /incidents?status= takes completed and no_show", async () => {
    const t = await openTenant("Close List Org");
    const done = await started(t);
    const missed = await started(t);
    await close(t, done.id, { outcome: "completed" });
    await close(t, missed.id, { outcome: "no_show" });
    const ids = async (status: string) =>
      ((await listIncidents(t, `status=${status}`)).body.data as Incident[]).map((i) => i.id);
    expect(await ids("completed")).toEqual([done.id]);
    expect(await ids("no_show")).toEqual([missed.id]);
    expect(await ids("scheduled")).toEqual([]);
  });

  it("is the office's: an agent key is 403 forbidden and the visit is unchanged", async () => {
    const visit = await started(tenant);
    const agent = await withRole(tenant, "agent");
    const res = await call(agent, `/api/v1/incidents/${visit.id}/close`, {
      body: { outcome: "completed" },
      headers: { "X-Caller-Phone": "+19175550134" },
    });
    expectProblem(res, 403, "forbidden");
    expect((await current(tenant, visit.id)).status).toBe("scheduled");
  });

  it.each([
    [{}, "outcome", "required"],
    [{ outcome: "done" }, "outcome", "invalid_value"],
    [{ outcome: "completed", note: "x".repeat(2001) }, "note", "too_long"],
    [{ outcome: "completed", status: "completed" }, "status", "unknown_field"],
  ])("refuses %j with 422 (%s %s), before the 404 of an unknown id", async (body, path, code) => {
    const res = await close(tenant, "inc_00000000000000000000000000", body);
    const problem = expectProblem(res, 422, "validation_failed");
    expect(problem.errors).toContainEqual(expect.objectContaining({ path, code }));
  });

  it("an unknown id is 404 incident_not_found", async () => {
    expectProblem(
      await close(tenant, "inc_00000000000000000000000000", { outcome: "completed" }),
      404,
      "incident_not_found",
    );
  });
});
