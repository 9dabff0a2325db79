// An incident's change in one round trip: the batch reads the incident as it
// is, checks the change's conditions on it, records its event (the incident's
// JSON built in SQL, as incidentView writes it) and applies it, without a
// read before. Each condition is one the route would check on a read row, so
// a change that meets them is the change the route would have decided; one
// that does not writes nothing, and the incident as it is, read after, goes
// to the route to decide as before (src/routes/incidents.ts, changeLoop).
import { type AnyColumn, and, eq, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { events, incidents, type plans } from "../../drizzle/schema";
import { toIso } from "../lib/datetime";
import { newId } from "../lib/ids";
import { type Db, keptPer, param, prepared } from "./client";
import { TEMPLATES as TEMPLATES_DB } from "./drizzle-internals";
import { type Actor, enqueuedAt, eventBody, subscriberIds } from "./events";
import { type IdempotencyKey, recordWithWrite, type Written, writeBatch } from "./idempotency";
import { CHANGE_EVENTS, getIncident, type IncidentRow, ofCaller } from "./incidents";
import { isoSql, timesSql, windowEndSql } from "./local-times";
import { type Census, crewFits } from "./occupancy";
import type { Org } from "./orgs";
import { assigneeOf } from "./placement";

/** A move's conditions known before the row (src/routes/incidents.ts, moveRules). */
export interface MoveRules {
  /** The new start. */
  start: number;
  /** The lengths (ms) a visit may have and still be booked at `start`, a JSON array. */
  durations: string;
  /** The schedule's slot (ms): the length a visit of no service takes. */
  slotMs: number;
  /** Technician mode: per length ("d" + ms), the ids of the technicians on duty for it, a JSON object; else null. */
  duty: string | null;
  /** Technician mode: each service's skills by id, a JSON object. */
  skills: string | null;
  /** Technician mode: the start's local date, and the instants that day starts and ends. */
  date: string | null;
  dayStart: number | null;
  dayEnd: number | null;
}

export type OneTripChange =
  | { kind: "move"; rules: MoveRules }
  | { kind: "cancel"; reason: string | null }
  | { kind: "close"; outcome: "completed" | "no_show"; note: string | null };

export interface OneTripRequest {
  org: Org;
  id: string;
  /** A bound call's caller: only the caller's incident changes. */
  caller?: string;
  now: number;
  /** offsetsJson's table of the org's zone, and the instants it covers: a change of an incident outside them is decided by the route. */
  offsets: { json: string; from: number; until: number };
  change: OneTripChange;
  idempotencyKey?: IdempotencyKey;
  actor: Actor;
}

/** The request's values, one column each of the derived table `p`: each placeholder is bound once. */
const VALUES = [
  "org",
  "id",
  "event",
  "now",
  "timestamp",
  "actor",
  "type",
  "offsets",
  "from",
  "until",
  "caller",
  "start",
  "durations",
  "slot",
  "capacity",
  "duty",
  "skills",
  "date",
  "dayStart",
  "dayEnd",
  "status",
  "text",
] as const;
type Value = (typeof VALUES)[number];
const p = (name: Value) => sql.raw(`p."p_${name}"`);
const r = (column: string) => sql.raw(`r."${column}"`);
const values = sql.join(
  VALUES.map((name) => sql`${param(name)} AS ${sql.raw(`"p_${name}"`)}`),
  sql`, `,
);

/** The incident as the batch reads it, before the change. */
const m = alias(incidents, "m");
const length = sql`(${m.endsAt} - ${m.startsAt})`;
/** The span it occupies once moved to the new start: its own length and buffer. */
const movedSpan = { start: p("start"), end: sql`${p("start")} + (${m.occupiedUntil} - ${m.startsAt})` };

/**
 * Technician mode: the technician a move is assigned (assigneeOf), of the row
 * as it is. SQLite resolves no outer column in a sub-select's ORDER BY,
 * where the day's load is counted: its values are placeholders.
 */
function moveAssignee(): SQL {
  const census = {
    org: { id: param("org"), schedule: { capacity: p("capacity") } },
    now: p("now"),
    except: param("id"),
    fresh: true,
  } as unknown as Census;
  return assigneeOf(
    census,
    {
      candidates: sql`json_extract(${p("duty")}, '$.d' || ${length})`,
      skills: sql`coalesce(json_extract(${p("skills")}, '$.' || ${m.serviceId}), '[]')`,
      postalCode: sql`upper(replace(replace(${m.postalCode}, ' ', ''), '-', ''))`,
      date: p("date"),
      dayStart: param("dayStart"),
      dayEnd: param("dayEnd"),
      span: movedSpan,
    },
    m.technicianId as unknown as SQL,
  );
}

type Mode = "crew" | "technicians";

/**
 * The row as it will be, and when the change applies to it: each condition
 * one the route checks on a row it read (changeLoop's `decide`), with the
 * times the answer writes inside the zone's table.
 */
function changeOf(kind: OneTripChange["kind"], mode: Mode) {
  const covered = (...instants: (SQL | AnyColumn)[]) =>
    and(...instants.map((instant) => sql`${instant} >= ${p("from")} AND ${instant} < ${p("until")}`))!;
  const windowEnd = (start: SQL | AnyColumn) => windowEndSql(start, m.arrivalWindowMinutes);
  if (kind === "move") {
    const start = p("start");
    const end = sql`${start} + ${length}`;
    const census = {
      org: { id: p("org"), schedule: { capacity: p("capacity") } },
      now: p("now"),
      except: p("id"),
    } as unknown as Census;
    return {
      after: {
        status: m.status,
        startsAt: start,
        endsAt: end,
        technicianId: mode === "crew" ? sql`NULL` : moveAssignee(),
      },
      when: and(
        sql`${m.status} = 'scheduled'`,
        sql`${m.startsAt} > ${p("now")}`,
        sql`${m.startsAt} <> ${start}`,
        sql`${length} IN (SELECT value FROM json_each(${p("durations")}))`,
        // A visit of no service moves with the schedule's slot, which must be its own.
        sql`(${m.serviceId} IS NOT NULL OR (${length} = ${p("slot")} AND ${m.occupiedUntil} = ${m.endsAt} AND ${m.arrivalWindowMinutes} = 0))`,
        covered(m.startsAt, m.endsAt, start, end, windowEnd(start)),
        mode === "crew"
          ? crewFits({ ...census, fresh: true }, movedSpan)
          : // What normalisePostalCode does, in SQL, for the codes it is exact on.
            sql`(${m.postalCode} IS NULL OR ${m.postalCode} NOT GLOB '*[^A-Za-z0-9 -]*')`,
      )!,
    };
  }
  const own = { startsAt: m.startsAt, endsAt: m.endsAt, technicianId: m.technicianId };
  const times = covered(m.startsAt, m.endsAt, windowEnd(m.startsAt));
  if (kind === "cancel")
    return {
      after: { ...own, status: sql`'cancelled'`, cancelledAt: p("now"), cancelReason: p("text") },
      when: and(sql`${m.status} = 'scheduled'`, sql`${m.startsAt} > ${p("now")}`, times)!,
    };
  return {
    after: { ...own, status: p("status"), closedAt: p("now"), outcomeNote: p("text") },
    when: and(sql`${m.status} = 'scheduled'`, sql`${m.startsAt} <= ${p("now")}`, times)!,
  };
}

/**
 * incidentView in SQL, of a row whose columns (by SQL name) `column` reads,
 * its times written with the zone's table `offsets` (offsetsJson's).
 */
export function incidentJson(column: (name: string) => SQL, offsets: SQL): SQL {
  const [start, end, minutes] = [column("starts_at"), column("ends_at"), column("arrival_window_minutes")];
  const windowEnd = windowEndSql(start, minutes);
  const window = sql`json(CASE WHEN ${minutes} > 0 THEN ${timesSql(start, windowEnd, offsets)} END)`;
  return sql`json_object('id', ${column("id")}, 'status', ${column("status")}, 'dateTime', ${isoSql(start)},
    'clientName', ${column("client_name")}, 'insectName', ${column("insect_name")}, 'accountId', ${column("account_id")},
    'phone', ${column("phone")}, 'notes', ${column("notes")}, 'serviceId', ${column("service_id")}, 'technicianId', ${column("technician_id")},
    'postalCode', ${column("postal_code")}, 'appointment', ${timesSql(start, end, offsets)}, 'arrivalWindow', ${window},
    'createdAt', ${isoSql(column("created_at"))}, 'updatedAt', ${isoSql(column("updated_at"))}, 'cancelledAt', ${isoSql(column("cancelled_at"))},
    'cancelReason', ${column("cancel_reason")}, 'closedAt', ${isoSql(column("closed_at"))}, 'outcomeNote', ${column("outcome_note")},
    'planId', ${column("plan_id")})`;
}

/** The columns a change sets, as `r` names them (its n_… columns, and the request's now). */
const CHANGED: Record<string, string> = {
  status: "n_status",
  starts_at: "n_startsAt",
  ends_at: "n_endsAt",
  technician_id: "n_technicianId",
  updated_at: "p_now",
  cancelled_at: "n_cancelledAt",
  cancel_reason: "n_cancelReason",
  closed_at: "n_closedAt",
  outcome_note: "n_outcomeNote",
};

/** The incident's JSON of `r`: the row as changed. */
const viewOf = () => incidentJson((name) => r(CHANGED[name] ?? name), r("p_offsets"));

/** A move's `previous`: where it was, and its technician when another took it (as changeIncident writes it). */
function previousOf(): SQL {
  const was = sql`json_object('dateTime', ${isoSql(r("starts_at"))}, 'appointment', ${timesSql(r("starts_at"), r("ends_at"), r("p_offsets"))})`;
  return sql`CASE WHEN ${r("technician_id")} IS NULL OR ${r("n_technicianId")} IS ${r("technician_id")} THEN ${was}
    ELSE json_set(${was}, '$.technicianId', ${r("technician_id")}) END`;
}

/** The statements of a change of `kind` in `mode`, with or without a caller bound: built once each. */
function templateOf(kind: OneTripChange["kind"], mode: Mode, bound: boolean) {
  const { after, when } = changeOf(kind, mode);
  const newColumns = {
    status: after.status,
    startsAt: after.startsAt,
    endsAt: after.endsAt,
    technicianId: after.technicianId,
    cancelledAt: "cancelledAt" in after ? after.cancelledAt : m.cancelledAt,
    cancelReason: "cancelReason" in after ? after.cancelReason : m.cancelReason,
    closedAt: "closedAt" in after ? after.closedAt : m.closedAt,
    outcomeNote: "outcomeNote" in after ? after.outcomeNote : m.outcomeNote,
  };
  const selected = sql.join(
    Object.entries(newColumns).map(([name, value]) => sql`${value} AS ${sql.raw(`"n_${name}"`)}`),
    sql`, `,
  );
  const row = sql`SELECT "m".*, p.*, ${selected} FROM (SELECT ${values}) AS p
    JOIN ${incidents} AS "m" ON ${m.orgId} = ${p("org")} AND ${m.id} = ${p("id")}
    WHERE ${and(when, bound ? ofCaller(TEMPLATES_DB, p("org") as never, p("caller") as never, m as unknown as typeof incidents) : undefined)}`;
  const data = viewOf();
  const body = eventBody({
    id: r("p_event"),
    type: r("p_type"),
    timestamp: r("p_timestamp"),
    actor: r("p_actor"),
    data,
    previous: kind === "move" ? previousOf() : undefined,
  });
  // Returns the answer and the subscribers' ids: the event's, read from the row it inserts.
  const event = prepared((db) =>
    db
      .insert(events)
      .select(
        sql`SELECT NULL, ${r("p_event")}, ${r("p_org")}, ${r("p_type")}, ${r("p_now")}, ${body},
        ${enqueuedAt(r("p_org"), r("p_type"), r("p_now"))}
        FROM (${row}) AS r${mode === "technicians" && kind === "move" ? sql` WHERE ${r("n_technicianId")} IS NOT NULL` : sql``}`,
      )
      .returning({ body: INSERTED_ANSWER, endpoints: subscriberIds(param("org"), param("type")) }),
  );
  const applied = sql`EXISTS (SELECT 1 FROM ${events} WHERE ${events.id} = ${param("event")})`;
  const now = param("now");
  const set =
    kind === "move"
      ? {
          startsAt: param("start"),
          endsAt: sql`${param("start")} + (${incidents.endsAt} - ${incidents.startsAt})`,
          occupiedUntil: sql`${param("start")} + (${incidents.occupiedUntil} - ${incidents.startsAt})`,
          technicianId: sql`(SELECT json_extract(${events.body}, '$.data.technicianId') FROM ${events} WHERE ${events.id} = ${param("event")})`,
        }
      : kind === "cancel"
        ? { status: sql`'cancelled'`, cancelledAt: now, cancelReason: param("text") }
        : { status: param("status"), closedAt: now, outcomeNote: param("text") };
  const update = prepared((db) =>
    db
      .update(incidents)
      .set({ ...(set as unknown as Record<string, SQL>), updatedAt: now as unknown as SQL })
      .where(and(eq(incidents.orgId, param("org")), eq(incidents.id, param("id")), applied)),
  );
  return { event, update };
}

/** The templates, one per kind, mode and binding, each made on its first change. */
const templates = keptPer((_key: string, kind: OneTripChange["kind"], mode: Mode, bound: boolean) =>
  templateOf(kind, mode, bound),
);

/** The answer of a change in one trip: its event's data, once the change applied. */
const ANSWER = sql<string>`json_extract(${events.body}, '$.data')`;
/** ANSWER of the row an event's insert returns (RETURNING names its columns bare). */
export const INSERTED_ANSWER = sql<string>`json_extract("body", '$.data')`;
const answerRead = prepared((db) =>
  db
    .select({ body: ANSWER })
    .from(events)
    .where(eq(events.id, param("event"))),
);

/** The record of a change's answer for its Idempotency-Key, in the change's batch (only if it applied). */
export function answerRecord(
  db: Db,
  {
    idempotencyKey,
    table,
    id,
    event,
  }: { idempotencyKey: IdempotencyKey; table: typeof incidents | typeof plans; id: string; event: string },
) {
  const applied = sql`EXISTS (SELECT 1 FROM ${events} WHERE ${events.id} = ${event})`;
  const body = sql`(SELECT ${ANSWER} FROM ${events} WHERE ${events.id} = ${event})`;
  return recordWithWrite(db, { idempotencyKey, table, id, body, state: applied });
}

/** The answer as the batch gave it: else (the key's claim was an earlier batch's, and had lapsed: src/db/write.ts) read after. */
export async function answerOf(db: Db, answered: { body: string | null }[], event: string): Promise<string> {
  const body = answered[0]?.body ?? ((await db.batch([answerRead(db, { event })]))[0] as { body: string }[])[0]?.body;
  return body ?? "";
}

/**
 * Runs `change` in one batch: `written` when it applied (its event and, with
 * an Idempotency-Key, its answer recorded in the same batch); else the
 * incident as it now is, read in a second trip (undefined: none, or not the caller's).
 */
export async function changeInOneTrip(
  db: Db,
  request: OneTripRequest,
): Promise<{ written: Written } | { written?: undefined; current: IncidentRow | undefined }> {
  const { org, id, caller, now, offsets, change, idempotencyKey, actor } = request;
  const mode: Mode = change.kind === "move" && change.rules.duty !== null ? "technicians" : "crew";
  const callerBound = caller !== undefined;
  const { event, update } = templates(`${change.kind} ${mode} ${callerBound}`, change.kind, mode, callerBound);
  const type = change.kind === "close" ? CHANGE_EVENTS[change.outcome] : CHANGE_EVENTS[change.kind];
  const rules = change.kind === "move" ? change.rules : undefined;
  const bound: Record<Value, unknown> = {
    org: org.id,
    id,
    event: newId("evt", now),
    now,
    timestamp: toIso(now),
    actor: JSON.stringify(actor),
    type,
    offsets: offsets.json,
    from: offsets.from,
    until: offsets.until,
    caller: caller ?? null,
    start: rules?.start ?? null,
    durations: rules?.durations ?? null,
    slot: rules?.slotMs ?? null,
    capacity: org.schedule.capacity,
    duty: rules?.duty ?? null,
    skills: rules?.skills ?? null,
    date: rules?.date ?? null,
    dayStart: rules?.dayStart ?? null,
    dayEnd: rules?.dayEnd ?? null,
    status: change.kind === "close" ? change.outcome : null,
    text: change.kind === "cancel" ? change.reason : change.kind === "close" ? change.note : null,
  };
  // The event's insert returns the answer; with an Idempotency-Key, the batch also records it.
  const record = idempotencyKey
    ? [answerRecord(db, { idempotencyKey, table: incidents, id, event: bound.event as string })]
    : [];
  const [inserted, , answered = []] = (await writeBatch(db, idempotencyKey, [
    event(db, bound),
    update(db, bound),
    ...record,
  ])) as [{ body: string; endpoints: string }[], unknown, { body: string | null }[]?];
  const [applied] = inserted;
  // Not applied (seldom: refused, unknown, another's): the incident as it now is, in a trip of its own.
  if (!applied) return { current: await getIncident(db, org.id, id, caller) };
  return {
    written: {
      body: idempotencyKey ? await answerOf(db, answered, bound.event as string) : applied.body,
      recorded: idempotencyKey !== undefined && answered[0]?.body != null,
      event: {
        orgId: org.id,
        id: bound.event as string,
        createdAt: now,
        endpoints: JSON.parse(applied.endpoints) as string[],
      },
    },
  };
}
