import { and, count, eq, gt, lt } from "drizzle-orm";
import { incidents } from "../../drizzle/schema";
import type { Org } from "../env";
import { newId } from "../lib/ids";
import type { Booking, SlotTimes } from "../scheduling/slots";
import type { Db } from "./client";
import { type HeldKey, storedWithWrite } from "./idempotency";

/**
 * Bookings overlapping any of `ranges`, sorted by start, in one round trip,
 * as one entry per distinct (start, end) with its count: a full slot comes
 * back as one row, not one per booking. Each range is read from the covering
 * (org_id, starts_at, ends_at) index alone: a booking overlapping
 * [start, end) starts in (start - maxBookingMs, end).
 */
export async function bookingsOverlapping(db: Db, org: Org, ranges: SlotTimes[]): Promise<Booking[]> {
  const [first, ...rest] = ranges.map((range) =>
    db
      .select({ startsAt: incidents.startsAt, endsAt: incidents.endsAt, count: count() })
      .from(incidents)
      .where(
        and(
          eq(incidents.orgId, org.id),
          gt(incidents.startsAt, range.start - org.maxBookingMs),
          lt(incidents.startsAt, range.end),
          gt(incidents.endsAt, range.start),
        ),
      )
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

export interface Booked {
  id: string;
  accountId: string | null;
  /** Places left in the slot after this booking. */
  remaining: number;
}

// Placeholders of the recorded response, filled in by SQL (see bookSlot). The
// texts are JSON structure ("key":value), which no string value can contain
// unescaped, so a replace never touches a client-supplied value.
const ACCOUNT_TEXT = `"accountId":${JSON.stringify("\u0000")}`;
const REMAINING_TEXT = `"remaining":-1`;

/**
 * Books `slot` for a new incident, in one round trip; the response is
 * `respond(booking)` as JSON, or null when the slot was full. With a held
 * Idempotency-Key the same JSON is recorded in the same batch: SQL fills in
 * the linked account and the places left, which only the batch knows.
 */
export async function bookSlot(
  db: Db,
  org: Org,
  incident: NewIncident,
  slot: SlotTimes,
  now: number,
  respond: (booked: Booked) => unknown,
  held?: HeldKey,
) {
  const id = newId("inc", now);
  const { capacity } = org.schedule;
  const d1 = db.$client;
  const record = held && [
    storedWithWrite(d1, held, "incidents", id, JSON.stringify(respond({ id, accountId: "\u0000", remaining: -1 })), [
      {
        text: ACCOUNT_TEXT,
        sql: `'"accountId":' || coalesce((SELECT json_quote(account_id) FROM incidents WHERE id = ?), 'null')`,
        params: [id],
      },
      {
        text: REMAINING_TEXT,
        sql: `'"remaining":' || (SELECT CAST(max(0, ? - count(*)) AS INTEGER) FROM incidents WHERE org_id = ? AND starts_at > ? - ? AND starts_at < ? AND ends_at > ?)`,
        params: [capacity, org.id, slot.start, org.maxBookingMs, slot.end, slot.start],
      },
    ]),
  ];
  const [insert, count] = await d1.batch<{ accountId?: string | null; holding?: number }>([
    d1
      .prepare(BOOK)
      .bind(
        id,
        org.id,
        incident.clientName,
        incident.insectName,
        incident.clientName.toLowerCase(),
        slot.start,
        slot.end,
        now,
        org.maxBookingMs,
        capacity,
      ),
    d1.prepare(HOLDING).bind(org.id, slot.start, slot.end, org.maxBookingMs),
    ...(record ?? []),
  ]);
  const row = insert?.results[0];
  if (row === undefined) return null;
  if (held) held.stored = true;
  return JSON.stringify(
    respond({
      id,
      accountId: row.accountId ?? null,
      remaining: Math.max(0, capacity - (count?.results[0]?.holding ?? 0)),
    }),
  );
}
