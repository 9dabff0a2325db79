// The cron's bounded work (docs/api.md, "Plans"): one run decides at most
// VISITS_PER_RUN visits, soonest due first, and costs D1 round trips in
// proportion to the visits it decides — one read of the due plans, each org's
// catalogue once, and per visit the occupancy around its due date and its
// batch — never to an org's history: an org with hundreds of past visits
// costs what a new one does, every statement on an index. create-plan is one
// round trip warm, as create-incident is.
import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { apiKeys, incidents, plans } from "../../../drizzle/schema";
import { decideDueVisits, VISITS_PER_RUN } from "../../../src/availability/due-visits";
import { createDb } from "../../../src/db/client";
import { newId } from "../../../src/lib/ids";
import { type Statement, wrapD1 } from "../../support/d1";
import { call } from "../../support/request";
import { db, openTenant, type Tenant } from "../../support/tenants";
import { DAY, HOUR, iso, today } from "../../support/time";

/** A plan as create-plan leaves a weekly one whose first visit is tomorrow at `hour`: its second visit due, decidable now. */
async function insertDuePlan(t: Tenant, hour: number) {
  const now = Date.now();
  const first = today() + DAY + hour * HOUR;
  await db()
    .insert(plans)
    .values({
      id: newId("plan", now),
      orgId: t.orgId,
      everyCount: 1,
      everyUnit: "week",
      clientName: "Budget",
      insectName: "ants",
      localTime: iso(first).slice(11, 16),
      firstVisitDate: iso(first).slice(0, 10),
      visitsMade: 1,
      nextDueDate: iso(first + 7 * DAY).slice(0, 10),
      decideAt: now - 1,
      createdAt: now,
      updatedAt: now,
    });
}

/** Hundreds of visits over the past year, each hour-long: the history a decision must not read. */
async function addHistory(t: Tenant, visits: number) {
  const rows = Array.from({ length: visits }, (_, i) => {
    const startsAt = today() - (i + 1) * HOUR * 20;
    return {
      id: newId("inc", startsAt),
      orgId: t.orgId,
      status: i % 5 === 0 ? ("cancelled" as const) : ("completed" as const),
      clientName: "Past",
      insectName: "ants",
      startsAt,
      endsAt: startsAt + HOUR,
      occupiedUntil: startsAt + HOUR,
      createdAt: startsAt,
      updatedAt: startsAt,
    };
  });
  // D1 binds at most 100 values a statement: 8 rows of 11.
  for (let i = 0; i < rows.length; i += 8)
    await db()
      .insert(incidents)
      .values(rows.slice(i, i + 8));
}

async function plan({ sql, params }: Statement): Promise<string[]> {
  const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .bind(...params)
    .all<{ detail: string }>();
  return results.map((row) => row.detail);
}

const TENANT_TABLES = ["orgs", "plans", "plan_visits", "incidents", "holds", "events", "services", "technicians"];

describe("the cron's budget", () => {
  it("a run's round trips grow with the visits it decides, not with an org's history; every statement on an index", async () => {
    const trips: number[] = [];
    for (const history of [0, 400]) {
      const t = await openTenant(`Budget ${history}`, { capacity: 10 });
      await addHistory(t, history);
      for (let i = 0; i < 3; i++) await insertDuePlan(t, 9 + i);
      const recorder = wrapD1(env.DB);
      const decided = await decideDueVisits(createDb(recorder.db), Date.now());
      expect(decided).toBe(3);
      // The due plans, the org's catalogue, then per visit its occupancy read and its batch.
      expect(recorder.trips.length, JSON.stringify(recorder.trips.map((trip) => trip.sql))).toBe(1 + 1 + 2 * 3);
      trips.push(recorder.trips.length);
      for (const statement of recorder.trips.flatMap((trip) => trip.statements)) {
        const details = await plan(statement);
        const scans = details.filter((d) => TENANT_TABLES.some((table) => new RegExp(`^SCAN ${table}\\b`).test(d)));
        expect(scans, `${statement.sql}\n${details.join("\n")}`).toEqual([]);
      }
      const booked = await db().select().from(incidents).where(eq(incidents.orgId, t.orgId));
      expect(booked.filter((row) => row.planId !== null)).toHaveLength(3);
    }
    expect(trips[1]).toBe(trips[0]);
  });

  it(`one run decides at most ${VISITS_PER_RUN} visits; the next run the rest`, async () => {
    const t = await openTenant("Budget Many", { capacity: 100 });
    for (let i = 0; i < VISITS_PER_RUN + 7; i++) await insertDuePlan(t, 8 + (i % 9));
    const recorder = wrapD1(env.DB);
    expect(await decideDueVisits(createDb(recorder.db), Date.now())).toBe(VISITS_PER_RUN);
    expect(recorder.trips.length).toBe(1 + 1 + 2 * VISITS_PER_RUN);
    expect(await decideDueVisits(createDb(env.DB), Date.now())).toBe(7);
    expect(await decideDueVisits(createDb(env.DB), Date.now())).toBe(0);
  });

  it("create-plan is one round trip warm, as create-incident is (a monthly plan: nothing to decide after the answer)", async () => {
    const t = await openTenant("Budget Create", { capacity: 5 });
    await db().update(apiKeys).set({ lastUsedAt: Date.now() }).where(eq(apiKeys.id, t.keyId));
    const body = (hour: number) => ({
      dateTime: iso(today() + 3 * DAY + hour * HOUR),
      clientName: "Budget",
      insectName: "ants",
      every: { count: 1, unit: "month" },
    });
    const cold = wrapD1(env.DB);
    expect((await call(t, "/api/v1/ai-agent/create-plan", { body: body(9), bindings: { DB: cold.db } })).status).toBe(
      200,
    );
    expect(cold.trips.length, JSON.stringify(cold.trips.map((trip) => trip.sql))).toBe(2);
    const warm = wrapD1(env.DB);
    expect((await call(t, "/api/v1/ai-agent/create-plan", { body: body(10), bindings: { DB: warm.db } })).status).toBe(
      200,
    );
    expect(warm.trips.length, JSON.stringify(warm.trips.map((trip) => trip.sql))).toBe(1);
    for (const statement of warm.trips.flatMap((trip) => trip.statements)) {
      const details = await plan(statement);
      const scans = details.filter((d) => TENANT_TABLES.some((table) => new RegExp(`^SCAN ${table}\\b`).test(d)));
      expect(scans, `${statement.sql}\n${details.join("\n")}`).toEqual([]);
    }
  });
  it("get-plan, list-plans and cancel-plan are 1 round trip warm (the cancel: the plan, its visits to come and an event for each in one batch)", async () => {
    const t = await openTenant("Budget Reads", { capacity: 5 });
    await db().update(apiKeys).set({ lastUsedAt: Date.now() }).where(eq(apiKeys.id, t.keyId));
    const body = {
      dateTime: iso(today() + 3 * DAY + 9 * HOUR),
      clientName: "Budget",
      insectName: "ants",
      every: { count: 1, unit: "month" },
    };
    const created = await call(t, "/api/v1/ai-agent/create-plan", { body });
    expect(created.status, created.text).toBe(200);
    const id = created.body.plan.id as string;
    for (const [path, body, trips] of [
      [`/api/v1/plans/${id}`, undefined, 1],
      ["/api/v1/plans?limit=2", undefined, 1],
      [`/api/v1/plans/${id}/cancel`, { reason: "budget" }, 1],
    ] as const) {
      const warm = wrapD1(env.DB);
      const res = await call(t, path, { body, bindings: { DB: warm.db } });
      expect(res.status, res.text).toBe(200);
      expect(warm.trips.length, `${path}: ${JSON.stringify(warm.trips.map((trip) => trip.sql))}`).toBe(trips);
      for (const statement of warm.trips.flatMap((trip) => trip.statements)) {
        const details = await plan(statement);
        const scans = details.filter((d) => TENANT_TABLES.some((table) => new RegExp(`^SCAN ${table}\\b`).test(d)));
        expect(scans, `${statement.sql}\n${details.join("\n")}`).toEqual([]);
      }
    }
  });
});
