// Cancel-plan in one round trip: the batch cancels the plan as it is, then
// its visits not started, then records the plan's event and one
// incident.cancelled event per visit, their JSON built in SQL from the rows
// as cancelled (src/db/incident-changes.ts, incidentJson). The plan is
// cancelled only when its visits can all be written so: no more than
// MAX_VISITS of them, each inside the zone's table; else nothing is written,
// and the plan as it is, read after, goes to the route to decide as before
// (src/routes/plans.ts).
import { and, eq, gt, ne, type SQL, sql } from "drizzle-orm";
import { events, incidents, plans } from "../../drizzle/schema";
import { toIso } from "../lib/datetime";
import { newId } from "../lib/ids";
import { type Db, keptPer, param, prepared } from "./client";
import { type Actor, enqueuedAt, eventBody, subscriberIds } from "./events";
import { type IdempotencyKey, type Written, writeBatch } from "./idempotency";
import { answerOf, answerRecord, INSERTED_ANSWER, incidentJson } from "./incident-changes";
import { ofCaller } from "./incidents";
import { isoSql, windowEndSql } from "./local-times";
import { isScheduled } from "./occupancy";
import { getPlan, type PlanRow } from "./plans";

/** The most visits a plan cancelled in one trip may have to come (event ids are made before the batch). */
const MAX_VISITS = 20;

export interface OneTripPlanCancel {
  orgId: string;
  id: string;
  caller?: string;
  reason: string | null;
  cancelVisits: boolean;
  now: number;
  offsets: { json: string; until: number };
  idempotencyKey?: IdempotencyKey;
  actor: Actor;
}

const column = (table: string) => (name: string) => sql.raw(`"${table}"."${name}"`);

/** planView in SQL, of the plans row of the statement. */
const planJson = (): SQL => {
  const c = column("plans");
  return sql`json_object('id', ${c("id")}, 'status', ${c("status")}, 'every', json_object('count', ${c("every_count")}, 'unit', ${c("every_unit")}),
    'visits', ${c("visits")}, 'serviceId', ${c("service_id")}, 'postalCode', ${c("postal_code")}, 'clientName', ${c("client_name")},
    'insectName', ${c("insect_name")}, 'phone', ${c("phone")}, 'accountId', ${c("account_id")}, 'notes', ${c("notes")},
    'technicianId', ${c("technician_id")}, 'localTime', ${c("local_time")}, 'firstVisitDate', ${c("first_visit_date")},
    'nextDueDate', ${c("next_due_date")}, 'visitsMade', ${c("visits_made")}, 'createdAt', ${isoSql(c("created_at"))},
    'updatedAt', ${isoSql(c("updated_at"))}, 'cancelledAt', ${isoSql(c("cancelled_at"))}, 'cancelReason', ${c("cancel_reason")})`;
};

/** An event of `type` with this id and data, recorded by this batch: its body, then its enqueued_at. */
const eventOf = (type: string, id: SQL, data: SQL) => {
  const literal = sql.raw(`'${type}'`);
  const body = eventBody({ id, type: literal, timestamp: param("timestamp"), actor: param("actor"), data });
  return sql`${body}, ${enqueuedAt(param("org"), literal, param("now"))}`;
};

/** The plan as this batch cancelled it. */
const cancelledNow = and(
  eq(plans.orgId, param("org")),
  eq(plans.id, param("id")),
  eq(plans.status, "cancelled"),
  eq(plans.updatedAt, param("now")),
  eq(plans.cancelledAt, param("now")),
)!;
const planCancelledNow = sql`EXISTS (SELECT 1 FROM ${plans} WHERE ${cancelledNow})`;

/** Its visits not started, scheduled (before the change). */
const toCome = and(
  eq(incidents.orgId, param("org")),
  eq(incidents.planId, param("id")),
  gt(incidents.startsAt, param("now")),
  isScheduled,
)!;

/** The statements, with or without the visits, with or without a caller bound: built once each. */
function templateOf(cancelVisits: boolean, bound: boolean) {
  const fits = sql`(SELECT count(*) FROM ${incidents} WHERE ${toCome}) <= ${MAX_VISITS}
    AND NOT EXISTS (SELECT 1 FROM ${incidents} WHERE ${toCome} AND (${incidents.endsAt} >= ${param("until")}
      OR ${windowEndSql(incidents.startsAt, incidents.arrivalWindowMinutes)} >= ${param("until")}))`;
  const plan = prepared((db) =>
    db
      .update(plans)
      .set({
        status: "cancelled",
        nextDueDate: null,
        decideAt: null,
        cancelledAt: param("now") as unknown as number,
        cancelReason: param("reason") as unknown as string,
        updatedAt: param("now") as unknown as number,
      })
      .where(
        and(
          eq(plans.orgId, param("org")),
          eq(plans.id, param("id")),
          ne(plans.status, "cancelled"),
          bound ? ofCaller(db, param("org"), param("caller"), plans) : undefined,
          cancelVisits ? fits : undefined,
        ),
      ),
  );
  const visits = prepared((db) =>
    db
      .update(incidents)
      .set({
        status: "cancelled",
        cancelledAt: param("now") as unknown as number,
        cancelReason: param("reason") as unknown as string,
        updatedAt: param("now") as unknown as number,
      })
      .where(and(toCome, planCancelledNow)),
  );
  // Each event's insert returns its subscribers' ids (and the plan's, the answer).
  const planEvent = prepared((db) =>
    db
      .insert(events)
      .select(
        sql`SELECT NULL, ${param("event")}, ${param("org")}, 'plan.cancelled', ${param("now")},
          ${eventOf("plan.cancelled", param("event") as unknown as SQL, planJson())}
          FROM ${plans} WHERE ${cancelledNow}`,
      )
      .returning({ body: INSERTED_ANSWER, endpoints: subscriberIds(param("org"), "plan.cancelled") }),
  );
  // One event per visit, in the order of their starts, each id the next of the ids made for them.
  const cancelledVisits = sql`SELECT *, row_number() OVER (ORDER BY "starts_at", "id") - 1 AS k FROM ${incidents}
    WHERE ${and(
      eq(incidents.orgId, param("org")),
      eq(incidents.planId, param("id")),
      eq(incidents.status, "cancelled"),
      eq(incidents.updatedAt, param("now")),
      eq(incidents.cancelledAt, param("now")),
      planCancelledNow,
    )}`;
  const visitId = sql`json_extract(${param("visitEvents")}, '$[' || "visit"."k" || ']')`;
  const visitEvents = prepared((db) =>
    db
      .insert(events)
      .select(
        sql`SELECT NULL, ${visitId}, ${param("org")}, 'incident.cancelled', ${param("now")},
          ${eventOf("incident.cancelled", visitId, incidentJson(column("visit"), param("offsets") as unknown as SQL))}
          FROM (${cancelledVisits}) AS "visit" ORDER BY "visit"."k"`,
      )
      .returning({ endpoints: subscriberIds(param("org"), "incident.cancelled") }),
  );
  return { plan, visits, planEvent, visitEvents };
}

/** The templates, with and without the visits and a caller bound, each made on its first cancel. */
const templates = keptPer((_key: string, cancelVisits: boolean, bound: boolean) => templateOf(cancelVisits, bound));

/**
 * Cancels the plan (and, with cancelVisits, its visits not started) in one
 * batch: `written` when it applied; else the plan as it now is (undefined:
 * none, or not the caller's).
 */
export async function cancelPlanInOneTrip(
  db: Db,
  request: OneTripPlanCancel,
): Promise<{ written: Written } | { written?: undefined; current: PlanRow | undefined }> {
  const { orgId, id, caller, reason, cancelVisits, now, offsets, idempotencyKey, actor } = request;
  const bound = caller !== undefined;
  const template = templates(`${cancelVisits} ${bound}`, cancelVisits, bound);
  const event = newId("evt", now);
  const visitEventIds = cancelVisits ? Array.from({ length: MAX_VISITS }, () => newId("evt", now)) : [];
  const values = {
    org: orgId,
    id,
    caller,
    reason,
    now,
    timestamp: toIso(now),
    actor: JSON.stringify(actor),
    event,
    visitEvents: JSON.stringify(visitEventIds),
    offsets: offsets.json,
    until: offsets.until,
  };
  // The plan event's insert returns the answer; with an Idempotency-Key, the batch also records it.
  const record = idempotencyKey ? [answerRecord(db, { idempotencyKey, table: plans, id, event })] : [];
  const statements = [
    template.plan(db, values),
    ...(cancelVisits ? [template.visits(db, values)] : []),
    template.planEvent(db, values),
    ...(cancelVisits ? [template.visitEvents(db, values)] : []),
    ...record,
  ] as const;
  const results = (await writeBatch(db, idempotencyKey, statements as never)) as unknown[];
  type Inserted = { body?: string; endpoints: string }[];
  const [planEvent, visitEvents = []] = results.slice(cancelVisits ? 2 : 1, cancelVisits ? 4 : 2) as Inserted[];
  const [applied] = planEvent!;
  // Not applied (seldom: refused, unknown, another's): the plan as it now is, in a trip of its own.
  if (!applied) return { current: await getPlan(db, orgId, id, caller) };
  const answered = (record.length ? results.at(-1) : []) as { body: string | null }[];
  const recorded = (eventId: string, endpoints: string) => ({
    orgId,
    id: eventId,
    createdAt: now,
    endpoints: JSON.parse(endpoints) as string[],
  });
  return {
    written: {
      body: idempotencyKey ? await answerOf(db, answered, event) : applied.body!,
      recorded: idempotencyKey !== undefined && answered[0]?.body != null,
      event: recorded(event, applied.endpoints),
      // The ids the batch used are the first ones, in the visits' order; their events share one subscriber list.
      alsoEvents: visitEventIds.slice(0, visitEvents.length).map((e) => recorded(e, visitEvents[0]!.endpoints)),
    },
  };
}
