import { and, count, eq, gt, gte, lt, ne, type SQL, sql } from "drizzle-orm";
import { accounts, type IncidentStatus, incidents, orgs, technicians } from "../../drizzle/schema";
import { toIso, toIsoOrNull } from "../lib/datetime";
import { newId } from "../lib/ids";
import { arrivalWindowView, type Booking, type SlotTimes, timesView } from "../scheduling/slots";
import type { Plan, Technician } from "../scheduling/visits";
import { dateString, localDateOf, localToInstant } from "../scheduling/zone";
import type { Incident } from "../schemas/incidents";
import { type CursorPosition, type Db, inColumnOrder, insertWhere } from "./client";
import type { HeldKey, Written } from "./idempotency";
import type { Org } from "./orgs";
import { commitWrite } from "./write";

export type IncidentRow = typeof incidents.$inferSelect;

/** Written as a literal, not a parameter, so that the planner may use the partial index of scheduled incidents. */
const isScheduled = sql`${incidents.status} = 'scheduled'`;

/**
 * The longest span a visit of the org occupies, in ms: the cached value for
 * reads; read in the statement itself for a conditional write, so that a
 * service lengthened a moment ago is never missed.
 */
const longestSpan = (org: Org, fresh: boolean): SQL | number =>
  fresh ? sql`((SELECT ${orgs.maxSlotMinutes} FROM ${orgs} WHERE ${eq(orgs.id, org.id)}) * 60000)` : org.maxBookingMs;

/**
 * The visits of `org` occupying some instant of [start, end): scheduled
 * incidents whose occupied span (start to end plus buffer) overlaps it. Such a
 * visit starts in (start - longest span, end), so the condition reads one
 * range of the partial (org_id, starts_at, occupied_until, technician_id)
 * index of scheduled incidents. Availability, booking, rescheduling and the
 * places left all count with this one condition.
 */
export function holding(org: Org, range: SlotTimes, fresh = false): SQL {
  return and(
    eq(incidents.orgId, org.id),
    isScheduled,
    fresh
      ? sql`${incidents.startsAt} > ${range.start} - ${longestSpan(org, true)}`
      : gt(incidents.startsAt, range.start - org.maxBookingMs),
    lt(incidents.startsAt, range.end),
    gt(incidents.occupiedUntil, range.start),
  )!;
}

/**
 * Visits occupying any of `ranges`, sorted by start, in one round trip, as
 * one entry per distinct (start, occupied end, technician) with its count: a
 * full crew slot comes back as one row, not one per visit, read from the
 * covering index alone.
 */
export async function bookingsOverlapping(db: Db, org: Org, ranges: SlotTimes[]): Promise<Booking[]> {
  const [first, ...rest] = ranges.map((range) =>
    db
      .select({
        startsAt: incidents.startsAt,
        endsAt: incidents.occupiedUntil,
        technicianId: incidents.technicianId,
        count: count(),
      })
      .from(incidents)
      .where(holding(org, range))
      // In the index's order already; sorted below after merging the ranges.
      .groupBy(incidents.startsAt, incidents.occupiedUntil, incidents.technicianId),
  );
  if (!first) return [];
  const results = rest.length === 0 ? [await first] : await db.batch([first, ...rest]);
  // A group matches a range whole or not at all (the condition is on its own
  // columns only), so ranges that overlap return identical groups.
  const byKey = new Map(results.flat().map((g) => [`${g.startsAt}/${g.endsAt}/${g.technicianId}`, g]));
  return [...byKey.values()].sort((a, b) => a.startsAt - b.startsAt);
}

/** The incident as the API shows it (docs/api.md, "Incidents"): its appointment in the org's zone. */
export function incidentView(row: IncidentRow, timeZone: string): Incident {
  const appointment = timesView(row.startsAt, row.endsAt, timeZone);
  return {
    id: row.id,
    status: row.status,
    dateTime: appointment.start,
    clientName: row.clientName,
    insectName: row.insectName,
    accountId: row.accountId,
    phone: row.phone,
    notes: row.notes,
    serviceId: row.serviceId,
    technicianId: row.technicianId,
    postalCode: row.postalCode,
    appointment,
    arrivalWindow: arrivalWindowView(row.startsAt, row.arrivalWindowMinutes * MINUTE, timeZone),
    createdAt: toIso(row.createdAt),
    updatedAt: toIso(row.updatedAt),
    cancelledAt: toIsoOrNull(row.cancelledAt),
    cancelReason: row.cancelReason,
  };
}

const MINUTE = 60_000;

/** Where a visit goes: its times, and who may take it (null in crew mode). */
export interface Placement {
  plan: Plan;
  /** [start, end) of the visit, a start the caller has assessed bookable. */
  slot: SlotTimes;
  /** The eligible technicians on duty for it (onDutyFor), by id; null in crew mode. */
  candidates: Technician[] | null;
}

const spanOf = ({ plan, slot }: Placement): SlotTimes => ({ start: slot.start, end: slot.end + plan.visit.bufferMs });

/** Only other incidents than `except` (the one being moved). */
const other = (except: string | undefined) => (except === undefined ? undefined : ne(incidents.id, except));

/**
 * Crew mode: the most visits occupying one instant of `span`, in SQL. The
 * count rises only where a visit starts, so it is counted at the span's start
 * and at each start inside it.
 */
function peakIn(org: Org, span: SlotTimes, except?: string): SQL {
  const starts = sql`SELECT ${span.start} AS at UNION SELECT ${incidents.startsAt} FROM ${incidents} WHERE ${and(
    eq(incidents.orgId, org.id),
    isScheduled,
    gt(incidents.startsAt, span.start),
    lt(incidents.startsAt, span.end),
    other(except),
  )}`;
  const at = sql.raw("p.at");
  const occupyingAt = sql`(SELECT count(*) FROM ${incidents} WHERE ${and(
    eq(incidents.orgId, org.id),
    isScheduled,
    sql`${incidents.startsAt} > ${at} - ${longestSpan(org, true)}`,
    sql`${incidents.startsAt} <= ${at}`,
    sql`${incidents.occupiedUntil} > ${at}`,
    other(except),
  )})`;
  return sql`(SELECT coalesce(max(${occupyingAt}), 0) FROM (${starts}) AS p)`;
}

/**
 * One technician's visits, by the (org, technician, start) index: a few rows
 * each, where the window's index would read every technician's visits.
 */
const ofTechnician = sql`${incidents} INDEXED BY incidents_org_technician_starts`;

/**
 * Technician mode: the technician a visit is assigned, in SQL (NULL when
 * none): of the candidates, one still active, qualified, covering the place
 * and not off that day (the catalogue read may be seconds old), with no visit
 * occupying the span; `keep` first, then the fewest visits starting that
 * local day, then by id.
 */
function assignee(org: Org, placement: Placement, { keep, except }: { keep?: string | null; except?: string }): SQL {
  const { plan, slot, candidates } = placement;
  const span = spanOf(placement);
  const ids = (candidates ?? []).map((t) => t.id);
  const date = localDateOf(slot.start, plan.schedule.timeZone);
  const day = {
    start: localToInstant(date, 0, plan.schedule.timeZone),
    end: localToInstant(date + 1, 0, plan.schedule.timeZone),
  };
  const own = and(eq(incidents.orgId, org.id), isScheduled, eq(incidents.technicianId, technicians.id), other(except));
  const busy = sql`EXISTS (SELECT 1 FROM ${ofTechnician} WHERE ${and(own, holding(org, span, true))})`;
  const load = sql`(SELECT count(*) FROM ${ofTechnician} WHERE ${and(own, gte(incidents.startsAt, day.start), lt(incidents.startsAt, day.end))})`;
  const skills = sql`NOT EXISTS (SELECT 1 FROM json_each(${JSON.stringify(plan.visit.skills)}) AS k WHERE k.value NOT IN (SELECT value FROM json_each(${technicians.skills})))`;
  const place =
    plan.postalCode === null
      ? undefined
      : sql`(json_array_length(${technicians.postalCodes}) = 0 OR EXISTS (SELECT 1 FROM json_each(${technicians.postalCodes}) AS z WHERE substr(${plan.postalCode}, 1, length(z.value)) = z.value))`;
  const dayOff = sql`EXISTS (SELECT 1 FROM json_each(${technicians.daysOff}) AS d WHERE d.value = ${dateString(date)})`;
  const chosen = techniciansWhere(org, ids, [sql`NOT ${busy}`, skills, place, sql`NOT ${dayOff}`]);
  const first = keep ? sql`${technicians.id} = ${keep} DESC, ` : sql``;
  return sql`(${chosen} ORDER BY ${first}${load}, ${technicians.id} LIMIT 1)`;
}

/**
 * The org's active technicians among `ids` meeting `conditions`. The ids go
 * as one JSON parameter: D1 binds at most 100 to a statement, and an org may
 * have more technicians than that.
 */
function techniciansWhere(org: Org, ids: string[], conditions: (SQL | undefined)[]): SQL {
  const listed = sql`${technicians.id} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`;
  return sql`SELECT ${technicians.id} FROM ${technicians} WHERE ${and(
    eq(technicians.orgId, org.id),
    eq(technicians.active, true),
    listed,
    ...conditions,
  )}`;
}

/**
 * The places left for the visit once written, in SQL: crews free for its
 * whole span, or candidates still free (for create-incident's `remaining`).
 */
function placesLeft(org: Org, placement: Placement): SQL {
  const span = spanOf(placement);
  if (placement.candidates === null) return sql`max(0, ${org.schedule.capacity} - ${peakIn(org, span)})`;
  const ids = placement.candidates.map((t) => t.id);
  const own = and(eq(incidents.orgId, org.id), isScheduled, eq(incidents.technicianId, technicians.id));
  const busy = sql`EXISTS (SELECT 1 FROM ${ofTechnician} WHERE ${and(own, holding(org, span, true))})`;
  return sql`(SELECT count(*) FROM (${techniciansWhere(org, ids, [sql`NOT ${busy}`])}))`;
}

export interface NewIncident {
  clientName: string;
  insectName: string;
  /** The caller's number, already E.164. */
  phone: string | null;
  notes: string | null;
  /** As given, trimmed. */
  postalCode: string | null;
}

export interface BookingRequest {
  org: Org;
  placement: Placement;
  incident: NewIncident;
  now: number;
  /** The request's Idempotency-Key, if it holds one: the answer is recorded in the same batch. */
  held?: HeldKey;
}

/**
 * Books a new incident's visit in one round trip; its JSON, or null when there
 * was no place. One statement decides and writes: in crew mode the row is
 * inserted only while fewer than `capacity` visits occupy each instant of its
 * span; in technician mode it is inserted with the technician assignee()
 * picks, and only if there is one. D1 runs statements one at a time, so N
 * racing requests for r places yield exactly min(N, r) bookings, never two
 * overlapping visits of one technician. The account is linked in the same
 * statement when exactly one account has the name. What only the batch knows
 * (account, technician, places left) SQL sets into the JSON (json_set); with
 * a held Idempotency-Key that same text is what the batch records.
 */
export async function bookSlot(db: Db, request: BookingRequest): Promise<Written | null> {
  const { org, placement, incident, now, held } = request;
  const { plan, slot } = placement;
  const id = newId("inc", now);
  const accountOf = sql`(SELECT CASE WHEN count(*) = 1 THEN min(${accounts.id}) END FROM ${accounts}
    WHERE ${and(eq(accounts.orgId, org.id), eq(accounts.nameLower, incident.clientName.toLowerCase()))})`;
  const row = inColumnOrder(incidents, {
    ...incident,
    id,
    orgId: org.id,
    status: "scheduled",
    startsAt: slot.start,
    endsAt: slot.end,
    occupiedUntil: slot.end + plan.visit.bufferMs,
    serviceId: plan.visit.serviceId,
    arrivalWindowMinutes: plan.visit.windowMs / MINUTE,
    createdAt: now,
    updatedAt: now,
  });
  const crew = placement.candidates === null;
  const technician = crew ? null : assignee(org, placement, {});
  const condition = technician
    ? sql`${technician} IS NOT NULL`
    : sql`${peakIn(org, spanOf(placement))} < ${org.schedule.capacity}`;
  const insert = insertWhere(db, incidents, { ...row, accountId: accountOf, technicianId: technician }, condition);

  const stored = (column: typeof incidents.accountId | typeof incidents.technicianId) =>
    sql`(SELECT ${column} FROM ${incidents} WHERE ${eq(incidents.id, id)})`;
  const view = sql`json_set(${JSON.stringify(incidentView(row, org.schedule.timeZone))},
    '$.accountId', ${stored(incidents.accountId)}, '$.technicianId', ${stored(incidents.technicianId)})`;
  const body = sql`json_set(${view}, '$.appointment.remaining', ${placesLeft(org, placement)})`;
  // The event's data is the incident resource, which has no `remaining`.
  const { applied, written } = await commitWrite(db, {
    orgId: org.id,
    now,
    held,
    row: { table: incidents, id },
    statements: { inserted: insert },
    event: { type: "incident.created", data: view },
    body,
  });
  return applied ? written : null;
}

export async function getIncident(db: Db, orgId: string, id: string): Promise<IncidentRow | undefined> {
  const [row] = await db
    .select()
    .from(incidents)
    .where(and(eq(incidents.orgId, orgId), eq(incidents.id, id)))
    .limit(1);
  return row;
}

export interface IncidentChange {
  org: Org;
  /** The incident as read: the change applies only if it is still exactly so. */
  seen: IncidentRow;
  /** The incident as it is to be (a move's technician is chosen by the statement). */
  changed: IncidentRow;
  /** A move: where the visit goes, which must have room for it (the incident itself not counted). */
  move?: Placement;
  held?: HeldKey;
}

/**
 * Applies a change to one incident in one conditional statement (compare and
 * set): it writes only while the incident's status, times and updatedAt are
 * still those that were read and, for a move, the new place has room (in
 * technician mode: the same technician if free, else another by the
 * booking's rule), so the decision taken on that reading and the write happen
 * at once, and two changes to one incident are serialised. With a held
 * Idempotency-Key the answer is recorded in the same batch. When it did not
 * apply, the incident as it now is comes back (undefined if it is gone) for
 * the caller to decide again.
 */
export async function changeIncident(
  db: Db,
  { org, seen, changed, move, held }: IncidentChange,
): Promise<{ written: Written } | { written?: undefined; current: IncidentRow | undefined }> {
  const { status, startsAt, endsAt, occupiedUntil, updatedAt, cancelledAt, cancelReason } = changed;
  const technician =
    move && move.candidates !== null ? assignee(org, move, { keep: seen.technicianId, except: seen.id }) : undefined;
  const room = !move
    ? undefined
    : technician
      ? sql`${technician} IS NOT NULL`
      : sql`${peakIn(org, spanOf(move), seen.id)} < ${org.schedule.capacity}`;
  const update = db
    .update(incidents)
    .set({
      status,
      startsAt,
      endsAt,
      occupiedUntil,
      updatedAt,
      cancelledAt,
      cancelReason,
      ...(move && { technicianId: technician ?? null }),
    })
    .where(
      and(
        eq(incidents.orgId, org.id),
        eq(incidents.id, seen.id),
        eq(incidents.status, seen.status),
        eq(incidents.startsAt, seen.startsAt),
        eq(incidents.endsAt, seen.endsAt),
        eq(incidents.updatedAt, seen.updatedAt),
        room,
      ),
    );
  const current = db
    .select()
    .from(incidents)
    .where(and(eq(incidents.orgId, org.id), eq(incidents.id, seen.id)));
  // The record's own check that the change is in place: the row as changed.
  const state = and(eq(incidents.status, status), eq(incidents.startsAt, startsAt), eq(incidents.updatedAt, updatedAt));
  const technicianNow = sql`(SELECT ${incidents.technicianId} FROM ${incidents} WHERE ${eq(incidents.id, seen.id)})`;
  const text = JSON.stringify(incidentView(changed, org.schedule.timeZone));
  const body = move ? sql`json_set(${text}, '$.technicianId', ${technicianNow})` : text;
  const was = incidentView(seen, org.schedule.timeZone);
  // A move that changed the technician lists the old one too.
  const moved = { dateTime: was.dateTime, appointment: was.appointment };
  const previous = !move
    ? undefined
    : seen.technicianId === null
      ? moved
      : sql`CASE WHEN ${technicianNow} IS ${seen.technicianId} THEN json(${JSON.stringify(moved)})
          ELSE json_set(${JSON.stringify(moved)}, '$.technicianId', ${seen.technicianId}) END`;
  const { applied, results, written } = await commitWrite(db, {
    orgId: org.id,
    now: updatedAt,
    held,
    row: { table: incidents, id: seen.id, state },
    statements: { updated: update, current },
    event: { type: move ? "incident.rescheduled" : "incident.cancelled", data: body, previous },
    body,
  });
  return applied ? { written } : { current: results.current[0] };
}

export interface IncidentFilters {
  from?: number;
  to?: number;
  status?: IncidentStatus;
  accountId?: string;
  /** E.164. */
  phone?: string;
  updatedSince?: number;
  technicianId?: string;
  serviceId?: string;
}

export interface IncidentPageQuery {
  orgId: string;
  filters: IncidentFilters;
  after?: CursorPosition;
  limit: number;
}

/**
 * One page in (startsAt, id) order, read by keyset. Each filter but
 * updatedSince has an index ending in that order (org, then the filter, then
 * start and id), so a page reads its rows and one more, at any depth.
 */
export async function listIncidents(db: Db, { orgId, filters, after, limit }: IncidentPageQuery) {
  const { from, to, status, accountId, phone, updatedSince, technicianId, serviceId } = filters;
  const conditions: (SQL | undefined)[] = [
    eq(incidents.orgId, orgId),
    // A cursor's row is at or after `from` already (cursors are bound to the
    // filters), and SQLite seeks by one lower bound only: the keyset's.
    from === undefined || after ? undefined : gte(incidents.startsAt, from),
    to === undefined ? undefined : lt(incidents.startsAt, to),
    status === undefined ? undefined : eq(incidents.status, status),
    accountId === undefined ? undefined : eq(incidents.accountId, accountId),
    phone === undefined ? undefined : eq(incidents.phone, phone),
    updatedSince === undefined ? undefined : gte(incidents.updatedAt, updatedSince),
    technicianId === undefined ? undefined : eq(incidents.technicianId, technicianId),
    serviceId === undefined ? undefined : eq(incidents.serviceId, serviceId),
    after && sql`(${incidents.startsAt}, ${incidents.id}) > (${after.at}, ${after.id})`,
  ];
  const rows = await db
    .select()
    .from(incidents)
    .where(and(...conditions))
    .orderBy(incidents.startsAt, incidents.id)
    .limit(limit + 1);
  return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
}
