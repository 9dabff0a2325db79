import { and, count, eq, gt, gte, lt, ne, type SQL, sql } from "drizzle-orm";
import { accounts, type IncidentStatus, incidents } from "../../drizzle/schema";
import { toIso, toIsoOrNull } from "../lib/datetime";
import { newId } from "../lib/ids";
import { type Booking, type SlotTimes, slotView } from "../scheduling/slots";
import type { Incident } from "../schemas/incidents";
import { type CursorPosition, type Db, inColumnOrder, insertWhere } from "./client";
import type { HeldKey, Written } from "./idempotency";
import type { Org } from "./orgs";
import { commitWrite } from "./write";

export type IncidentRow = typeof incidents.$inferSelect;

/** Written as a literal, not a parameter, so that the planner may use the partial index of scheduled incidents. */
const isScheduled = sql`${incidents.status} = 'scheduled'`;

/**
 * The bookings of `org` that hold [start, end): scheduled incidents
 * overlapping it. Such a booking starts in (start - maxBookingMs, end), so the
 * condition reads one range of the partial (org_id, starts_at, ends_at) index
 * of scheduled incidents. Availability, booking, rescheduling and the places
 * left all count with this one condition.
 */
export function holding(org: Org, range: SlotTimes): SQL {
  return and(
    eq(incidents.orgId, org.id),
    isScheduled,
    gt(incidents.startsAt, range.start - org.maxBookingMs),
    lt(incidents.startsAt, range.end),
    gt(incidents.endsAt, range.start),
  )!;
}

/**
 * Bookings overlapping any of `ranges`, sorted by start, in one round trip,
 * as one entry per distinct (start, end) with its count: a full slot comes
 * back as one row, not one per booking, read from the covering index alone.
 */
export async function bookingsOverlapping(db: Db, org: Org, ranges: SlotTimes[]): Promise<Booking[]> {
  const [first, ...rest] = ranges.map((range) =>
    db
      .select({ startsAt: incidents.startsAt, endsAt: incidents.endsAt, count: count() })
      .from(incidents)
      .where(holding(org, range))
      // In the index's order already; sorted below after merging the ranges.
      .groupBy(incidents.startsAt, incidents.endsAt),
  );
  if (!first) return [];
  const results = rest.length === 0 ? [await first] : await db.batch([first, ...rest]);
  // A group matches a range whole or not at all (the condition is on its two
  // times only), so ranges that overlap return identical groups.
  const byTimes = new Map(results.flat().map((group) => [`${group.startsAt}/${group.endsAt}`, group]));
  return [...byTimes.values()].sort((a, b) => a.startsAt - b.startsAt);
}

/** The incident as the API shows it (docs/api.md, "Incidents"): its appointment in the org's zone. */
export function incidentView(row: IncidentRow, timeZone: string): Incident {
  const { remaining: _, ...appointment } = slotView({ start: row.startsAt, end: row.endsAt, remaining: 0 }, timeZone);
  return {
    id: row.id,
    status: row.status,
    dateTime: appointment.start,
    clientName: row.clientName,
    insectName: row.insectName,
    accountId: row.accountId,
    phone: row.phone,
    notes: row.notes,
    appointment,
    createdAt: toIso(row.createdAt),
    updatedAt: toIso(row.updatedAt),
    cancelledAt: toIsoOrNull(row.cancelledAt),
    cancelReason: row.cancelReason,
  };
}

export interface NewIncident {
  clientName: string;
  insectName: string;
  /** The caller's number, already E.164. */
  phone: string | null;
  notes: string | null;
}

export interface BookingRequest {
  org: Org;
  /** A bookable slot of the org's schedule (the caller has assessed it). */
  slot: SlotTimes;
  incident: NewIncident;
  now: number;
  /** The request's Idempotency-Key, if it holds one: the answer is recorded in the same batch. */
  held?: HeldKey;
}

/**
 * Books the slot for a new incident in one round trip; its JSON, or null when
 * the slot was full. One statement decides and writes: the row is inserted
 * only while fewer than `capacity` bookings hold the slot, and D1 runs
 * statements one at a time, so N racing requests for r places yield exactly
 * min(N, r) bookings. The account is linked in the same statement when
 * exactly one account has the name. The answer's account and places left are
 * known only to the batch: SQL sets them into the JSON (json_set), and with a
 * held Idempotency-Key that same text is what the batch records.
 */
export async function bookSlot(db: Db, request: BookingRequest): Promise<Written | null> {
  const { org, slot, incident, now, held } = request;
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
    createdAt: now,
    updatedAt: now,
  });
  const hasRoom = sql`(SELECT count(*) FROM ${incidents} WHERE ${holding(org, slot)}) < ${org.schedule.capacity}`;
  const insert = insertWhere(db, incidents, { ...row, accountId: accountOf }, hasRoom);

  const view = sql`json_set(${JSON.stringify(incidentView(row, org.schedule.timeZone))},
    '$.accountId', (SELECT ${incidents.accountId} FROM ${incidents} WHERE ${eq(incidents.id, id)}))`;
  const body = sql`json_set(${view},
    '$.appointment.remaining', (SELECT CAST(max(0, ${org.schedule.capacity} - count(*)) AS INTEGER) FROM ${incidents} WHERE ${holding(org, slot)}))`;
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
  /** The incident as it is to be. */
  changed: IncidentRow;
  /** A further condition of the change (a reschedule's room in its new slot). */
  condition?: SQL;
  held?: HeldKey;
}

/**
 * Applies a change to one incident in one conditional statement (compare and
 * set): it writes only while the incident's status, times and updatedAt are
 * still those that were read and `condition` holds, so the decision taken on
 * that reading and the write happen at once, and two changes to one incident
 * are serialised. With a held Idempotency-Key the answer is recorded in the
 * same batch. When it did not apply, the incident as it now is comes back
 * (undefined if it is gone) for the caller to decide again.
 */
export async function changeIncident(
  db: Db,
  { org, seen, changed, condition, held }: IncidentChange,
): Promise<{ written: Written } | { written?: undefined; current: IncidentRow | undefined }> {
  const body = JSON.stringify(incidentView(changed, org.schedule.timeZone));
  const { status, startsAt, endsAt, updatedAt, cancelledAt, cancelReason } = changed;
  const update = db
    .update(incidents)
    .set({ status, startsAt, endsAt, updatedAt, cancelledAt, cancelReason })
    .where(
      and(
        eq(incidents.orgId, org.id),
        eq(incidents.id, seen.id),
        eq(incidents.status, seen.status),
        eq(incidents.startsAt, seen.startsAt),
        eq(incidents.endsAt, seen.endsAt),
        eq(incidents.updatedAt, seen.updatedAt),
        condition,
      ),
    );
  const current = db
    .select()
    .from(incidents)
    .where(and(eq(incidents.orgId, org.id), eq(incidents.id, seen.id)));
  // The record's own check that the change is in place: the row as changed.
  const state = and(eq(incidents.status, status), eq(incidents.startsAt, startsAt), eq(incidents.updatedAt, updatedAt));
  const rescheduled = status === "scheduled";
  const previous = rescheduled ? incidentView(seen, org.schedule.timeZone) : undefined;
  const { applied, results, written } = await commitWrite(db, {
    orgId: org.id,
    now: updatedAt,
    held,
    row: { table: incidents, id: seen.id, state },
    statements: { updated: update, current },
    event: {
      type: rescheduled ? "incident.rescheduled" : "incident.cancelled",
      data: body,
      ...(previous && { previous: { dateTime: previous.dateTime, appointment: previous.appointment } }),
    },
    body,
  });
  return applied ? { written } : { current: results.current[0] };
}

/** Another incident's booking of `slot` leaves room for this one: the room a reschedule needs. */
export const roomFor = (org: Org, slot: SlotTimes, id: string): SQL =>
  sql`(SELECT count(*) FROM ${incidents} WHERE ${and(holding(org, slot), ne(incidents.id, id))}) < ${org.schedule.capacity}`;

export interface IncidentFilters {
  from?: number;
  to?: number;
  status?: IncidentStatus;
  accountId?: string;
  /** E.164. */
  phone?: string;
  updatedSince?: number;
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
  const { from, to, status, accountId, phone, updatedSince } = filters;
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
