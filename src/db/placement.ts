// Where a visit goes (docs/api.md, "Technicians and service areas"): whether
// its place has room, the technician a booking assigns, and the places left
// once it is written, in SQL, for the one conditional statement that books,
// holds or moves it. What occupies a place is occupancy.ts's.
import { and, eq, gte, lt, ne, type Placeholder, type SQL, sql } from "drizzle-orm";
import { holds, incidents, technicians } from "../../drizzle/schema";
import { coversSql, offOnSql, qualifiedSql } from "../scheduling/eligibility";
import type { SlotTimes } from "../scheduling/slots";
import type { Technician, VisitRequest } from "../scheduling/visits";
import { dateString, localDateOf, localToInstant } from "../scheduling/zone";
import { CHOSEN, param } from "./client";
import {
  type Bound,
  CENSUS_TEMPLATE,
  type Census,
  crewFits,
  crewsLeft,
  type Occupant,
  occupies,
  overlapping,
  type Span,
} from "./occupancy";
import type { Org } from "./orgs";

type Text = string | Placeholder | SQL;

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
 * own columns), and in technician modes placeValues' assignment. `once`: the
 * technician is insertWhere's `chosen`, read as CHOSEN by the row and the
 * room (else each reading assigns it again).
 */
export function placeTemplate(mode: PlaceMode, once = false) {
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
  const left = technician ? techniciansLeft(census, param("candidates"), span) : crewsLeft(census, span);
  if (technician && once) return { chosen: technician, technician: CHOSEN, room: roomIn(census, span, CHOSEN), left };
  return { chosen: undefined, technician, room: roomIn(census, span, technician), left };
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
