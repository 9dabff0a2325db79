// The slot engine: pure functions of (schedule, bookings, now, instants).
// No clock, no I/O; callers pass `now` and the bookings of the window.
import { MAX_INSTANT, MINUTE, toIso } from "../lib/datetime";
import type { SlotOut } from "../schemas/slots";
import { type Interval, minutesOf, type Schedule, WEEKDAYS, type WeeklyHours } from "./schedule";
import { dateString, type LocalDate, localDateOf, localIso, localToInstant, weekday } from "./zone";

export interface SlotTimes {
  start: number;
  end: number;
}

export interface Slot extends SlotTimes {
  remaining: number;
}

/** A booked visit as availability sees it: the span it occupies, and by whom. */
export interface Booking {
  startsAt: number;
  /** The end of its occupied span: the visit's end plus its buffer. */
  endsAt: number;
  /** Its technician; null or absent in crew mode. */
  technicianId?: string | null;
  /** How many visits have exactly these times and technician (1 when absent). */
  count?: number;
}

/** A slot of the weekly hours, with the closing instant of its interval. */
export interface GridSlot extends SlotTimes {
  closing: number;
}

export type Reason =
  | "in_the_past"
  | "beyond_horizon"
  | "closed"
  | "not_a_slot_start"
  | "out_of_service_area"
  | "no_qualified_technician"
  | "too_soon"
  | "fully_booked";

/** The bookable window (docs/api.md, "The schedule"): [now + notice, now + horizon). */
export function bookableWindow(schedule: Schedule, now: number) {
  return { from: now + schedule.minNoticeMinutes * MINUTE, until: now + schedule.horizonDays * 1440 * MINUTE };
}

// A scan asks about the same few local dates again and again (each candidate
// start, each technician's hours), and so does the next request of the org:
// its schedule and its technicians' hours are the same objects while its key
// is cached (src/middleware/auth.ts). So each date's start and each weekly
// hours' openings of a date are kept, per zone and per hours object: a
// conversion costs microseconds, a lookup nanoseconds. Dates come from
// clients too (a check's dateTime), so each map is emptied when too full.
const DATES_KEPT = 2_000;
let dayStarts = new Map<string, Map<LocalDate, number>>();
let hoursOpenings = new WeakMap<WeeklyHours, Map<string, Map<LocalDate, SlotTimes[]>>>();

/** Empties this module's caches: for benchmarks, to time an isolate's first call. */
export function forgetOpenings() {
  dayStarts = new Map();
  hoursOpenings = new WeakMap();
}

/** The dates kept of one zone (and hours object), made on first use and emptied when full. */
function datesOf<V>(byZone: Map<string, Map<LocalDate, V>>, timeZone: string): Map<LocalDate, V> {
  let dates = byZone.get(timeZone);
  if (dates === undefined) {
    dates = new Map();
    byZone.set(timeZone, dates);
  } else if (dates.size >= DATES_KEPT) dates.clear();
  return dates;
}

/** The instant local `date` starts in `timeZone` (localToInstant at 00:00), remembered. */
export function dayStart(date: LocalDate, timeZone: string): number {
  const dates = datesOf(dayStarts, timeZone);
  let start = dates.get(date);
  if (start === undefined) {
    start = localToInstant(date, 0, timeZone);
    dates.set(date, start);
  }
  return start;
}

/**
 * [opening, closing) instants of each interval of `hours` on local `date` in
 * `timeZone`, closed dates aside; remembered per hours object, so the array
 * is shared: read it, never change it.
 */
export function hoursOn(hours: WeeklyHours, timeZone: string, date: LocalDate): SlotTimes[] {
  let byZone = hoursOpenings.get(hours);
  if (byZone === undefined) {
    byZone = new Map();
    hoursOpenings.set(hours, byZone);
  }
  const dates = datesOf(byZone, timeZone);
  let openings = dates.get(date);
  if (openings === undefined) {
    const intervals: Interval[] = hours[WEEKDAYS[weekday(date) - 1]!] ?? [];
    openings = intervals.map(([open, close]) => ({
      start: localToInstant(date, minutesOf(open), timeZone),
      end: localToInstant(date, minutesOf(close), timeZone),
    }));
    dates.set(date, openings);
  }
  return openings;
}

/** [opening, closing) instants of each interval of local `date`; none on a closed date (shared: hoursOn). */
export function openingsOn(schedule: Schedule, date: LocalDate): SlotTimes[] {
  if (schedule.closedDates.length > 0 && schedule.closedDates.includes(dateString(date))) return [];
  return hoursOn(schedule.weeklyHours, schedule.timeZone, date);
}

/**
 * Every slot of the weekly hours on open dates whose start is in [from, until),
 * ascending, ignoring bookings, notice and horizon. Slots start at an opening
 * instant and every slotMinutes of elapsed time after it while they fit before
 * the closing instant, so each slot lasts exactly slotMinutes, DST or not.
 */
export function* candidateSlots(schedule: Schedule, from: number, until: number): Generator<GridSlot> {
  const slotMs = schedule.slotMinutes * MINUTE;
  // A slot of local date D starts on D (opening ≥ D's midnight, end ≤ D+1's),
  // so the scan starts at the local date of `from`.
  for (let date = localDateOf(from, schedule.timeZone); dayStart(date, schedule.timeZone) < until; date++) {
    for (const opening of openingsOn(schedule, date)) {
      const skip = Math.max(0, Math.ceil((from - opening.start) / slotMs));
      for (let start = opening.start + skip * slotMs; start + slotMs <= opening.end && start < until; start += slotMs) {
        yield { start, end: start + slotMs, closing: opening.end };
      }
    }
  }
}

/** The last local date: a slot ending after it could not be written (toISOString gives `+010000-…`). */
const LAST_DATE = Math.floor(MAX_INSTANT / (1440 * MINUTE));

/** Whether a slot ending at `end` has both forms writable: UTC and local both within year 9999. */
export const writable = (end: number, timeZone: string) =>
  end <= MAX_INSTANT && localDateOf(end, timeZone) <= LAST_DATE;

/** The slot starting exactly at `at`, and whether `at` falls inside opening hours at all. */
export function slotAt(schedule: Schedule, at: number): { slot: GridSlot | null; inHours: boolean } {
  const slotMs = schedule.slotMinutes * MINUTE;
  const date = localDateOf(at, schedule.timeZone);
  let inHours = false;
  for (const opening of openingsOn(schedule, date)) {
    if (at < opening.start || at >= opening.end) continue;
    inHours = true;
    if ((at - opening.start) % slotMs === 0 && at + slotMs <= opening.end && writable(at + slotMs, schedule.timeZone))
      return { slot: { start: at, end: at + slotMs, closing: opening.end }, inHours };
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
): {
  slot: GridSlot | null;
  reason: "in_the_past" | "beyond_horizon" | "closed" | "not_a_slot_start" | "too_soon" | null;
} {
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

/** [start, end) as the API writes times: UTC and the org's wall clock. */
export const timesView = (start: number, end: number, timeZone: string) => ({
  start: toIso(start),
  end: toIso(end),
  localStart: localIso(start, timeZone),
  localEnd: localIso(end, timeZone),
});

/** What a slot object says of its visit: its service and arrival window (none by default). */
export interface SlotService {
  serviceId: string | null;
  windowMs: number;
}

const NO_SERVICE: SlotService = { serviceId: null, windowMs: 0 };

/** The arrival window of a visit starting at `start`: null when it promises an exact time. */
export const arrivalWindowView = (start: number, windowMs: number, timeZone: string) =>
  windowMs > 0 ? timesView(start, start + windowMs, timeZone) : null;

/** The slot object (docs/api.md, "Slot objects"). */
export function slotView(slot: Slot, timeZone: string, service: SlotService = NO_SERVICE): SlotOut {
  return {
    start: toIso(slot.start),
    end: toIso(slot.end),
    localStart: localIso(slot.start, timeZone),
    localEnd: localIso(slot.end, timeZone),
    remaining: slot.remaining,
    serviceId: service.serviceId,
    arrivalWindow: arrivalWindowView(slot.start, service.windowMs, timeZone),
  };
}
