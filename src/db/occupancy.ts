// What occupies a place (docs/api.md, "Holding a slot"): visits not
// cancelled and live holds, counted by availability, booking, holding and rescheduling
// through one overlap condition (`overlapping`), applied to each of the two
// tables. A hold is live while its expiry is after the request's now, so
// expiry is a condition here, never a job that must run.
import { type AnyColumn, and, count, eq, gt, gte, lt, ne, type Placeholder, type SQL, sql } from "drizzle-orm";
import { holds, incidents, OCCUPYING_STATUSES, orgs, technicians } from "../../drizzle/schema";
import { MINUTE } from "../lib/datetime";
import { coversSql, offOnSql, qualifiedSql } from "../scheduling/eligibility";
import { overlapsSql, unionOf } from "../scheduling/overlap";
import type { Booking, SlotTimes } from "../scheduling/slots";
import type { Technician, VisitRequest } from "../scheduling/visits";
import { dateString, localDateOf, localToInstant } from "../scheduling/zone";
import { type Db, param, prepared } from "./client";
import type { Org } from "./orgs";

type Occupant = typeof incidents | typeof holds;

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

type Bound = number | SQL | Placeholder;
type Text = string | Placeholder | SQL;

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
const CENSUS_TEMPLATE = {
  org: { id: param("orgId"), maxBookingMs: param("longest"), schedule: { capacity: param("capacity") } },
  now: param("now"),
} as unknown as Census;

/** occupancyOf on the org's cached longest span (every read), prepared: its values bound by name. */
const occupancyRead = prepared((db) => occupancyOf(db, CENSUS_TEMPLATE, { start: param("start"), end: param("end") }));

/** Where a visit goes: its times, and who may take it (null in crew mode). */
export interface Placement {
  request: VisitRequest;
  /** [start, end) of the visit, a start the caller has assessed bookable. */
  slot: SlotTimes;
  /** The eligible technicians on duty for it (onDutyFor), by id; null in crew mode. */
  candidates: Technician[] | null;
}

export const spanOf = ({ request, slot }: Placement): SlotTimes => ({
  start: slot.start,
  end: slot.end + request.visit.bufferMs,
});

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
 * Crew mode: whether a visit occupying `span` still fits, in SQL (the org's longest span read in the
 * statement). No instant holds more than all that occupy the span, so fewer of those than crews is
 * room; only as many need the peak (CASE evaluates only the branch it takes).
 */
export function crewFits(census: Census, span: Span): SQL {
  const fresh = { ...census, fresh: true };
  const { capacity } = census.org.schedule;
  return sql`(CASE WHEN ${occupyingCount(fresh, span)} < ${capacity} THEN 1 ELSE ${peakIn(fresh, span)} < ${capacity} END)`;
}

/** Crew mode: the crews left free for the whole of `span` once a visit occupying it is written, in SQL. */
const crewsLeft = (census: Census, span: Span): SQL =>
  sql`max(0, ${census.org.schedule.capacity} - ${peakIn({ ...census, fresh: true, except: undefined }, span)})`;

/**
 * One technician's visits and holds, by the (org, technician, start) indexes:
 * a few rows each, where the window's index would read every technician's.
 */
const ofTechnician = (table: Occupant) =>
  table === incidents
    ? sql`${incidents} INDEXED BY incidents_org_technician_starts`
    : sql`${holds} INDEXED BY holds_org_technician_starts`;

/** Whether the technician of the outer row (technicians.id) has a visit or a hold occupying some instant of `span`. */
function busy(census: Census, span: Span): SQL {
  const of = (table: Occupant) =>
    sql`EXISTS (SELECT 1 FROM ${ofTechnician(table)} WHERE ${and(
      eq(table.technicianId, technicians.id),
      overlapping(table, census, span),
    )})`;
  return sql`(${of(incidents)} OR ${of(holds)})`;
}

/**
 * What a technician's assignment reads, computed per request from the
 * placement (assignmentOf): times and JSON text, or SQL placeholders (a
 * prepared statement's).
 */
export interface Assignment {
  /** The candidates' ids, a JSON array. */
  candidates: Text;
  /** The skills the visit needs, a JSON array. */
  skills: Text;
  /** The place's postal code (normalised), or null when none was given. */
  postalCode: Text | null;
  /** The visit's local date (YYYY-MM-DD), and the instants its day starts and ends. */
  date: Text;
  dayStart: Bound;
  dayEnd: Bound;
  span: Span;
}

function assignmentOf(placement: Placement): Assignment {
  const { request, slot, candidates } = placement;
  const date = localDateOf(slot.start, request.schedule.timeZone);
  return {
    candidates: JSON.stringify((candidates ?? []).map((t) => t.id)),
    skills: JSON.stringify(request.visit.skills),
    postalCode: request.postalCode,
    date: dateString(date),
    dayStart: localToInstant(date, 0, request.schedule.timeZone),
    dayEnd: localToInstant(date + 1, 0, request.schedule.timeZone),
    span: spanOf(placement),
  };
}

/**
 * Technician mode: the technician a visit is assigned, in SQL (NULL when
 * none): of the candidates, one still active, qualified, covering the place
 * and not off that day (the catalogue read may be seconds old), with no visit
 * or hold occupying the span; `keep` first, then the fewest visits starting
 * that local day, then by id.
 */
export const assignee = (census: Census, placement: Placement, keep?: string | null): SQL =>
  assigneeOf(census, assignmentOf(placement), keep);

/** assignee, of an assignment's values. */
export function assigneeOf(census: Census, assignment: Assignment, keep?: string | SQL | null): SQL {
  const { org, except } = census;
  const { postalCode, date, dayStart, dayEnd, span } = assignment;
  const own = and(
    eq(incidents.orgId, org.id),
    occupies,
    eq(incidents.technicianId, technicians.id),
    except === undefined ? undefined : ne(incidents.id, except),
  );
  const load = sql`(SELECT count(*) FROM ${ofTechnician(incidents)} WHERE ${and(own, gte(incidents.startsAt, dayStart), lt(incidents.startsAt, dayEnd))})`;
  // Eligibility as the candidates were chosen (src/scheduling/eligibility.ts), on the rows as they are now.
  const chosen = techniciansWhere(org, assignment.candidates, [
    sql`NOT ${busy({ ...census, fresh: true }, span)}`,
    qualifiedSql(technicians, assignment.skills),
    coversSql(technicians, postalCode),
    sql`NOT ${offOnSql(technicians, date)}`,
  ]);
  // `keep` of the outer row (SQL) cannot go in the ORDER BY, where SQLite resolves no outer column.
  if (keep && typeof keep !== "string")
    return sql`coalesce((${chosen} AND ${technicians.id} = ${keep}), (${chosen} ORDER BY ${load}, ${technicians.id} LIMIT 1))`;
  const first = keep ? sql`${technicians.id} = ${keep} DESC, ` : sql``;
  return sql`(${chosen} ORDER BY ${first}${load}, ${technicians.id} LIMIT 1)`;
}

/**
 * The org's active technicians among `candidates` (a JSON array of ids)
 * meeting `conditions`. The ids go as one JSON parameter: D1 binds at most
 * 100 to a statement, and an org may have more technicians than that.
 */
function techniciansWhere(org: Org, candidates: Text, conditions: (SQL | undefined)[]): SQL {
  const listed = sql`${technicians.id} IN (SELECT value FROM json_each(${candidates}))`;
  return sql`SELECT ${technicians.id} FROM ${technicians} WHERE ${and(
    eq(technicians.orgId, org.id),
    eq(technicians.active, true),
    listed,
    ...conditions,
  )}`;
}

/** Technician mode: the candidates still free for the whole of `span` once a visit occupying it is written, in SQL. */
function techniciansLeft(census: Census, candidates: Text, span: Span): SQL {
  const fresh = { ...census, fresh: true, except: undefined };
  return sql`(SELECT count(*) FROM (${techniciansWhere(census.org, candidates, [sql`NOT ${busy(fresh, span)}`])}))`;
}

/**
 * Whether `placement` has room, in SQL: in crew mode, fewer visits and holds
 * than crews at each instant of its span; with technicians, one free for it
 * (assignee is that technician's id, or NULL).
 */
export const roomFor = (census: Census, placement: Placement, technician: SQL | null): SQL =>
  roomIn(census, spanOf(placement), technician);

/** roomFor, of a span (times or placeholders). */
const roomIn = (census: Census, span: Span, technician: SQL | null | undefined): SQL =>
  technician ? sql`${technician} IS NOT NULL` : crewFits(census, span);

/**
 * The places left for the visit once written, in SQL: crews free for its
 * whole span, or candidates still free (create-incident's and hold-slot's `remaining`).
 */
export function placesLeft(census: Census, placement: Placement): SQL {
  const { candidates } = placement;
  const span = spanOf(placement);
  if (candidates === null) return crewsLeft(census, span);
  return techniciansLeft(census, JSON.stringify(candidates.map((t) => t.id)), span);
}

/** How a place is decided: by crews, by technicians anywhere, or by technicians covering a postal code. */
export type PlaceMode = "crew" | "anywhere" | "at";

/**
 * The conditions on a place over placeholders, for a prepared statement's
 * template: whether it has room, the technician assigned (technician
 * modes), and the places left once written. Bound by name: `orgId`,
 * `capacity`, `now`, the span as `startsAt` and `occupiedUntil` (the row's
 * own columns), and in technician modes placeValues' assignment.
 */
export function placeTemplate(mode: PlaceMode) {
  const census = CENSUS_TEMPLATE;
  const span = { start: param("startsAt"), end: param("occupiedUntil") };
  const technician =
    mode === "crew"
      ? undefined
      : assigneeOf(census, {
          candidates: param("candidates"),
          skills: param("skills"),
          postalCode: mode === "at" ? param("servedPostalCode") : null,
          date: param("date"),
          dayStart: param("dayStart"),
          dayEnd: param("dayEnd"),
          span,
        });
  return {
    technician,
    room: roomIn(census, span, technician),
    left: technician ? techniciansLeft(census, param("candidates"), span) : crewsLeft(census, span),
  };
}

/** The mode of `placement`, and the values its placeTemplate binds (beside the row's). */
export function placeValues(census: Census, placement: Placement) {
  const common = { orgId: census.org.id, capacity: census.org.schedule.capacity, now: census.now };
  if (placement.candidates === null) return { mode: "crew" as PlaceMode, values: common };
  const { candidates, skills, postalCode, date, dayStart, dayEnd } = assignmentOf(placement);
  return {
    mode: (postalCode === null ? "anywhere" : "at") as PlaceMode,
    values: { ...common, candidates, skills, servedPostalCode: postalCode, date, dayStart, dayEnd },
  };
}
