// Service plans (docs/api.md, "Plans"): when each visit of a plan is due, and where
// a due visit goes. Pure: callers pass the org's schedule and technicians
// (the engine's VisitRequest, visits.ts), the visits and holds around the due date,
// and `now`. The candidates are the engine's own (findBookable), and the
// technician the engine's assignment rule (assignmentOrder): this module
// adds only the calendar of due dates and the order of preference.
import { MINUTE } from "../lib/datetime";
import { minutesOf, type Schedule } from "./schedule";
import type { Booking } from "./slots";
import { assignmentOrder, findBookable, fleetFor, type VisitRequest } from "./visits";
import { dateString, type LocalDate, localDateOf, localToInstant } from "./zone";

const DAY = 1440 * MINUTE;

/** How often a plan's visits come: every `count` weeks or months. */
export interface Every {
  count: number;
  unit: "week" | "month";
}

/** How many local dates either side of the due date a due visit may move: due − 3 … due + 3. */
export const SLACK_DAYS = 3;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^([01]\d|2[0-3]):[0-5]\d$/;

/** The local date of year, month (1–12) and day; day 0 is the last of the month before. */
function dayNumber(year: number, month: number, day: number): LocalDate {
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not map years 0–99 to 1900–1999.
  date.setUTCFullYear(year, month - 1, day);
  return date.getTime() / DAY;
}

/** The year, month and day of a `YYYY-MM-DD` that names a real date; a RangeError otherwise. */
function parseDate(text: string): [number, number, number] {
  const m = DATE.exec(text);
  const parts = m ? ([Number(m[1]), Number(m[2]), Number(m[3])] as [number, number, number]) : null;
  if (!parts || dateString(dayNumber(...parts)) !== text) throw new RangeError(`not a date YYYY-MM-DD: ${text}`);
  return parts;
}

/**
 * The local date (`YYYY-MM-DD`) visit `k` of a plan is due (k = 0 is the
 * first visit, due on `firstDate`): `firstDate` plus k × `every`. Months are
 * counted from `firstDate` each time, never chained from the visit before:
 * the same day of the month, clamped to the month's last day, so a plan first
 * due Jan 31 monthly is due Feb 28 (Feb 29 in a leap year), then Mar 31.
 * Dates only: no zone is involved until dueStart gives the instant.
 */
export function dueDate(firstDate: string, every: Every, k: number): string {
  const [year, month, day] = parseDate(firstDate);
  if (!Number.isSafeInteger(k) || k < 0 || !Number.isSafeInteger(every.count) || every.count < 1)
    throw new RangeError(`not a visit of a plan: k ${k}, every ${every.count} ${every.unit}`);
  if (every.unit === "week") return dateString(dayNumber(year, month, day) + 7 * every.count * k);
  const months = month - 1 + every.count * k;
  const [toYear, toMonth] = [year + Math.floor(months / 12), (months % 12) + 1];
  const lastDay = dayNumber(toYear, toMonth + 1, 0) - dayNumber(toYear, toMonth, 1) + 1;
  return dateString(dayNumber(toYear, toMonth, Math.min(day, lastDay)));
}

/**
 * The instant a visit due on local `date` (`YYYY-MM-DD`) at `localTime`
 * (`"HH:MM"`, the plan's) starts, in `timeZone`: read as the schedule reads
 * its opening times (docs/api.md, "The schedule"; zone.ts localToInstant): a time in a DST
 * gap moves forward by the gap, an ambiguous time takes the earlier instant.
 */
export function dueStart(date: string, localTime: string, timeZone: string): number {
  if (!TIME.test(localTime)) throw new RangeError(`not a local time HH:MM: ${localTime}`);
  return localToInstant(dayNumber(...parseDate(date)), minutesOf(localTime), timeZone);
}

/**
 * The starts a visit due on local `date` may take: [the start of local date
 * due − 3, the start of due + 4), the instants of the local dates due − 3 …
 * due + 3 in `timeZone`. placeDueVisit needs every visit and hold occupying
 * an instant of [start, end + the visit's duration and buffer).
 */
export function dueWindow(date: string, timeZone: string): { start: number; end: number } {
  const due = dayNumber(...parseDate(date));
  return {
    start: localToInstant(due - SLACK_DAYS, 0, timeZone),
    end: localToInstant(due + SLACK_DAYS + 1, 0, timeZone),
  };
}

/** How far ahead a plan's visits are decided: 14 days, or the org's horizon when shorter (docs/api.md, "Plans"). */
const LOOKAHEAD_DAYS = 14;
export const lookaheadDays = (schedule: Schedule) => Math.min(LOOKAHEAD_DAYS, schedule.horizonDays);

/** A `YYYY-MM-DD` as a local date (days since 1970-01-01). */
const dayOf = (date: string): LocalDate => Date.parse(`${date}T00:00:00Z`) / DAY;

/** Whether a visit due on local `date` may be decided at `now`: due on or before the org's local today + the look-ahead. */
export const decidable = (date: string, schedule: Schedule, now: number) =>
  dayOf(date) <= localDateOf(now, schedule.timeZone) + lookaheadDays(schedule);

/** The instant a visit due on `date` becomes decidable: the start of the local day the look-ahead before it. */
export const decideAtOf = (date: string, schedule: Schedule) =>
  localToInstant(dayOf(date) - lookaheadDays(schedule), 0, schedule.timeZone);

/** What a plan needs to know of itself to say what comes after its decided visits (its stored columns). */
export interface Cadence {
  everyCount: number;
  everyUnit: Every["unit"];
  /** How many visits in all; null: until cancelled. */
  visits: number | null;
  firstVisitDate: string;
}

export const everyOf = (plan: Cadence): Every => ({ count: plan.everyCount, unit: plan.everyUnit });

/**
 * A plan once `made` visits are decided: completed when that is all its
 * visits, else active with the next visit's due date and the instant it
 * becomes decidable.
 */
export function afterDecided(plan: Cadence, made: number, schedule: Schedule) {
  if (plan.visits !== null && made >= plan.visits)
    return { status: "completed" as const, visitsMade: made, nextDueDate: null, decideAt: null };
  const next = dueDate(plan.firstVisitDate, everyOf(plan), made);
  return { status: "active" as const, visitsMade: made, nextDueDate: next, decideAt: decideAtOf(next, schedule) };
}

/** A plan's due visit, and what there is around it. */
export interface DueVisit {
  /**
   * The engine's request for places (visits.ts VisitRequest): the org's schedule,
   * the visit of the plan's service, the org's technicians (inactive ones
   * too), and the plan's postal code, normalised.
   */
  request: VisitRequest;
  /** The plan's technician (its first visit's); null in crew mode. One no longer eligible is passed over. */
  technicianId: string | null;
  /** The local due date (`YYYY-MM-DD`, dueDate's) and the plan's `localTime` (`"HH:MM"`). */
  dueDate: string;
  localTime: string;
  now: number;
  /**
   * The scheduled visits occupying an instant of the window (dueWindow, to
   * the end of the last start's span), one entry per distinct times and
   * technician with its `count`, in any order. Their occupancy counts, and
   * so does their number per technician and local day (the assignment rule).
   */
  visits: Booking[];
  /** The live holds occupying an instant of the window: they take places, but are no technician's visits of the day. */
  held: Booking[];
  /** The longest span any visit or hold of the org occupies, in ms (findBookable's bound). */
  maxBookingMs: number;
}

/** Where a due visit goes: its start, and its technician (null in crew mode). */
export interface DuePlacement {
  start: number;
  technicianId: string | null;
}

/**
 * Where a plan's due visit goes (docs/api.md, "Plans"),
 * or null when it goes nowhere (the office is told: `plan.visit_unplaced`).
 *
 * Candidates are the starts available-appointments would list for the
 * plan's service and postal code (findBookable: notice, horizon, opening
 * hours, closed dates, and a technician eligible, on duty, not off and free,
 * or a crew free) on the local dates due − 3 … due + 3. The order of
 * preference — the due start with the plan's technician, the due start with
 * another, else the candidate nearest in time to the due start with the
 * plan's technician when free at it — is one rule: the candidate nearest the
 * due start (the due start itself when it is one; on a tie the earlier), with
 * the plan's technician when free at it, else the technician the booking
 * assigns (assignmentOrder: fewest visits that local day, then by id).
 */
export function placeDueVisit(input: DueVisit): DuePlacement | null {
  const { request, now, maxBookingMs } = input;
  const { timeZone } = request.schedule;
  const due = dueStart(input.dueDate, input.localTime, timeZone);
  const window = dueWindow(input.dueDate, timeZone);
  const bookings = [...input.visits, ...input.held].sort((a, b) => a.startsAt - b.startsAt);
  const candidates = findBookable({
    request,
    bookings,
    maxBookingMs,
    now,
    from: window.start,
    until: window.end,
    limit: Number.POSITIVE_INFINITY,
  });
  let nearest: number | null = null;
  // Ascending: a later candidate replaces the one kept only when strictly nearer, so a tie keeps the earlier.
  for (const { start } of candidates)
    if (nearest === null || Math.abs(start - due) < Math.abs(nearest - due)) nearest = start;
  if (nearest === null) return null;
  if (fleetFor(request.technicians, request.visit.skills, request.postalCode).crew)
    return { start: nearest, technicianId: null };
  const day = localDateOf(nearest, timeZone);
  const dayVisits = input.visits
    .filter((v) => localDateOf(v.startsAt, timeZone) === day)
    .flatMap((v) => Array.from({ length: v.count ?? 1 }, () => v));
  const free = assignmentOrder(request, bookings, nearest, dayVisits);
  const chosen = free.find((t) => t.id === input.technicianId) ?? free[0];
  // A candidate has a technician free (findBookable counted them as assignmentOrder lists them).
  return chosen ? { start: nearest, technicianId: chosen.id } : null;
}
