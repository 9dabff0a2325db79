// Finding bookable starts means reading the visits of the time scanned, and
// only those: the scan reads one window of visits per round trip, sized for
// about twice the starts asked for, and widens (×4) only if full starts leave
// it short. So a call costs what it scans, not what the org has booked ever.

import type { Db } from "../db/client";
import { bookingsOverlapping } from "../db/occupancy";
import type { Org } from "../db/orgs";
import { type Booking, bookableWindow, candidateSlots, type Slot, type SlotTimes, slotView } from "../scheduling/slots";
import { findBookable, fleetFor, type VisitRequest } from "../scheduling/visits";

export interface ScanResult {
  slots: Slot[];
  /** The first round trip's visits: every visit occupying the `alsoCover` ranges (and some others). */
  covered: Booking[];
}

export interface ScanQuery {
  org: Org;
  request: VisitRequest;
  now: number;
  /** Starts at or after this (lifted to now + notice). */
  from: number;
  limit: number;
  /** Ranges whose visits the first round trip also reads (returned as `covered`). */
  alsoCover?: SlotTimes[];
}

export async function scanBookable(
  db: Db,
  { org, request, now, from, limit, alsoCover = [] }: ScanQuery,
): Promise<ScanResult> {
  const { schedule } = org;
  // No technician could ever take it (out of area, unqualified): nothing to scan.
  const fleet = fleetFor(request.technicians, request.visit.skills, request.postalCode);
  if (!fleet.crew && fleet.reason)
    return { slots: [], covered: alsoCover.length > 0 ? await bookingsOverlapping(db, { org, now }, alsoCover) : [] };
  const spanMs = request.visit.durationMs + request.visit.bufferMs;
  const horizon = bookableWindow(schedule, now);
  let cursor = Math.max(from, horizon.from);
  let windowSlots = 2 * limit + 8;
  const slots: Slot[] = [];
  let covered: Booking[] | undefined;
  do {
    const candidates: SlotTimes[] = [];
    for (const slot of candidateSlots(schedule, cursor, horizon.until)) {
      if (candidates.push(slot) >= windowSlots) break;
    }
    const last = candidates.at(-1);
    const until = last && candidates.length >= windowSlots ? last.start + 1 : horizon.until;
    // Every visit occupying some instant of the spans of these starts.
    const window = candidates[0] && last ? [{ start: candidates[0].start, end: last.start + spanMs }] : [];
    // The alsoCover ranges ride along in the first round trip.
    const bookings = await bookingsOverlapping(
      db,
      { org, now },
      covered === undefined ? [...window, ...alsoCover] : window,
    );
    covered ??= bookings;
    slots.push(
      ...findBookable({
        request,
        bookings,
        maxBookingMs: org.maxBookingMs,
        now,
        from: cursor,
        until,
        limit: limit - slots.length,
      }),
    );
    if (window.length === 0) break;
    cursor = until;
    windowSlots *= 4;
  } while (slots.length < limit && cursor < horizon.until);
  return { slots, covered };
}

const ALTERNATIVES = 3;

/** Up to 3 bookable starts after `dateTime` for the same visit: the alternatives of a check or a refused booking. */
export async function alternativesAfter(db: Db, org: Org, request: VisitRequest, now: number, dateTime: number) {
  const { slots } = await scanBookable(db, { org, request, now, from: dateTime + 1, limit: ALTERNATIVES });
  return slots.map((s) => slotView(s, org.schedule.timeZone, request.visit));
}
