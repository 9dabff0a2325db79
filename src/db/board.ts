// The dispatch board's day (docs/api.md, "The dispatch board"): the visits
// and the live holds that start within a local day, in one round trip (a
// batch of two indexed reads). Which row each goes in is the board's
// (src/scheduling/board.ts).
import { and, type Column, eq, gte, lt, type SQL, sql } from "drizzle-orm";
import { holds, incidents } from "../../drizzle/schema";
import { toIso } from "../lib/datetime";
import type { Incident } from "../schemas/incidents";
import { type Db, param, prepared } from "./client";
import type { Bindable } from "./drizzle-internals";
import { incidentColumns, incidentView, type ShownIncident } from "./incidents";
import { type Census, overlapping } from "./occupancy";
import type { Org } from "./orgs";

/**
 * Each column under its field's name (`"client_name" AS "clientName"`): D1
 * answers a batch with rows keyed by the names selected, so the rows come
 * as the views read them, with no mapping of drizzle's (which, in a batch,
 * turns each row into an array and back into an object).
 */
const named = <T extends Record<string, Column>>(columns: T) =>
  Object.fromEntries(Object.entries(columns).map(([name, column]) => [name, sql`${column}`.as(name)])) as {
    [K in keyof T]: SQL.Aliased<T[K]["_"]["data"]>;
  };

/**
 * Every visit but a cancelled one (a cancelled visit holds no place and is
 * not drawn; any other status is): the org's incidents starting in
 * [start, end), by start then id, from the (org, start, id) index.
 */
const dayVisits = prepared((db) =>
  db
    .select(named(incidentColumns))
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
    .select(
      named({
        technicianId: holds.technicianId,
        startsAt: holds.startsAt,
        endsAt: holds.endsAt,
        expiresAt: holds.expiresAt,
        serviceId: holds.serviceId,
      }),
    )
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
  const statements = [dayVisits(db, values), dayHolds(db, values)] as unknown as Bindable[];
  // D1's own statements, in one batch of the request's session (db.batch would map each row twice).
  const [{ results: visitRows }, { results: holdRows }] = (await db.$client.batch(
    statements.map(({ stmt, query }) => stmt.bind(...query.params)),
  )) as [D1Result<ShownIncident>, D1Result<HoldRow>];
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
