import { and, count, eq, gt, lt, type SQL, sql } from "drizzle-orm";
import { accounts, incidents } from "../../drizzle/schema";
import type { Org } from "../env";
import { toIso } from "../lib/datetime";
import { newId } from "../lib/ids";
import { type Booking, type SlotTimes, slotView } from "../scheduling/slots";
import { type Db, inColumnOrder, insertWhere } from "./client";
import { type HeldKey, recordWithWrite, type Written } from "./idempotency";

/**
 * The bookings of `org` that hold [start, end): those overlapping it. Such a
 * booking starts in (start - maxBookingMs, end), so the condition reads one
 * range of the (org_id, starts_at, ends_at) index. Availability, the booking
 * statement and the places left all count with this one condition.
 */
export function holding(org: Org, range: SlotTimes): SQL {
  return and(
    eq(incidents.orgId, org.id),
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

export interface NewIncident {
  clientName: string;
  insectName: string;
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

/** The incident as create-incident answers it. */
function bookedView(request: BookingRequest, id: string, accountId: string | null, remaining: number) {
  const { slot, incident, org, now } = request;
  return {
    id,
    dateTime: toIso(slot.start),
    clientName: incident.clientName,
    insectName: incident.insectName,
    accountId,
    appointment: slotView({ ...slot, remaining }, org.schedule.timeZone),
    createdAt: toIso(now),
  };
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
    startsAt: slot.start,
    endsAt: slot.end,
    createdAt: now,
  });
  const hasRoom = sql`(SELECT count(*) FROM ${incidents} WHERE ${holding(org, slot)}) < ${org.schedule.capacity}`;
  const insert = insertWhere(db, incidents, { ...row, accountId: accountOf }, hasRoom);

  const body = sql`json_set(${JSON.stringify(bookedView(request, id, null, 0))},
    '$.accountId', (SELECT ${incidents.accountId} FROM ${incidents} WHERE ${eq(incidents.id, id)}),
    '$.appointment.remaining', (SELECT CAST(max(0, ${org.schedule.capacity} - count(*)) AS INTEGER) FROM ${incidents} WHERE ${holding(org, slot)}))`;
  const select = db
    .select({ body: sql<string>`${body}` })
    .from(incidents)
    .where(and(eq(incidents.orgId, org.id), eq(incidents.id, id)));
  const [inserted, answer] = await db.batch([
    insert,
    held ? recordWithWrite(db, { held, table: incidents, id, body }) : select,
  ]);
  if (inserted.meta.changes !== 1) return null;
  if (answer[0]?.body) return { body: answer[0].body, recorded: held !== undefined };
  // Booked, but the held claim had lapsed (taken over after 60 s): not recorded.
  const [booked] = await select;
  return { body: booked!.body, recorded: false };
}
