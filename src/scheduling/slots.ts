// The slot engine: pure functions of (schedule, bookings, now, instants).
// No clock, no I/O; callers pass `now` and the bookings of the window.
import { MAX_INSTANT } from "../lib/datetime";
import type { SlotOut } from "../schemas/slots";
import { type Interval, minutesOf, type Schedule, WEEKDAYS } from "./schedule";
import { dateString, type LocalDate, localDateOf, localIso, localToInstant, weekday } from "./zone";

const MINUTE = 60_000;

export interface SlotTimes {
  start: number;
  end: number;
}

export interface Slot extends SlotTimes {
  remaining: number;
}

export interface Booking {
  startsAt: number;
  endsAt: number;
  /** How many bookings have exactly these times (1 when absent). */
  count?: number;
}

export type Reason = "in_the_past" | "beyond_horizon" | "closed" | "not_a_slot_start" | "too_soon" | "fully_booked";

/** The bookable window (docs/api.md, "The schedule"): [now + notice, now + horizon). */
export function bookableWindow(schedule: Schedule, now: number) {
  return { from: now + schedule.minNoticeMinutes * MINUTE, until: now + schedule.horizonDays * 1440 * MINUTE };
}

/** [opening, closing) instants of each interval of local `date`; none on a closed date. */
function openingsOn(schedule: Schedule, date: LocalDate): SlotTimes[] {
  if (schedule.closedDates.includes(dateString(date))) return [];
  const intervals: Interval[] = schedule.weeklyHours[WEEKDAYS[weekday(date) - 1]!] ?? [];
  return intervals.map(([open, close]) => ({
    start: localToInstant(date, minutesOf(open), schedule.timeZone),
    end: localToInstant(date, minutesOf(close), schedule.timeZone),
  }));
}

/**
 * Every slot of the weekly hours on open dates whose start is in [from, until),
 * ascending, ignoring bookings, notice and horizon. Slots start at an opening
 * instant and every slotMinutes of elapsed time after it while they fit before
 * the closing instant, so each slot lasts exactly slotMinutes, DST or not.
 */
export function* candidateSlots(schedule: Schedule, from: number, until: number): Generator<SlotTimes> {
  const slotMs = schedule.slotMinutes * MINUTE;
  // A slot of local date D starts on D (opening ≥ D's midnight, end ≤ D+1's),
  // so the scan starts at the local date of `from`.
  for (let date = localDateOf(from, schedule.timeZone); localToInstant(date, 0, schedule.timeZone) < until; date++) {
    for (const opening of openingsOn(schedule, date)) {
      const skip = Math.max(0, Math.ceil((from - opening.start) / slotMs));
      for (let start = opening.start + skip * slotMs; start + slotMs <= opening.end && start < until; start += slotMs) {
        yield { start, end: start + slotMs };
      }
    }
  }
}

/** The last local date: a slot ending after it could not be written (toISOString gives `+010000-…`). */
const LAST_DATE = Math.floor(MAX_INSTANT / (1440 * MINUTE));

/** Whether a slot ending at `end` has both forms writable: UTC and local both within year 9999. */
const writable = (end: number, timeZone: string) => end <= MAX_INSTANT && localDateOf(end, timeZone) <= LAST_DATE;

/** The slot starting exactly at `at`, and whether `at` falls inside opening hours at all. */
export function slotAt(schedule: Schedule, at: number): { slot: SlotTimes | null; inHours: boolean } {
  const slotMs = schedule.slotMinutes * MINUTE;
  const date = localDateOf(at, schedule.timeZone);
  let inHours = false;
  for (const opening of openingsOn(schedule, date)) {
    if (at < opening.start || at >= opening.end) continue;
    inHours = true;
    if ((at - opening.start) % slotMs === 0 && at + slotMs <= opening.end && writable(at + slotMs, schedule.timeZone))
      return { slot: { start: at, end: at + slotMs }, inHours };
  }
  return { slot: null, inHours };
}

/**
 * The slot starting at `at` (null when `at` is no slot start of an open date),
 * and why it cannot be booked, bookings aside (the caller adds `fully_booked`),
 * in the order docs/api.md gives ("Check"); reason null if it can.
 */
export function assessSlot(
  schedule: Schedule,
  now: number,
  at: number,
): { slot: SlotTimes | null; reason: Exclude<Reason, "fully_booked"> | null } {
  const window = bookableWindow(schedule, now);
  const { slot, inHours } = slotAt(schedule, at);
  const reason =
    at < now
      ? "in_the_past"
      : at >= window.until
        ? "beyond_horizon"
        : !inHours
          ? "closed"
          : !slot
            ? "not_a_slot_start"
            : at < window.from
              ? "too_soon"
              : null;
  return { slot, reason };
}

/**
 * A counter of places left, to be asked about slots in ascending order.
 * `bookings` must be sorted by start and include every booking overlapping
 * those slots; none lasts longer than `maxBookingMs`, which bounds the scan.
 */
export function remainingCounter(bookings: Booking[], capacity: number, maxBookingMs: number) {
  let low = 0;
  let high = 0;
  return (slot: SlotTimes): number => {
    while (low < bookings.length && bookings[low]!.startsAt <= slot.start - maxBookingMs) low++;
    while (high < bookings.length && bookings[high]!.startsAt < slot.end) high++;
    let holding = 0;
    for (let i = low; i < high; i++) if (bookings[i]!.endsAt > slot.start) holding += bookings[i]!.count ?? 1;
    return Math.max(0, capacity - holding);
  };
}

export interface SlotQuery {
  schedule: Schedule;
  /** Sorted by start; every booking overlapping a slot that starts in [from, until). */
  bookings: Booking[];
  maxBookingMs: number;
  now: number;
  from: number;
  limit: number;
  /** Consider only slots starting before this (the end of the bookings read); the horizon otherwise. */
  until?: number;
}

/** The first `limit` bookable slots starting at or after `from` (lifted to now + notice), ascending. */
export function findBookable(query: SlotQuery): Slot[] {
  const { schedule } = query;
  const window = bookableWindow(schedule, query.now);
  const until = Math.min(window.until, query.until ?? Number.POSITIVE_INFINITY);
  const remaining = remainingCounter(query.bookings, schedule.capacity, query.maxBookingMs);
  const found: Slot[] = [];
  if (query.limit <= 0) return found;
  for (const slot of candidateSlots(schedule, Math.max(query.from, window.from), until)) {
    const left = remaining(slot);
    if (left > 0 && found.push({ ...slot, remaining: left }) >= query.limit) break;
  }
  return found;
}

/** The slot object (docs/api.md, "Slot objects"). */
export function slotView(slot: Slot, timeZone: string): SlotOut {
  return {
    start: new Date(slot.start).toISOString(),
    end: new Date(slot.end).toISOString(),
    localStart: localIso(slot.start, timeZone),
    localEnd: localIso(slot.end, timeZone),
    remaining: slot.remaining,
  };
}
