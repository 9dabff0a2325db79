// The SQL of a technician's change that moves their visits (docs/api.md,
// "Technicians"; src/db/technicians.ts): the bookings around the visits to
// move, the moves with their events, and the conditions of the batch's guard
// that find the visits changed since they were read. Which visits move, and
// where, is src/scheduling/reassignment.ts's.
import { and, eq, gt, ne, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { holds, incidents } from "../../drizzle/schema";
import { overlapsSql } from "../scheduling/overlap";
import { movesWindow, type Move as VisitMove } from "../scheduling/reassignment";
import type { Booking } from "../scheduling/slots";
import type { Db } from "./client";
import { actorOf, recordEvent } from "./events";
import { type IncidentRow, incidentView } from "./incidents";
import { isScheduled, type OccupancyCensus, occupiesIn, overlapping } from "./occupancy";

/** A visit moving from the technician being changed to another one. */
export type Move = VisitMove<IncidentRow>;

/**
 * What occupies movesWindow of `visits` (sorted by start) at `now`, by any
 * technician: scheduled visits, and live holds.
 */
export async function bookingsAround(
  db: Db,
  census: OccupancyCensus,
  visits: IncidentRow[],
  timeZone: string,
): Promise<{ visits: Booking[]; held: Booking[] }> {
  const range = movesWindow(visits, timeZone);
  const rows = await db
    .select({
      held: sql<number>`0`,
      startsAt: incidents.startsAt,
      endsAt: incidents.occupiedUntil,
      technicianId: incidents.technicianId,
    })
    .from(incidents)
    .where(overlapping(incidents, census, range))
    .unionAll(
      db
        .select({
          held: sql<number>`1`,
          startsAt: holds.startsAt,
          endsAt: holds.occupiedUntil,
          technicianId: holds.technicianId,
        })
        .from(holds)
        .where(overlapping(holds, census, range)),
    );
  const of = (held: number) => rows.filter((r) => r.held === held).map(({ held: _, ...booking }) => booking);
  return { visits: of(0), held: of(1) };
}

/**
 * A move: the incident's technician, only while it is still scheduled with
 * the one it leaves, at the times and updatedAt that were read; and its
 * `incident.reassigned` event (recorded only if the move is in place).
 */
export function moveStatements(db: Db, orgId: string, { visit: row, to }: Move, timeZone: string, now: number) {
  const update = db
    .update(incidents)
    .set({ technicianId: to, updatedAt: now })
    .where(
      and(
        eq(incidents.orgId, orgId),
        eq(incidents.id, row.id),
        isScheduled,
        eq(incidents.technicianId, row.technicianId!),
        eq(incidents.startsAt, row.startsAt),
        eq(incidents.endsAt, row.endsAt),
        eq(incidents.occupiedUntil, row.occupiedUntil),
        eq(incidents.updatedAt, row.updatedAt),
      ),
    );
  const event = recordEvent(db, {
    orgId,
    type: "incident.reassigned",
    now,
    table: incidents,
    rowId: row.id,
    state: and(eq(incidents.technicianId, to), eq(incidents.updatedAt, now)),
    data: JSON.stringify(incidentView({ ...row, technicianId: to, updatedAt: now }, timeZone)),
    previous: { technicianId: row.technicianId },
    // Reassignments follow a change made with the admin CLI (docs/operations.md).
    actor: actorOf("cli"),
  });
  // Sent to webhooks by the minute's sweep: the CLI has no queue binding.
  return [update, event.insert];
}

/** The moves as one JSON parameter (D1 allows 100 parameters a statement, a run may move more visits). */
const movesJson = (moves: Move[]) => JSON.stringify(moves.map((m) => ({ id: m.visit.id, to: m.to })));

/** Some move did not apply: its incident is not scheduled with its new technician as of this write. */
export function movesUndone(orgId: string, moves: Move[], now: number): SQL | undefined {
  if (moves.length === 0) return undefined;
  return sql`EXISTS (SELECT 1 FROM json_each(${movesJson(moves)}) AS m WHERE NOT EXISTS (SELECT 1 FROM ${incidents} WHERE ${and(
    eq(incidents.orgId, orgId),
    sql`${incidents.id} = json_extract(m.value, '$.id')`,
    isScheduled,
    sql`${incidents.technicianId} = json_extract(m.value, '$.to')`,
    eq(incidents.updatedAt, now),
  )}))`;
}

/** A moved visit overlaps another scheduled visit or a live hold of its new technician (one made meanwhile, say). */
export function movesOverlap(orgId: string, moves: Move[], now: number): SQL | undefined {
  if (moves.length === 0) return undefined;
  const moved = and(
    eq(incidents.orgId, orgId),
    isScheduled,
    sql`${incidents.id} IN (SELECT value FROM json_each(${JSON.stringify(moves.map((m) => m.visit.id))}))`,
  );
  // What the moved visit occupies, against what a hold or another visit of its technician does.
  const span = { start: incidents.startsAt, end: incidents.occupiedUntil };
  const held = sql`EXISTS (SELECT 1 FROM ${incidents} JOIN ${holds} ON ${and(
    eq(holds.orgId, incidents.orgId),
    eq(holds.technicianId, incidents.technicianId),
    gt(holds.expiresAt, now),
    ...overlapsSql(holds, span),
  )} WHERE ${moved})`;
  const other = alias(incidents, "other");
  // In raw SQL an alias renders as its name only: the table is named here.
  const visits = sql`EXISTS (SELECT 1 FROM ${incidents} JOIN ${incidents} AS ${sql.identifier("other")} ON ${and(
    eq(other.orgId, incidents.orgId),
    eq(other.technicianId, incidents.technicianId),
    ne(other.id, incidents.id),
    occupiesIn(other.status),
    ...overlapsSql(other, span),
  )} WHERE ${moved})`;
  return sql`(${held} OR ${visits})`;
}

/** A future scheduled visit of the technician that the read did not see. */
export const unseenVisits = (orgId: string, id: string, now: number, seen: IncidentRow[]) =>
  sql`EXISTS (SELECT 1 FROM ${incidents} WHERE ${and(
    eq(incidents.orgId, orgId),
    isScheduled,
    eq(incidents.technicianId, id),
    gt(incidents.startsAt, now),
    sql`${incidents.id} NOT IN (SELECT value FROM json_each(${JSON.stringify(seen.map((v) => v.id))}))`,
  )})`;
