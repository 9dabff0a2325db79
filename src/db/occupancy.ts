// What occupies a place (docs/api.md, "Holding a slot"): visits not
// cancelled and live holds, counted by availability, booking, holding and rescheduling
// through one overlap condition (`overlapping`), applied to each of the two
// tables. A hold is live while its expiry is after the request's now, so
// expiry is a condition here, never a job that must run.
import { type AnyColumn, and, count, eq, gt, ne, type Placeholder, type SQL, sql } from "drizzle-orm";
import { holds, incidents, OCCUPYING_STATUSES, orgs } from "../../drizzle/schema";
import { MINUTE } from "../lib/datetime";
import { overlapsSql, unionOf } from "../scheduling/overlap";
import type { Booking, SlotTimes } from "../scheduling/slots";
import { type Db, param, prepared } from "./client";
import type { Org } from "./orgs";

export type Occupant = typeof incidents | typeof holds;

/**
 * An incident that is scheduled, of a status column: incidents', an alias's
 * (another incident of the same statement), or one kept from the planner.
 * Written as a literal, not a parameter, so that the planner may use the
 * (org, status, start) index. Whether a visit takes a place is occupiesIn's.
 */
export const isScheduledIn = (status: AnyColumn | SQL): SQL => sql`${status} = 'scheduled'`;

export const isScheduled = isScheduledIn(incidents.status);

/**
 * isScheduled behind a unary + (SQLite's idiom), which keeps the term out of
 * the planner's choice of index: where the status index would read all the
 * org's scheduled incidents instead of the few rows another term names
 * (src/db/callers.ts).
 */
export const isScheduledUnindexed = isScheduledIn(sql`+${incidents.status}`);

/**
 * A visit that occupies its span: scheduled, or closed (completed, no_show),
 * which keeps the span it was booked with; only a cancelled visit frees its
 * place. Written as the literal the partial index
 * incidents_occupying_org_starts_occupied names (drizzle/schema.ts), so
 * that the planner may use it.
 */
export const occupiesIn = (status: AnyColumn | SQL): SQL =>
  sql`${status} IN (${sql.raw(OCCUPYING_STATUSES.map((s) => `'${s}'`).join(", "))})`;

export const occupies = occupiesIn(incidents.status);

/** A row of `table` that occupies a place at `now`: a visit not cancelled, or a hold not yet expired, released or used. */
const occupying = (table: Occupant, now: number): SQL => (table === incidents ? occupies : gt(holds.expiresAt, now));

/** What is counted: the org's places at `now`, its longest span cached (reads) or read in the statement (writes). */
export interface Census {
  org: Org;
  now: number;
  /**
   * Read the org's longest span in the statement itself, as a conditional
   * write must, so that a service lengthened a moment ago is never missed.
   */
  fresh?: boolean;
  /** An incident not counted: the one being moved. */
  except?: string;
}

/** What overlapping reads of a census: of the org, only its id and longest span. */
export type OccupancyCensus = Omit<Census, "org"> & { org: Pick<Org, "id" | "maxBookingMs"> };

/** The longest span a visit of the org occupies, in ms. */
const longestSpan = ({ org, fresh }: OccupancyCensus): SQL | number =>
  fresh
    ? sql`((SELECT ${orgs.maxSlotMinutes} FROM ${orgs} WHERE ${eq(orgs.id, org.id)}) * ${sql.raw(String(MINUTE))})`
    : org.maxBookingMs;

export type Bound = number | SQL | Placeholder;

/**
 * The rows of `table` occupying some instant of [start, end): those whose
 * occupied span (start to end plus buffer) overlaps it (overlapsSql). Such a
 * row starts in (start - longest span, end), so the condition reads one
 * range of the (org_id, starts_at, occupied_until, …) index of either table.
 * Every count of places uses this one condition, and so does the
 * reassignment's read (src/db/reassignment.ts).
 */
export function overlapping(table: Occupant, census: OccupancyCensus, range: { start: Bound; end: Bound }): SQL {
  const { org, except } = census;
  return and(
    eq(table.orgId, org.id),
    occupying(table, census.now),
    sql`${table.startsAt} > ${range.start} - ${longestSpan(census)}`,
    ...overlapsSql(table, range),
    table === incidents && except !== undefined ? ne(incidents.id, except) : undefined,
  )!;
}

/**
 * Visits and holds occupying any of `ranges` (as their union), sorted by
 * start, in one round trip, as one entry per distinct (start, occupied end,
 * technician) of each table with its count: a full crew slot comes back as
 * one row, read from the covering indexes alone.
 */
export async function bookingsOverlapping(db: Db, census: Census, ranges: SlotTimes[]): Promise<Booking[]> {
  const reads = unionOf(ranges).map((range) =>
    census.fresh || census.except !== undefined
      ? occupancyOf(db, census, range)
      : occupancyRead(db, {
          orgId: census.org.id,
          longest: census.org.maxBookingMs,
          now: census.now,
          start: range.start,
          end: range.end,
        }),
  );
  const [first, ...rest] = reads;
  if (!first) return [];
  if (rest.length === 0) {
    // One range (a scan's window): its groups are distinct, so they are read
    // as D1's rows of values, which no layer turns into objects to be mapped
    // back, and only merged by start (visits then holds, each in start order).
    const rows = (await first.values()) as [number, number, number, string | null, number][];
    const bookings: Booking[] = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const [, startsAt, endsAt, technicianId, count] = rows[i]!;
      bookings[i] = { startsAt, endsAt, technicianId, count };
    }
    return bookings.sort((a, b) => a.startsAt - b.startsAt);
  }
  const results = (await db.batch([first, ...rest])) as {
    held: number;
    startsAt: number;
    endsAt: number;
    technicianId: string | null;
    count: number;
  }[][];
  // A group matches a range whole or not at all (the condition is on its own
  // columns only), so the ranges' groups are merged by key.
  const byKey = new Map(
    results
      .flat()
      .map(({ held, ...group }) => [`${held}/${group.startsAt}/${group.endsAt}/${group.technicianId}`, group]),
  );
  return [...byKey.values()].sort((a, b) => a.startsAt - b.startsAt);
}

/**
 * The visits and the live holds occupying `range`, apart, in one round trip:
 * a plan's due visit counts only visits toward a technician's day
 * (src/scheduling/plans.ts).
 */
export async function occupantsOf(db: Db, census: Census, range: SlotTimes) {
  const { org, now } = census;
  const values = { orgId: org.id, longest: org.maxBookingMs, now, start: range.start, end: range.end };
  const rows = (await occupancyRead(db, values).all()) as (Booking & { held: number })[];
  const of = (held: number) => rows.filter((row) => row.held === held).map(({ held: _, ...booking }) => booking);
  return { visits: of(0), held: of(1) };
}

/** The groups of one range: visits, then holds. */
function occupancyOf(db: Db, census: Census, range: { start: Bound; end: Bound }) {
  const groups = (table: Occupant) =>
    db
      .select({
        held: sql<number>`${sql.raw(table === holds ? "1" : "0")}`,
        startsAt: table.startsAt,
        endsAt: table.occupiedUntil,
        technicianId: table.technicianId,
        count: count(),
      })
      .from(table)
      .where(overlapping(table, census, range))
      // In the index's order already; sorted below after merging the ranges.
      .groupBy(table.startsAt, table.occupiedUntil, table.technicianId);
  return groups(incidents).unionAll(groups(holds));
}

/** A census over placeholders, for prepared statements: `orgId`, `longest` (the cached longest span), `capacity`, `now`. */
export const CENSUS_TEMPLATE = {
  org: { id: param("orgId"), maxBookingMs: param("longest"), schedule: { capacity: param("capacity") } },
  now: param("now"),
} as unknown as Census;

/** occupancyOf on the org's cached longest span (every read), prepared: its values bound by name. */
const occupancyRead = prepared((db) => occupancyOf(db, CENSUS_TEMPLATE, { start: param("start"), end: param("end") }));

/** Crew mode: the visits and holds occupying some instant of `range`, in SQL. */
const occupyingCount = (census: Census, range: Span): SQL => {
  const of = (table: Occupant) => sql`(SELECT count(*) FROM ${table} WHERE ${overlapping(table, census, range)})`;
  return sql`(${of(incidents)} + ${of(holds)})`;
};

/**
 * Crew mode: the most visits and holds occupying one instant of `span`, in
 * SQL. The count rises only where one starts, so it is counted at the span's
 * start and at each start inside it.
 */
function peakIn(census: Census, span: Span): SQL {
  const inside = (table: Occupant) =>
    sql`SELECT ${table.startsAt} FROM ${table} WHERE ${overlapping(table, census, span)} AND ${table.startsAt} > ${span.start}`;
  const starts = sql`SELECT ${span.start} AS at UNION ${inside(incidents)} UNION ${inside(holds)}`;
  const at = sql.raw("p.at");
  return sql`(SELECT coalesce(max(${occupyingCount(census, { start: at, end: sql`${at} + 1` })}), 0) FROM (${starts}) AS p)`;
}

/** A span a visit occupies, in ms: times, or SQL placeholders (a prepared statement's). */
export interface Span {
  start: Bound;
  end: Bound;
}

/**
 * Crew mode: whether a visit occupying `span` still fits, in SQL (the org's
 * longest span read in the statement). No instant holds more than all that
 * occupy the span, so fewer of those than crews is room; only as many need
 * the peak (CASE evaluates only the branch it takes).
 */
export function crewFits(census: Census, span: Span): SQL {
  const fresh = { ...census, fresh: true };
  const { capacity } = census.org.schedule;
  return sql`(CASE WHEN ${occupyingCount(fresh, span)} < ${capacity} THEN 1 ELSE ${peakIn(fresh, span)} < ${capacity} END)`;
}

/** Crew mode: the crews left free for the whole of `span` once a visit occupying it is written, in SQL. */
export const crewsLeft = (census: Census, span: Span): SQL =>
  sql`max(0, ${census.org.schedule.capacity} - ${peakIn({ ...census, fresh: true, except: undefined }, span)})`;
