import { and, asc, eq, gt, lt } from "drizzle-orm";
import { incidents } from "../../drizzle/schema";
import type { Org } from "../env";
import { newId } from "../lib/ids";
import type { Booking, SlotTimes } from "../scheduling/slots";
import type { Db } from "./client";

/**
 * Bookings overlapping any of `ranges`, sorted by start, in one round trip.
 * Each range is read from the (org_id, starts_at) index: a booking overlapping
 * [start, end) starts in (start - maxBookingMs, end).
 */
export async function bookingsOverlapping(db: Db, org: Org, ranges: SlotTimes[]): Promise<Booking[]> {
  const [first, ...rest] = ranges.map((range) =>
    db
      .select({ id: incidents.id, startsAt: incidents.startsAt, endsAt: incidents.endsAt })
      .from(incidents)
      .where(
        and(
          eq(incidents.orgId, org.id),
          gt(incidents.startsAt, range.start - org.maxBookingMs),
          lt(incidents.startsAt, range.end),
          gt(incidents.endsAt, range.start),
        ),
      )
      .orderBy(asc(incidents.startsAt)),
  );
  if (!first) return [];
  const results = rest.length === 0 ? [await first] : await db.batch([first, ...rest]);
  const byId = new Map(results.flat().map((booking) => [booking.id, booking]));
  return [...byId.values()].sort((a, b) => a.startsAt - b.startsAt);
}

// One statement decides and writes: the row is inserted only while fewer than
// `capacity` bookings hold the slot. D1 runs statements one at a time, so N
// racing requests for r places yield exactly min(N, r) bookings. The account
// is linked in the same statement when exactly one account has the name.
const BOOK = `
INSERT INTO incidents (id, org_id, client_name, insect_name, account_id, starts_at, ends_at, created_at)
SELECT ?1, ?2, ?3, ?4,
  (SELECT CASE WHEN count(*) = 1 THEN min(id) END FROM accounts WHERE org_id = ?2 AND name_lower = ?5),
  ?6, ?7, ?8
WHERE (SELECT count(*) FROM incidents WHERE org_id = ?2 AND starts_at > ?6 - ?9 AND starts_at < ?7 AND ends_at > ?6) < ?10
RETURNING account_id AS accountId`;
const HOLDING = `
SELECT count(*) AS holding FROM incidents WHERE org_id = ?1 AND starts_at > ?2 - ?4 AND starts_at < ?3 AND ends_at > ?2`;

export interface NewIncident {
  clientName: string;
  insectName: string;
}

/** Books `slot` for a new incident; `booked: false` when the slot was full. One round trip. */
export async function bookSlot(db: Db, org: Org, incident: NewIncident, slot: SlotTimes, now: number) {
  const id = newId("inc", now);
  const d1 = db.$client;
  const [insert, count] = await d1.batch<{ accountId?: string | null; holding?: number }>([
    d1
      .prepare(BOOK)
      .bind(id, org.id, incident.clientName, incident.insectName, incident.clientName.toLowerCase(), slot.start, slot.end, now, org.maxBookingMs, org.schedule.capacity),
    d1.prepare(HOLDING).bind(org.id, slot.start, slot.end, org.maxBookingMs),
  ]);
  const row = insert?.results[0];
  return {
    booked: row !== undefined,
    id,
    accountId: row?.accountId ?? null,
    holding: count?.results[0]?.holding ?? 0,
  };
}
