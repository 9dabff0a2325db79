// The dispatch board's day (docs/api.md, "The dispatch board"): the visits
// and the live holds that start within a local day, in one round trip (a
// batch of two indexed reads). Which row each goes in is the board's
// (src/scheduling/board.ts).
import { and, eq, gte, lt, sql } from "drizzle-orm";
import { holds, incidents } from "../../drizzle/schema";
import { toIso } from "../lib/datetime";
import type { Incident } from "../schemas/incidents";
import { type Db, param, prepared } from "./client";
import { incidentColumns, incidentView, type ShownIncident } from "./incidents";
import { type Census, overlapping } from "./occupancy";
import type { Org } from "./orgs";

/**
 * Every visit but a cancelled one (a cancelled visit holds no place and is
 * not drawn; any other status is): the org's incidents starting in
 * [start, end), by start then id, from the (org, start, id) index.
 */
const dayVisits = prepared((db) =>
  db
    .select(incidentColumns)
    .from(incidents)
    .where(
      and(
        eq(incidents.orgId, param("orgId")),
        gte(incidents.startsAt, param("start")),
        lt(incidents.startsAt, param("end")),
        sql`${incidents.status} <> 'cancelled'`,
      ),
    )
    .orderBy(incidents.startsAt, incidents.id),
);

/** What overlapping() reads of the org, over placeholders: `orgId`, `longest` (its cached longest span), `now`. */
const CENSUS = { org: { id: param("orgId"), maxBookingMs: param("longest") }, now: param("now") } as unknown as Census;

/**
 * The live holds starting in [start, end): those occupying some instant of
 * the day by the same condition every count of places uses (overlapping: not
 * expired, released or used at `now`), that start within it.
 */
const dayHolds = prepared((db) =>
  db
    .select({
      technicianId: holds.technicianId,
      startsAt: holds.startsAt,
      endsAt: holds.endsAt,
      expiresAt: holds.expiresAt,
      serviceId: holds.serviceId,
    })
    .from(holds)
    .where(
      and(
        overlapping(holds, CENSUS, { start: param("start"), end: param("end") }),
        gte(holds.startsAt, param("start")),
      ),
    )
    .orderBy(holds.startsAt, holds.id),
);

type HoldRow = {
  technicianId: string | null;
  startsAt: number;
  endsAt: number;
  expiresAt: number;
  serviceId: string | null;
};

/** A hold of the board, as the API shows it, with its technician to place it by (not shown). */
export interface BoardHold {
  technicianId: string | null;
  view: { start: string; end: string; expiresAt: string; serviceId: string | null };
}

/** The org's visits and live holds at `now` starting in [start, end), each as the API shows it. */
export async function readDay(
  db: Db,
  { org, now, start, end }: { org: Org; now: number; start: number; end: number },
): Promise<{ visits: Incident[]; holds: BoardHold[] }> {
  const values = { orgId: org.id, longest: org.maxBookingMs, now, start, end };
  const [visitRows, holdRows] = (await db.batch([dayVisits(db, values), dayHolds(db, values)])) as [
    ShownIncident[],
    HoldRow[],
  ];
  const { timeZone } = org.schedule;
  return {
    visits: visitRows.map((row) => incidentView(row, timeZone)),
    holds: holdRows.map((row) => ({
      technicianId: row.technicianId,
      view: {
        start: toIso(row.startsAt),
        end: toIso(row.endsAt),
        expiresAt: toIso(row.expiresAt),
        serviceId: row.serviceId,
      },
    })),
  };
}
