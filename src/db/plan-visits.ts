// Deciding a plan's next visits (docs/api.md, "Plans"): the plans whose next
// visit may be decided, read across orgs by the plans_active_decide index,
// and each decision written by one batch — the visit booked by one
// conditional statement (or recorded unplaced), the record of the decision,
// the plan moved on, and the event — that applies only while the plan is
// still active at that visit. The record's primary key (plan, k) makes a
// second decision of one visit fail whole, however runs overlap.
import { and, asc, eq, lte, type SQL, sql } from "drizzle-orm";
import { incidents, orgs, plans, planVisits } from "../../drizzle/schema";
import { MINUTE } from "../lib/datetime";
import { newId } from "../lib/ids";
import { afterDecided, type DuePlacement } from "../scheduling/plans";
import { scheduleOf } from "../scheduling/schedule";
import type { VisitRequest } from "../scheduling/visits";
import { CHOSEN, type Db, inColumnOrder, insertWhere, violatesUnique } from "./client";
import { actorOf, type RecordedEvent } from "./events";
import { incidentView } from "./incidents";
import type { Org } from "./orgs";
import { assignee, roomFor } from "./placement";
import { type PlanRow, planView } from "./plans";
import { commitWrite } from "./write";

/** A plan due for a decision, with its org as requests see it (but its catalogue, read apart once per org). */
export interface DuePlan {
  plan: PlanRow;
  org: Omit<Org, "catalogue">;
}

/**
 * Active plans whose next visit may be decided at `now` (decide_at passed),
 * soonest first, at most `limit`, each with its org: one round trip. With
 * `planId`, that plan only (create-plan's own look after its answer).
 */
export async function duePlans(db: Db, now: number, limit: number, planId?: string): Promise<DuePlan[]> {
  const rows = await db
    .select({
      plan: plans,
      name: orgs.name,
      timeZone: orgs.timeZone,
      country: orgs.country,
      schedule: orgs.schedule,
      maxSlotMinutes: orgs.maxSlotMinutes,
      cursorSecret: orgs.cursorSecret,
    })
    .from(plans)
    .innerJoin(orgs, eq(orgs.id, plans.orgId))
    // The status as a literal: the partial index's own condition.
    .where(and(sql`${plans.status} = 'active'`, lte(plans.decideAt, now), planId ? eq(plans.id, planId) : undefined))
    .orderBy(asc(plans.decideAt))
    .limit(limit);
  return rows.map(({ plan, ...org }) => ({
    plan,
    org: {
      id: plan.orgId,
      name: org.name,
      country: org.country,
      schedule: scheduleOf(org.timeZone, org.schedule),
      maxBookingMs: org.maxSlotMinutes * MINUTE,
      cursorSecret: org.cursorSecret,
    },
  }));
}

export interface Decision {
  org: Org;
  /** The plan as read: the decision applies only while it is still active at this visit. */
  plan: PlanRow;
  /** The engine's request for the plan's visit (its service, the org's technicians, its place). */
  request: VisitRequest;
  now: number;
}

/** What a decision wrote: the plan as it now is and the event recorded; undefined when another decision came first. */
export type Decided = { plan: PlanRow; event?: RecordedEvent } | undefined;

/** The plan still active at its visit `visitsMade` (as read): the condition every statement of a decision starts from. */
const stillAt = (plan: PlanRow): SQL =>
  sql`EXISTS (SELECT 1 FROM ${plans} WHERE ${and(
    eq(plans.id, plan.id),
    eq(plans.orgId, plan.orgId),
    sql`${plans.status} = 'active'`,
    eq(plans.visitsMade, plan.visitsMade),
  )})`;

/** The plan moved on past its visit `visitsMade`, once that visit's decision is recorded by the same batch. */
function moveOn(db: Db, { org, plan, now }: Decision) {
  const next = afterDecided(plan, plan.visitsMade + 1, org.schedule);
  const recorded = sql`EXISTS (SELECT 1 FROM ${planVisits} WHERE ${and(
    eq(planVisits.planId, plan.id),
    eq(planVisits.k, plan.visitsMade),
    eq(planVisits.decidedAt, now),
  )})`;
  const update = db
    .update(plans)
    .set({ ...next, updatedAt: now })
    .where(
      and(
        eq(plans.orgId, org.id),
        eq(plans.id, plan.id),
        sql`${plans.status} = 'active'`,
        eq(plans.visitsMade, plan.visitsMade),
        recorded,
      ),
    );
  return { update, moved: { ...plan, ...next, updatedAt: now } };
}

/** A second decision of one visit: its record's primary key stopped the batch, and nothing of it was written. */
const decidedBefore = (error: unknown) => violatesUnique(error, "plan_visits.plan_id, plan_visits.k");

/**
 * Books the plan's due visit where `placement` says, in one conditional
 * statement: only while the place has room (the booking's own condition;
 * with technicians, the chosen one still free and eligible) and the plan is
 * still active at this visit. The incident carries the plan's details and
 * `planId`; its event's actor is the plan.
 */
export async function bookDueVisit(db: Db, decision: Decision, placement: DuePlacement): Promise<Decided> {
  const { org, plan, request, now } = decision;
  const { visit } = request;
  const id = newId("inc", now);
  const slot = { start: placement.start, end: placement.start + visit.durationMs };
  const row = inColumnOrder(incidents, {
    id,
    orgId: org.id,
    status: "scheduled",
    clientName: plan.clientName,
    insectName: plan.insectName,
    accountId: plan.accountId,
    phone: plan.phone,
    notes: plan.notes,
    startsAt: slot.start,
    endsAt: slot.end,
    createdAt: now,
    updatedAt: now,
    serviceId: visit.serviceId,
    postalCode: plan.postalCode,
    occupiedUntil: slot.end + visit.bufferMs,
    arrivalWindowMinutes: visit.windowMs / MINUTE,
    planId: plan.id,
  });
  const chosen = request.technicians.find((t) => t.id === placement.technicianId);
  const where = { request, slot, candidates: chosen ? [chosen] : null };
  const census = { org, now };
  // The technician assigned once (insertWhere's chosen), read for the row and the room.
  const assigned = chosen ? assignee(census, where, chosen.id) : undefined;
  const technician = assigned ? CHOSEN : null;
  const inserted = insertWhere(
    db,
    incidents,
    { ...row, technicianId: technician },
    and(roomFor(census, where, technician), stillAt(plan)) as SQL,
    assigned,
  );
  const isBooked = sql`EXISTS (SELECT 1 FROM ${incidents} WHERE ${eq(incidents.id, id)})`;
  const record = insertWhere(
    db,
    planVisits,
    { planId: plan.id, k: plan.visitsMade, orgId: org.id, dueDate: plan.nextDueDate!, incidentId: id, decidedAt: now },
    isBooked,
  );
  const { update, moved } = moveOn(db, decision);
  const view = JSON.stringify(incidentView(row, org.schedule.timeZone));
  const data = sql`json_set(${view}, '$.technicianId', (SELECT ${incidents.technicianId} FROM ${incidents} WHERE ${eq(incidents.id, id)}))`;
  try {
    const { applied, written } = await commitWrite(db, {
      orgId: org.id,
      now,
      row: { table: incidents, id },
      statements: { inserted, record, moved: update },
      event: { type: "incident.created", data, actor: actorOf("plan") },
      body: view,
    });
    return applied ? { plan: moved, event: written.event } : undefined;
  } catch (error) {
    if (decidedBefore(error)) return undefined;
    throw error;
  }
}

/**
 * Records the plan's due visit unplaced (no bookable start within three
 * days of its due date) and tells the office: `plan.visit_unplaced`, the
 * plan with the visit's `dueDate`. Only while the plan is still active at
 * this visit.
 */
export async function recordUnplaced(db: Db, decision: Decision): Promise<Decided> {
  const { org, plan, now } = decision;
  const dueDate = plan.nextDueDate!;
  const record = insertWhere(
    db,
    planVisits,
    { planId: plan.id, k: plan.visitsMade, orgId: org.id, dueDate, incidentId: null, decidedAt: now },
    stillAt(plan),
  );
  const { update, moved } = moveOn(db, decision);
  try {
    const { applied, written } = await commitWrite(db, {
      orgId: org.id,
      now,
      row: {
        table: plans,
        id: plan.id,
        state: and(eq(plans.visitsMade, moved.visitsMade), eq(plans.updatedAt, now)),
      },
      statements: { record, moved: update },
      event: {
        type: "plan.visit_unplaced",
        data: JSON.stringify({ ...planView(moved), dueDate }),
        actor: actorOf("plan"),
      },
      body: JSON.stringify(planView(moved)),
    });
    return applied ? { plan: moved, event: written.event } : undefined;
  } catch (error) {
    if (decidedBefore(error)) return undefined;
    throw error;
  }
}

/**
 * Puts a plan's next decision off to `decideAt` (the org's horizon became
 * shorter than the look-ahead it was computed with): no event, the plan's
 * answer unchanged.
 */
export async function deferPlan(db: Db, plan: PlanRow, decideAt: number) {
  await db
    .update(plans)
    .set({ decideAt })
    .where(and(eq(plans.orgId, plan.orgId), eq(plans.id, plan.id), eq(plans.visitsMade, plan.visitsMade)));
}
