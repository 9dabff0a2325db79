// The admin CLI's writes of an org's technicians (docs/operations.md,
// "Services and technicians"): each returns null for an unknown org and says
// why it refused anything else. A change that would strand a visit is
// refused, or with `reassign` written with the moves of its visits
// (src/scheduling/reassignment.ts decides them; ./reassignment.ts writes them).
import { and, asc, eq, gt, or, sql } from "drizzle-orm";
import { incidents, orgs, technicians } from "../../drizzle/schema";
import { MINUTE } from "../lib/datetime";
import { newId } from "../lib/ids";
import { place, restricts, stranded } from "../scheduling/reassignment";
import { scheduleOf } from "../scheduling/schedule";
import type { Technician } from "../scheduling/visits";
import { catalogueOf, catalogueQueries, orgQuery, technicianOf, technicianView } from "./catalogue";
import { type Db, insertWhere } from "./client";
import { guard, stoppedBy } from "./guards";
import { isScheduled } from "./occupancy";
import { bookingsAround, type Move, moveStatements, movesOverlap, movesUndone, unseenVisits } from "./reassignment";

export type TechnicianFields = Omit<Technician, "id">;
export type TechnicianChanges = Partial<TechnicianFields>;

const technicianRow = (orgId: string, t: Technician, now: number) => ({ ...t, orgId, createdAt: now, updatedAt: now });

/** JSON text as SQL: an INSERT … SELECT (insertWhere) binds values as they are, without the columns' JSON mode. */
const json = (value: unknown) => (value === null ? null : sql`${JSON.stringify(value)}`);

/** The statement adding `t`, only while the org exists (the org is checked and written in one statement). */
const insertTechnician = (db: Db, orgId: string, t: Technician, now: number) =>
  insertWhere(
    db,
    technicians,
    {
      ...technicianRow(orgId, t, now),
      skills: json(t.skills)!,
      postalCodes: json(t.postalCodes)!,
      weeklyHours: json(t.weeklyHours),
      daysOff: json(t.daysOff)!,
    },
    sql`EXISTS (SELECT 1 FROM ${orgs} WHERE ${eq(orgs.id, orgId)})`,
  );

/** Adds a technician in one statement that checks the org; null for an unknown org. */
export async function addTechnician(
  db: Db,
  orgId: string,
  fields: TechnicianFields,
  now = Date.now(),
): Promise<Technician | null> {
  const technician: Technician = { ...fields, id: newId("tech", now) };
  const { meta } = await insertTechnician(db, orgId, technician, now);
  return meta.changes === 1 ? technicianView(technician) : null;
}

/**
 * Adds every technician of a file in one batch (all or none), each in one
 * statement of at most ten parameters (D1 allows 100). Ids follow the file's
 * order (a millisecond apart), as assignment breaks ties by id.
 */
export async function importTechnicians(db: Db, orgId: string, fields: TechnicianFields[], now = Date.now()) {
  const added: Technician[] = fields.map((f, i) => ({ ...f, id: newId("tech", now + i) }));
  const [first, ...rest] = added.map((t) => insertTechnician(db, orgId, t, now));
  if (!first) return (await orgQuery(db, orgId)).length === 0 ? null : { imported: 0, technicians: [] };
  const [result] = await db.batch([first, ...rest]);
  if (result.meta.changes !== 1) return null;
  return { imported: added.length, technicians: added.map(({ id, name }) => ({ id, name })) };
}

/** Every technician of the org, inactive ones too, by id (the order they were added); null for an unknown org. */
export async function listTechnicians(db: Db, orgId: string): Promise<Technician[] | null> {
  const [[org], rows] = await db.batch([orgQuery(db, orgId), catalogueQueries(db, orgId)[1]]);
  return org ? rows.map((row) => technicianView(technicianOf(row))) : null;
}

export type TechnicianUpdate =
  | { technician: Technician; reassigned: string[] }
  | { refused: "unknown_technician" }
  /** Future visits the change would strand (no --reassign), or that no other technician can take. */
  | { refused: "stranded" | "unplaced"; incidentIds: string[] }
  /** The visits changed between the read and the write: nothing was written. */
  | { refused: "changed" };

/**
 * Changes a technician without ever stranding a visit (docs/api.md,
 * "Technicians"). A future scheduled visit of theirs that the change would
 * make them unable to do (deactivated, a day off that date, a skill or the
 * coverage of its postal code lost) is refused, or with `reassign` moved to
 * another technician who could have been assigned it: eligible, on duty and
 * free for its span, the fewest visits that local day first, ties by id. If
 * any cannot move, nothing changes. The change, the moves and one
 * `incident.reassigned` event per move are one batch, which a final guard
 * makes fail whole if the visits changed since they were read.
 */
export async function updateTechnician(
  db: Db,
  orgId: string,
  id: string,
  changes: TechnicianChanges,
  { reassign = false, now = Date.now() }: { reassign?: boolean; now?: number } = {},
): Promise<TechnicianUpdate | null> {
  const [[org], serviceRows, technicianRows, visits] = await db.batch([
    orgQuery(db, orgId),
    ...catalogueQueries(db, orgId),
    db
      .select()
      .from(incidents)
      .where(and(eq(incidents.orgId, orgId), isScheduled, eq(incidents.technicianId, id), gt(incidents.startsAt, now)))
      .orderBy(asc(incidents.startsAt), asc(incidents.id)),
  ]);
  if (!org) return null;
  const row = technicianRows.find((t) => t.id === id);
  if (!row) return { refused: "unknown_technician" };
  const before = technicianOf(row);
  const after: Technician = { ...before, ...changes };
  const schedule = scheduleOf(org.timeZone, org.schedule);
  const catalogue = catalogueOf(serviceRows, technicianRows);
  const change = { before, after };
  const strandedVisits = stranded(change, visits, catalogue.services, schedule.timeZone);
  if (strandedVisits.length > 0 && !reassign) {
    return { refused: "stranded", incidentIds: strandedVisits.map((v) => v.id) };
  }

  let moves: Move[] = [];
  if (strandedVisits.length > 0) {
    const others = catalogue.technicians.filter((t) => t.id !== id);
    const census = { org: { id: orgId, maxBookingMs: org.maxSlotMinutes * MINUTE }, now };
    const booked = await bookingsAround(db, census, strandedVisits, schedule.timeZone);
    const placed = place(strandedVisits, { ...catalogue, technicians: others }, schedule, booked);
    if (placed.unplaced.length > 0) return { refused: "unplaced", incidentIds: placed.unplaced };
    moves = placed.moves;
  }

  const { id: _id, orgId: _org, createdAt: _created, ...stored } = technicianRow(orgId, after, now);
  // Whether the visits changed since they were read: what the batch's guard checks at its end.
  const changed = or(
    movesUndone(orgId, moves, now),
    movesOverlap(orgId, moves, now),
    // A visit booked meanwhile that this change might strand (it was not checked).
    restricts(change) ? unseenVisits(orgId, id, now, visits) : undefined,
  );
  try {
    await db.batch([
      db
        .update(technicians)
        .set(stored)
        .where(and(eq(technicians.orgId, orgId), eq(technicians.id, id))),
      ...moves.flatMap((move) => moveStatements(db, orgId, move, schedule.timeZone, now)),
      ...(changed ? [guard(db, "technician-update", changed)] : []),
    ]);
  } catch (error) {
    if (stoppedBy(error, "technician-update")) return { refused: "changed" };
    throw error;
  }
  return { technician: technicianView(after), reassigned: moves.map((m) => m.visit.id) };
}
