// Plans against their invariants (docs/api.md, "Plans"), as a property:
// random sequences of plans created (weekly, fortnightly, monthly; some of
// 2 or 3 visits), bookings, holds, cancelled visits and plans, the clock
// moving by hours or days, and cron runs — alone, three at once, or cut off
// half-way by a D1 fault (a round trip failing, or a batch failing after one
// of its statements ran) — through the app on real D1. One fresh UTC org per
// run, open 08:00–12:00 every day: a crew of 1 or 2, or two technicians. The
// app's clock is stopped and moves only by the model's steps. After every
// step:
// - nothing is double-booked: no technician's occupied spans (visits not
//   cancelled, live holds) overlap; in crew mode no instant holds more than
//   the crews;
// - each plan's decided visits are exactly 0 … visitsMade − 1, each once,
//   each booked one an incident of that plan and every incident of the plan
//   one decided visit; its next due date the calendar's for visitsMade;
// - a cancelled plan gains no visit and no decision after it was cancelled;
// - after a cron run that was not cut off, every visit due within the
//   look-ahead of the org's local today is decided.
import { env } from "cloudflare:test";
import { eq, sql } from "drizzle-orm";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { holds, incidents, plans, planVisits } from "../../../drizzle/schema";
import { decideDueVisits } from "../../../src/availability/due-visits";
import { createDb } from "../../../src/db/client";
import { dueDate } from "../../../src/scheduling/plans";
import { addTechnician } from "../../support/catalogue";
import { D1_RETRYABLE, d1Error, type FaultPlan, nthTrip, wrapD1 } from "../../support/d1";
import { call } from "../../support/request";
import { everyDay } from "../../support/schedules";
import { db, openTenant, type Tenant } from "../../support/tenants";
import { DAY, HOUR, iso, today } from "../../support/time";
import { type StoppedClock, stoppedClock } from "../incidents/helpers";

const OPEN = everyDay(["08:00", "12:00"]);
const LOOKAHEAD_DAYS = 14;

type Command =
  | { kind: "plan"; day: number; hour: number; every: { count: number; unit: "week" | "month" }; visits: number | null }
  | { kind: "book"; day: number; hour: number }
  | { kind: "hold"; day: number; hour: number; minutes: number }
  | { kind: "cancelVisit"; pick: number }
  | { kind: "cancelPlan"; pick: number; cancelVisits: boolean }
  | { kind: "advance"; hours: number }
  | { kind: "cron"; how: "one" | "three" | "faulted"; trip: number; after: number };

const day = fc.integer({ min: 0, max: 12 });
const hour = fc.integer({ min: 8, max: 11 });
const command: fc.Arbitrary<Command> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant("plan" as const),
      day,
      hour,
      every: fc.constantFrom(
        { count: 1, unit: "week" as const },
        { count: 2, unit: "week" as const },
        { count: 1, unit: "month" as const },
      ),
      visits: fc.constantFrom(null, null, 2, 3),
    }),
    weight: 5,
  },
  {
    arbitrary: fc.record({ kind: fc.constant("book" as const), day: fc.integer({ min: 0, max: 20 }), hour }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant("hold" as const),
      day: fc.integer({ min: 0, max: 20 }),
      hour,
      minutes: fc.integer({ min: 1, max: 15 }),
    }),
    weight: 2,
  },
  { arbitrary: fc.record({ kind: fc.constant("cancelVisit" as const), pick: fc.nat() }), weight: 2 },
  {
    arbitrary: fc.record({ kind: fc.constant("cancelPlan" as const), pick: fc.nat(), cancelVisits: fc.boolean() }),
    weight: 2,
  },
  {
    arbitrary: fc.record({ kind: fc.constant("advance" as const), hours: fc.constantFrom(1, 5, 24, 72, 24 * 7) }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant("cron" as const),
      how: fc.constantFrom("one" as const, "three" as const, "faulted" as const),
      trip: fc.integer({ min: 1, max: 8 }),
      after: fc.integer({ min: 0, max: 4 }),
    }),
    weight: 5,
  },
);

interface World {
  tenant: Tenant;
  clock: StoppedClock;
  /** Crews (crew mode), or null with technicians. */
  crews: number | null;
  plans: string[];
  /** Per cancelled plan: its incidents and decisions when it was cancelled. */
  cancelled: Map<string, { incidents: number; decisions: number }>;
}

const at = (w: World, d: number, h: number) => today(w.clock.now) + d * DAY + h * HOUR;
const pick = <T>(items: T[], n: number) => (items.length === 0 ? undefined : items[n % items.length]);

async function step(w: World, c: Command) {
  const t = w.tenant;
  switch (c.kind) {
    case "plan": {
      const body = {
        dateTime: iso(at(w, c.day, c.hour)),
        clientName: "Pat",
        insectName: "ants",
        every: c.every,
        visits: c.visits,
      };
      const res = await call(t, "/api/v1/ai-agent/create-plan", { body });
      expect([200, 409], res.text).toContain(res.status);
      if (res.status === 200) w.plans.push(res.body.plan.id);
      return;
    }
    case "book": {
      const body = { dateTime: iso(at(w, c.day, c.hour)), clientName: "Walk-in", insectName: "ants" };
      const res = await call(t, "/api/v1/ai-agent/create-incident", { body });
      expect([200, 409], res.text).toContain(res.status);
      return;
    }
    case "hold": {
      const body = { dateTime: iso(at(w, c.day, c.hour)), holdMinutes: c.minutes };
      const res = await call(t, "/api/v1/ai-agent/hold-slot", { body });
      expect([200, 409], res.text).toContain(res.status);
      return;
    }
    case "cancelVisit": {
      const rows = await db().select({ id: incidents.id }).from(incidents).where(eq(incidents.orgId, t.orgId));
      const target = pick(rows, c.pick);
      if (!target) return;
      const res = await call(t, `/api/v1/incidents/${target.id}/cancel`, { body: {} });
      expect([200, 409], res.text).toContain(res.status);
      return;
    }
    case "cancelPlan": {
      const id = pick(w.plans, c.pick);
      if (!id) return;
      const res = await call(t, `/api/v1/plans/${id}/cancel`, { body: { cancelVisits: c.cancelVisits } });
      expect(res.status, res.text).toBe(200);
      if (!w.cancelled.has(id)) w.cancelled.set(id, await countsOf(id));
      return;
    }
    case "advance":
      w.clock.set(w.clock.now + c.hours * HOUR);
      return;
    case "cron": {
      const now = w.clock.now;
      if (c.how === "one") {
        await decideDueVisits(createDb(env.DB), now);
        return expectAllDecided(w);
      }
      if (c.how === "three") {
        await Promise.all([0, 1, 2].map(() => decideDueVisits(createDb(env.DB), now)));
        return expectAllDecided(w);
      }
      // Cut off: a round trip fails before reaching D1, or a batch fails after statement `after` ran (D1 rolls it back).
      const fault: FaultPlan =
        c.after === 0
          ? { fail: nthTrip(c.trip), error: d1Error(D1_RETRYABLE.networkLost) }
          : { midBatch: { match: nthTrip(c.trip), after: c.after }, error: d1Error(D1_RETRYABLE.overloaded) };
      const faulty = wrapD1(env.DB, fault);
      await decideDueVisits(createDb(faulty.db), now).catch(() => undefined);
      return;
    }
  }
}

async function countsOf(planId: string) {
  const [made] = await db().select({ n: sql<number>`count(*)` }).from(planVisits).where(eq(planVisits.planId, planId));
  const [booked] = await db().select({ n: sql<number>`count(*)` }).from(incidents).where(eq(incidents.planId, planId));
  return { incidents: booked!.n, decisions: made!.n };
}

/** Nothing double-booked: per technician no two occupied spans overlap; in crew mode no instant holds more than the crews. */
async function expectNoOverlap(w: World) {
  const visits = await db().select().from(incidents).where(eq(incidents.orgId, w.tenant.orgId));
  const held = await db().select().from(holds).where(eq(holds.orgId, w.tenant.orgId));
  const spans = [
    ...visits
      .filter((v) => v.status !== "cancelled")
      .map((v) => ({ start: v.startsAt, end: v.occupiedUntil, by: v.technicianId, id: v.id })),
    ...held
      .filter((h) => h.expiresAt > w.clock.now)
      .map((h) => ({ start: h.startsAt, end: h.occupiedUntil, by: h.technicianId, id: h.id })),
  ];
  for (const s of spans) {
    const overlapping = spans.filter((o) => o.start < s.end && o.end > s.start && (w.crews !== null || o.by === s.by));
    // Crew mode: the spans are whole hours, so the peak over `s` is at one of the starts inside it.
    if (w.crews === null)
      expect(
        overlapping.map((o) => o.id),
        `${s.by} double-booked`,
      ).toEqual([s.id]);
    else
      for (const instant of [s.start, ...overlapping.map((o) => o.start).filter((x) => x > s.start && x < s.end)])
        expect(overlapping.filter((o) => o.start <= instant && o.end > instant).length).toBeLessThanOrEqual(w.crews);
  }
}

/** Each plan's decisions are 0 … visitsMade − 1, each once; booked ones are its incidents, one to one; a cancelled plan gains nothing. */
async function expectDecidedOnce(w: World) {
  for (const id of w.plans) {
    const [plan] = await db().select().from(plans).where(eq(plans.id, id));
    const decided = await db().select().from(planVisits).where(eq(planVisits.planId, id));
    const own = await db().select().from(incidents).where(eq(incidents.planId, id));
    expect(decided.map((d) => d.k).sort((a, b) => a - b)).toEqual(
      Array.from({ length: plan!.visitsMade }, (_, k) => k),
    );
    const booked = decided
      .filter((d) => d.incidentId !== null)
      .map((d) => d.incidentId)
      .sort();
    expect(booked).toEqual(own.map((i) => i.id).sort());
    for (const d of decided)
      expect(d.dueDate).toBe(dueDate(plan!.firstVisitDate, { count: plan!.everyCount, unit: plan!.everyUnit }, d.k));
    const every = { count: plan!.everyCount, unit: plan!.everyUnit };
    if (plan!.status === "active")
      expect(plan!.nextDueDate).toBe(dueDate(plan!.firstVisitDate, every, plan!.visitsMade));
    else expect(plan!.nextDueDate).toBeNull();
    const atCancel = w.cancelled.get(id);
    if (atCancel) expect({ incidents: own.length, decisions: decided.length }).toEqual(atCancel);
  }
}

/** After a run that was not cut off: no active plan has a visit due within the look-ahead left undecided. */
async function expectAllDecided(w: World) {
  const horizon = iso(today(w.clock.now) + LOOKAHEAD_DAYS * DAY).slice(0, 10);
  const active = await db().select().from(plans).where(eq(plans.orgId, w.tenant.orgId));
  for (const plan of active.filter((p) => p.status === "active"))
    expect(plan.nextDueDate! > horizon, `${plan.id} due ${plan.nextDueDate} undecided at ${iso(w.clock.now)}`).toBe(
      true,
    );
}

describe("plans against their invariants (property)", () => {
  it("plans, bookings, holds, cancels, the clock and cron runs (alone, three at once, cut off): never double-booked, each due visit decided once, a cancelled plan books nothing more", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<number | null>(1, 2, null),
        fc.array(command, { minLength: 6, maxLength: 22 }),
        async (crews, commands) => {
          const tenant = await openTenant("Plan Model Org", {
            capacity: crews ?? 1,
            weeklyHours: OPEN,
            horizonDays: 30,
            minNoticeMinutes: 0,
          });
          if (crews === null) for (const name of ["A", "B"]) await addTechnician(tenant, { name });
          const clock = stoppedClock();
          const w: World = { tenant, clock, crews, plans: [], cancelled: new Map() };
          try {
            for (const c of commands) {
              await step(w, c);
              await expectNoOverlap(w);
              await expectDecidedOnce(w);
            }
          } finally {
            clock.restore();
            // The runs share the database: this org's plans must not reach the next run's cron.
            await db().update(plans).set({ status: "cancelled", decideAt: null }).where(eq(plans.orgId, tenant.orgId));
          }
        },
      ),
      { seed: 20261127, numRuns: 15 },
    );
  }, 900_000);
});
