// Service plans (docs/api.md, "Plans"): a plan is created in the batch that
// books its first visit (create-incident's own statements, holds included),
// read and listed by org and — for an agent key — by caller, and cancelled
// with its future visits in one batch. Its later visits are decided by
// src/db/plan-visits.ts.
import { and, desc, eq, gt, sql } from "drizzle-orm";
import { incidents, type PlanStatus, plans, planVisits } from "../../drizzle/schema";
import { toIso, toIsoOrNull } from "../lib/datetime";
import { newId } from "../lib/ids";
import { afterDecided, type Every } from "../scheduling/plans";
import type { Schedule } from "../scheduling/schedule";
import { localIso } from "../scheduling/zone";
import type { PlanOut } from "../schemas/plans";
import {
  type CursorPosition,
  type Db,
  inColumnOrder,
  insertWhere,
  keptPer,
  pageOf,
  param,
  placeholdersFor,
  prepared,
  preparedWith,
} from "./client";
import type { Actor } from "./events";
import { guard, stoppedBy } from "./guards";
import type { IdempotencyKey } from "./idempotency";
import {
  type Booked,
  type BookingRequest,
  bookingOf,
  heldAfterRefusal,
  type IncidentRow,
  incidentView,
  ofCaller,
} from "./incidents";
import { isScheduled } from "./occupancy";
import { commitWrite } from "./write";

export type PlanRow = typeof plans.$inferSelect;

/** The plan as the API shows it (docs/api.md, "Plans"). */
export function planView(row: PlanRow): PlanOut {
  return {
    id: row.id,
    status: row.status,
    every: { count: row.everyCount, unit: row.everyUnit },
    visits: row.visits,
    serviceId: row.serviceId,
    postalCode: row.postalCode,
    clientName: row.clientName,
    insectName: row.insectName,
    phone: row.phone,
    accountId: row.accountId,
    notes: row.notes,
    technicianId: row.technicianId,
    localTime: row.localTime,
    firstVisitDate: row.firstVisitDate,
    nextDueDate: row.nextDueDate,
    visitsMade: row.visitsMade,
    createdAt: toIso(row.createdAt),
    updatedAt: toIso(row.updatedAt),
    cancelledAt: toIsoOrNull(row.cancelledAt),
    cancelReason: row.cancelReason,
  };
}

/** The stored value of a column of the incident this batch booked (bound as `id`). */
const ofBooked = (column: typeof incidents.technicianId | typeof incidents.accountId) =>
  sql`(SELECT ${column} FROM ${incidents} WHERE ${eq(incidents.id, param("id"))})`;

const booked = sql`EXISTS (SELECT 1 FROM ${incidents} WHERE ${eq(incidents.id, param("id"))})`;

/** A plan's columns as placeholders, named `plan.<column>`: beside the incident's own, which share many names. */
const PLAN = "plan.";
const planValues = (row: PlanRow) => Object.fromEntries(Object.entries(row).map(([key, value]) => [PLAN + key, value]));

/**
 * The plan's statements beside a booking template's (one set per template,
 * built on first use): the plan, inserted only if the visit was booked,
 * with that visit's technician and account; its first decided visit (k =
 * 0); its JSON, and the answer's (the plan, the incident with `remaining`,
 * and `holdExpired` when a hold was named).
 */
const planTemplates = keptPer((template: ReturnType<typeof bookingOf>["template"]) => {
  const row = {
    ...placeholdersFor(plans, PLAN),
    technicianId: ofBooked(incidents.technicianId),
    accountId: ofBooked(incidents.accountId),
  };
  const view = sql`json_set(${param("planView")}, '$.technicianId', ${ofBooked(incidents.technicianId)}, '$.accountId', ${ofBooked(incidents.accountId)})`;
  const answer = sql`'plan', json(${view}), 'incident', json(${template.remaining})`;
  return {
    insert: prepared((db) => insertWhere(db, plans, row, booked)),
    decided: prepared((db) =>
      insertWhere(
        db,
        planVisits,
        {
          planId: param(`${PLAN}id`),
          k: sql`0`,
          orgId: param("orgId"),
          dueDate: param(`${PLAN}firstVisitDate`),
          incidentId: param("id"),
          decidedAt: param("now"),
        },
        booked,
      ),
    ),
    view,
    body: template.holdExpired
      ? sql`json_object(${answer}, 'holdExpired', ${template.holdExpired})`
      : sql`json_object(${answer})`,
  };
}, new WeakMap());

export interface NewPlan {
  every: Every;
  /** All its visits, the first included; null: until cancelled. */
  visits: number | null;
}

/**
 * Creates a plan and books its first visit in one batch (docs/api.md,
 * "Plans"): the visit exactly as create-incident books it — the same
 * statements, holds included — then the plan and the record of its first
 * visit decided, each only if the visit was booked: both or neither.
 * Records incident.created and plan.created.
 */
export async function createPlan(
  db: Db,
  request: BookingRequest & NewPlan,
): Promise<Booked & { planId: string; decideAt: number | null }> {
  const { org, placement, incident, now, idempotencyKey, actor, every, visits } = request;
  const { schedule } = org;
  const planId = newId("plan", now);
  const booking = bookingOf({ ...request, incident: { ...incident, planId } });
  // The first visit's local date and start time, as the org's wall clock reads them.
  const local = localIso(placement.slot.start, schedule.timeZone);
  const cadence = { everyCount: every.count, everyUnit: every.unit, visits, firstVisitDate: local.slice(0, 10) };
  const row = inColumnOrder(plans, {
    ...cadence,
    ...afterDecided(cadence, 1, schedule),
    id: planId,
    orgId: org.id,
    serviceId: placement.request.visit.serviceId,
    postalCode: incident.postalCode,
    clientName: incident.clientName,
    insectName: incident.insectName,
    phone: incident.phone,
    notes: incident.notes,
    localTime: local.slice(11, 16),
    createdAt: now,
    updatedAt: now,
  });
  const template = planTemplates(booking.template);
  const values = { ...booking.values, ...planValues(row), planView: JSON.stringify(planView(row)) };
  const { applied, written } = await commitWrite(db, {
    orgId: org.id,
    now,
    idempotencyKey,
    row: { table: incidents, id: booking.id },
    statements: {
      ...booking.statements(db),
      plan: template.insert(db, values),
      decided: template.decided(db, values),
    },
    event: { type: "incident.created", data: booking.template.view, actor },
    alsoEvents: [{ table: plans, rowId: planId, type: "plan.created", data: template.view, actor }],
    body: template.body,
    values,
  });
  const { decideAt } = row;
  return applied ? { written, planId, decideAt } : { hold: await heldAfterRefusal(db, request), planId, decideAt };
}

const planById = preparedWith((db, has) =>
  db
    .select()
    .from(plans)
    .where(
      and(
        eq(plans.orgId, param("orgId")),
        eq(plans.id, param("id")),
        has("caller") ? ofCaller(db, param("orgId"), param("caller"), plans) : undefined,
      ),
    )
    .limit(1),
);

/** The plan, if the org has it — and, for a call bound to `caller`, only if it is the caller's. */
export async function getPlan(db: Db, orgId: string, id: string, caller?: string): Promise<PlanRow | undefined> {
  return planById(db, { orgId, id, caller }).get();
}

/** A plan's scheduled visits that have not started (at `now`), by the (org, plan, start) index. */
const futureVisits = prepared((db) =>
  db
    .select()
    .from(incidents)
    .where(
      and(
        eq(incidents.orgId, param("orgId")),
        eq(incidents.planId, param("planId")),
        gt(incidents.startsAt, param("now")),
        isScheduled,
      ),
    ),
);

/** The plan and its visits not started yet, in one round trip (what cancelling decides on). */
export async function planWithFutureVisits(db: Db, orgId: string, id: string, now: number, caller?: string) {
  const [[plan], visits] = await db.batch([
    planById(db, { orgId, id, caller }),
    futureVisits(db, { orgId, planId: id, now }),
  ]);
  return { plan: plan as PlanRow | undefined, visits: visits as IncidentRow[] };
}

export interface PlanCancel {
  org: { id: string; schedule: Schedule };
  /** The plan as read: the cancel applies only if it is still so. */
  seen: PlanRow;
  /** Its visits not started, as read, to cancel with it (none: cancelVisits false). */
  visits: IncidentRow[];
  reason: string | null;
  /** Whether its visits not started are cancelled with it: then none may remain. */
  cancelVisits: boolean;
  now: number;
  idempotencyKey?: IdempotencyKey;
  actor: Actor;
}

/**
 * Cancels a plan and, with `cancelVisits`, its visits not started, in one
 * batch, each visit with its incident.cancelled event: written only if the
 * plan and every visit are still as read, and no other visit of the plan
 * was booked meanwhile — a guard at the end of the batch fails it whole
 * otherwise, and the caller reads again. Answers the plan's JSON, or
 * undefined when something changed first.
 */
export async function cancelPlan(db: Db, cancel: PlanCancel) {
  const { org, seen, visits, reason, cancelVisits, now, idempotencyKey, actor } = cancel;
  const changed: PlanRow = {
    ...seen,
    status: "cancelled",
    nextDueDate: null,
    decideAt: null,
    cancelledAt: now,
    cancelReason: reason,
    updatedAt: now,
  };
  const update = db
    .update(plans)
    .set({
      status: "cancelled",
      nextDueDate: null,
      decideAt: null,
      cancelledAt: now,
      cancelReason: reason,
      updatedAt: now,
    })
    .where(
      and(
        eq(plans.orgId, org.id),
        eq(plans.id, seen.id),
        eq(plans.status, seen.status),
        eq(plans.updatedAt, seen.updatedAt),
      ),
    );
  const cancelled = visits.map((visit) => ({
    ...visit,
    status: "cancelled" as const,
    cancelledAt: now,
    cancelReason: reason,
    updatedAt: now,
  }));
  const visitUpdates = cancelled.map((visit, i) =>
    db
      .update(incidents)
      .set({ status: "cancelled", cancelledAt: now, cancelReason: reason, updatedAt: now })
      .where(
        and(
          eq(incidents.orgId, org.id),
          eq(incidents.id, visit.id),
          isScheduled,
          eq(incidents.updatedAt, visits[i]!.updatedAt),
        ),
      ),
  );
  const isCancelled = and(eq(plans.status, "cancelled"), eq(plans.updatedAt, now));
  const planCancelled = sql`EXISTS (SELECT 1 FROM ${plans} WHERE ${and(eq(plans.id, seen.id), isCancelled)})`;
  const visitLeft = sql`EXISTS (SELECT 1 FROM ${incidents} WHERE ${and(
    eq(incidents.orgId, org.id),
    eq(incidents.planId, seen.id),
    gt(incidents.startsAt, now),
    isScheduled,
  )})`;
  const body = JSON.stringify(planView(changed));
  try {
    const { applied, written } = await commitWrite(db, {
      orgId: org.id,
      now,
      idempotencyKey,
      row: { table: plans, id: seen.id, state: isCancelled },
      statements: {
        cancelled: update,
        ...Object.fromEntries(visitUpdates.map((statement, i) => [`visit${i}`, statement])),
        changedMeanwhile: guard(
          db,
          "plan-cancel",
          cancelVisits ? sql`NOT ${planCancelled} OR ${visitLeft}` : sql`NOT ${planCancelled}`,
        ),
      },
      event: { type: "plan.cancelled", data: body, actor },
      alsoEvents: cancelled.map((visit) => ({
        table: incidents,
        rowId: visit.id,
        state: and(eq(incidents.status, "cancelled"), eq(incidents.updatedAt, now)),
        type: "incident.cancelled" as const,
        data: JSON.stringify(incidentView(visit, org.schedule.timeZone)),
        actor,
      })),
      body,
    });
    return applied ? written : undefined;
  } catch (error) {
    if (stoppedBy(error, "plan-cancel")) return undefined;
    throw error;
  }
}

export interface PlanFilters {
  status?: PlanStatus;
  /** E.164. */
  phone?: string;
  accountId?: string;
}

/** Newest first: a page starts after the cursor's (createdAt, id), downwards. */
const beforeCursor = sql`(${plans.createdAt}, ${plans.id}) < (${param("afterAt")}, ${param("afterId")})`;

/**
 * One page newest first (createdAt, id descending), by keyset: each filter
 * has an index (org, the filter, created, id) read backwards, so a page
 * reads its rows and one more, at any depth.
 */
const planPage = preparedWith((db, has) =>
  db
    .select()
    .from(plans)
    .where(
      and(
        eq(plans.orgId, param("orgId")),
        has("status") ? eq(plans.status, param("status")) : undefined,
        has("phone") ? eq(plans.phone, param("phone")) : undefined,
        has("accountId") ? eq(plans.accountId, param("accountId")) : undefined,
        has("caller") ? ofCaller(db, param("orgId"), param("caller"), plans) : undefined,
        has("afterAt") ? beforeCursor : undefined,
      ),
    )
    .orderBy(desc(plans.createdAt), desc(plans.id))
    .limit(param("limit")),
);

export async function listPlans(
  db: Db,
  query: { orgId: string; filters: PlanFilters; caller?: string; after?: CursorPosition; limit: number },
) {
  const { orgId, filters, caller, after, limit } = query;
  const rows = await planPage(db, {
    orgId,
    ...filters,
    caller,
    afterAt: after?.at,
    afterId: after?.id,
    limit: limit + 1,
  }).all();
  return pageOf(rows, limit);
}
