// Visits of services, done by technicians where they work (docs/api.md,
// "Services and technicians"): which service a request means, which
// technicians may take it, and, for each candidate start, how many places are
// left. Pure: callers pass the catalogue, the visits of the window and `now`.
import { MINUTE } from "../lib/datetime";
import { covers, offOn, qualified } from "./eligibility";
import { overlaps } from "./overlap";
import type { Schedule, WeeklyHours } from "./schedule";
import {
  assessSlot,
  type Booking,
  bookableWindow,
  candidateSlots,
  hoursOn,
  type Reason,
  type Slot,
  type SlotTimes,
  writable,
} from "./slots";
import { dateString, localDateOf } from "./zone";

export interface Service {
  id: string;
  name: string;
  durationMinutes: number;
  bufferMinutes: number;
  arrivalWindowMinutes: number;
  skills: string[];
  keywords: string[];
  isDefault: boolean;
  active: boolean;
}

export interface Technician {
  id: string;
  name: string;
  skills: string[];
  /** Normalised prefixes (normalisePostalCode); empty: everywhere. */
  postalCodes: string[];
  /** null: the org's. */
  weeklyHours: WeeklyHours | null;
  daysOff: string[];
  active: boolean;
}

/** An org's services and technicians, inactive ones too. */
export interface Catalogue {
  services: Service[];
  technicians: Technician[];
}

export const EMPTY_CATALOGUE: Catalogue = { services: [], technicians: [] };

/** What one visit takes: its length, the buffer after it, its arrival window, and the skills it needs. */
export interface Visit {
  serviceId: string | null;
  durationMs: number;
  bufferMs: number;
  windowMs: number;
  skills: string[];
}

/** The visit of `service`; with none, the slot of the schedule (no buffer, no window, no skills). */
export const visitOf = (schedule: Schedule, service: Service | null): Visit =>
  service
    ? {
        serviceId: service.id,
        durationMs: service.durationMinutes * MINUTE,
        bufferMs: service.bufferMinutes * MINUTE,
        windowMs: service.arrivalWindowMinutes * MINUTE,
        skills: service.skills,
      }
    : { serviceId: null, durationMs: schedule.slotMinutes * MINUTE, bufferMs: 0, windowMs: 0, skills: [] };

/**
 * The service a request means: `serviceId` (undefined when it names no
 * active service of the org: the caller answers not_found), else the one
 * active service with a keyword equal to `insectName` (trimmed, any case),
 * else the default, else null.
 */
export function chooseService(
  services: Service[],
  { serviceId, insectName }: { serviceId?: string | null; insectName?: string | null },
): Service | null | undefined {
  const active = services.filter((s) => s.active);
  if (serviceId != null) return active.find((s) => s.id === serviceId);
  const said = insectName?.trim().toLowerCase();
  const named = said ? active.filter((s) => s.keywords.some((k) => k.trim().toLowerCase() === said)) : [];
  if (named.length === 1) return named[0]!;
  return active.find((s) => s.isDefault) ?? null;
}

/** A postal code as prefixes are compared with it: no spaces or "-", upper case. */
export const normalisePostalCode = (code: string): string => code.replace(/[\s-]/g, "").toUpperCase();

export type FleetReason = "out_of_service_area" | "no_qualified_technician";

/**
 * Who may take a visit needing `skills` at `postalCode` (normalised; null:
 * anywhere): the eligible active technicians, ordered by id, or why none is.
 * With no active technician at all the org is in crew mode (`crew`).
 */
export function fleetFor(technicians: Technician[], skills: string[], postalCode: string | null): Fleet {
  // A request asks this of the same catalogue two or three times, and so does
  // the org's next request while its key is cached (src/middleware/auth.ts):
  // kept per technicians array, for at most FLEETS_KEPT places and skill sets.
  let kept = fleets.get(technicians);
  if (kept === undefined) {
    kept = new Map();
    fleets.set(technicians, kept);
  } else if (kept.size >= FLEETS_KEPT) kept.clear();
  const key = skills.length === 0 ? (postalCode ?? "") : `${postalCode ?? ""}\u0000${skills.join("\u0000")}`;
  let fleet = kept.get(key);
  if (fleet === undefined) {
    fleet = fleetOf(technicians, skills, postalCode);
    kept.set(key, fleet);
  }
  return fleet;
}

/** Who may take a visit, or why none may, or crew mode (fleetFor). Shared between requests: read-only. */
export type Fleet = Readonly<
  { crew: true } | { crew: false; eligible: readonly Technician[]; reason: FleetReason | null }
>;

const FLEETS_KEPT = 100;
const fleets = new WeakMap<Technician[], Map<string, Fleet>>();

function fleetOf(technicians: Technician[], skills: string[], postalCode: string | null): Fleet {
  const active = technicians.filter((t) => t.active);
  if (active.length === 0) return { crew: true };
  const covering = active.filter((t) => covers(t, postalCode));
  const eligible = covering
    .filter((t) => qualified(t, skills))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const reason =
    covering.length === 0 ? "out_of_service_area" : eligible.length === 0 ? "no_qualified_technician" : null;
  return { crew: false, eligible, reason };
}

/** A request for places: the visit, where, and who may do it. */
export interface VisitRequest {
  schedule: Schedule;
  visit: Visit;
  /** The org's technicians (inactive ones are ignored); none active: crew mode. */
  technicians: Technician[];
  /** Normalised; null when the caller gave none. */
  postalCode: string | null;
}

/**
 * A counter of places for visits of `request` starting at given instants, to be
 * asked in ascending order. `bookings` must be sorted by start and hold every
 * visit whose occupied span overlaps those of the asked starts; none occupies
 * longer than `maxBookingMs`, which bounds the scan.
 *
 * Crew mode: capacity minus the most visits occupying any instant of the
 * visit's occupied span. Technician mode: the eligible technicians on duty
 * for the whole visit with no visit of theirs occupying its span. Whether
 * the start itself can be booked at all is assessVisit's.
 */
export function placesCounter(request: VisitRequest, bookings: Booking[], maxBookingMs: number) {
  const { schedule, visit } = request;
  const fleet = fleetFor(request.technicians, visit.skills, request.postalCode);
  const duty = dutyRoster(schedule);
  let low = 0;
  let high = 0;
  // The technicians of the visits occupying the span, in one array kept across
  // starts: a scan asks this of every candidate start, for every technician.
  const busy: (string | null | undefined)[] = [];
  return (start: number): number => {
    const span = { start, end: start + visit.durationMs + visit.bufferMs };
    while (low < bookings.length && bookings[low]!.startsAt <= span.start - maxBookingMs) low++;
    while (high < bookings.length && bookings[high]!.startsAt < span.end) high++;
    if (fleet.crew) {
      const overlapping: Booking[] = [];
      for (let i = low; i < high; i++) if (overlaps(bookings[i]!, span)) overlapping.push(bookings[i]!);
      return Math.max(0, schedule.capacity - peak(overlapping, span.start));
    }
    busy.length = 0;
    for (let i = low; i < high; i++) if (overlaps(bookings[i]!, span)) busy.push(bookings[i]!.technicianId);
    const end = start + visit.durationMs;
    let left = 0;
    for (const t of fleet.eligible) if (!busy.includes(t.id) && duty(t, start, end)) left++;
    return left;
  };
}

/**
 * The most visits occupying one instant at or after `from`, of visits that
 * all occupy some instant at or after it: the count rises only where one
 * starts, so those instants (and `from`) are the only ones to look at.
 */
function peak(visits: Booking[], from: number): number {
  let most = 0;
  for (const at of [from, ...visits.map((v) => v.startsAt).filter((s) => s > from)]) {
    const instant = { start: at, end: at + 1 };
    let here = 0;
    for (const v of visits) if (overlaps(v, instant)) here += v.count ?? 1;
    most = Math.max(most, here);
  }
  return most;
}

/**
 * Whether a technician is on duty for all of [start, end): inside one
 * interval of their weekly hours (or the org's) on the local date of `start`,
 * which is not a day off of theirs. A scan asks about many technicians at
 * each start and many starts of few dates, so the roster keeps the last
 * start's local date, and hoursOn each hours object's openings per date.
 */
export function dutyRoster(schedule: Schedule) {
  const { timeZone } = schedule;
  let lastStart = Number.NaN;
  let date = Number.NaN;
  // The date as days off are written, made once a date and only if a technician has some.
  let day: string | undefined;
  return (technician: Technician, start: number, end: number): boolean => {
    if (start !== lastStart) {
      lastStart = start;
      const next = localDateOf(start, timeZone);
      if (next !== date) {
        date = next;
        day = undefined;
      }
    }
    if (technician.daysOff.length > 0) {
      day ??= dateString(date);
      if (offOn(technician, day)) return false;
    }
    // The openings of the hours object on that date (hoursOn keeps them).
    for (const o of hoursOn(technician.weeklyHours ?? schedule.weeklyHours, timeZone, date))
      if (o.start <= start && end <= o.end) return true;
    return false;
  };
}

/**
 * The technicians who may take a visit of `request` starting at `start`, in the
 * order the booking assigns them: eligible, on duty, free for the span; the
 * fewest visits starting on that local day first (`dayBookings`: the
 * scheduled visits of that day, one per visit), ties by id. Empty in crew mode.
 */
export function assignmentOrder(
  request: VisitRequest,
  bookings: Booking[],
  start: number,
  dayBookings: Booking[],
): Technician[] {
  const { visit } = request;
  const fleet = fleetFor(request.technicians, visit.skills, request.postalCode);
  if (fleet.crew) return [];
  const duty = dutyRoster(request.schedule);
  const span = { start, end: start + visit.durationMs + visit.bufferMs };
  const busy = new Set(bookings.filter((b) => overlaps(b, span)).map((b) => b.technicianId));
  const load = (t: Technician) => dayBookings.filter((b) => b.technicianId === t.id).length;
  return fleet.eligible
    .filter((t) => !busy.has(t.id) && duty(t, start, start + visit.durationMs))
    .map((t) => ({ t, load: load(t) }))
    .sort((a, b) => a.load - b.load || (a.t.id < b.t.id ? -1 : 1))
    .map(({ t }) => t);
}

export interface SlotQuery {
  request: VisitRequest;
  /** Sorted by start; every visit occupying an instant of a span that starts in [from, until). */
  bookings: Booking[];
  maxBookingMs: number;
  now: number;
  from: number;
  limit: number;
  /** Consider only starts before this (the end of the bookings read); the horizon otherwise. */
  until?: number;
}

/** The first `limit` bookable starts at or after `from` (lifted to now + notice), ascending, with their places. */
export function findBookable(query: SlotQuery): Slot[] {
  const { request } = query;
  const { schedule, visit } = request;
  const found: Slot[] = [];
  const fleet = fleetFor(request.technicians, visit.skills, request.postalCode);
  if (query.limit <= 0 || (!fleet.crew && fleet.reason)) return found;
  const window = bookableWindow(schedule, query.now);
  const until = Math.min(window.until, query.until ?? Number.POSITIVE_INFINITY);
  const places = placesCounter(request, query.bookings, query.maxBookingMs);
  for (const slot of candidateSlots(schedule, Math.max(query.from, window.from), until)) {
    const end = slot.start + visit.durationMs;
    if (fleet.crew && end > slot.closing) continue;
    const left = places(slot.start);
    if (left > 0 && found.push({ start: slot.start, end, remaining: left }) >= query.limit) break;
  }
  return found;
}

/**
 * The visit of `request` starting exactly at `at` (null when `at` is no slot
 * start of an open date), whether it fits its day (a crew visit must end by
 * its interval's closing; a technician's hours are counted with the places),
 * and why it cannot be booked, places aside (the caller adds `fully_booked`),
 * in the order docs/api.md gives ("Check").
 */
export function assessVisit(
  request: VisitRequest,
  now: number,
  at: number,
): { slot: SlotTimes | null; fits: boolean; reason: Exclude<Reason, "fully_booked"> | null } {
  const { schedule, visit } = request;
  const { slot: grid, reason } = assessSlot(schedule, now, at);
  const end = at + visit.durationMs;
  const slot = grid && writable(end, schedule.timeZone) ? { start: at, end } : null;
  const fleet = fleetFor(request.technicians, visit.skills, request.postalCode);
  const fits = slot !== null && (!fleet.crew || end <= grid!.closing);
  if (reason !== null && reason !== "too_soon") return { slot, fits, reason };
  if (!slot) return { slot, fits, reason: "not_a_slot_start" };
  if (!fits) return { slot, fits, reason: "closed" };
  if (!fleet.crew && fleet.reason) return { slot, fits, reason: fleet.reason };
  return { slot, fits, reason };
}

/**
 * Who may be assigned a visit of `request` starting at `start`, visits aside:
 * the eligible technicians on duty for it, by id; null in crew mode. The
 * booking statement then takes the first of them free, fewest visits first.
 */
export function onDutyFor(request: VisitRequest, start: number): Technician[] | null {
  const fleet = fleetFor(request.technicians, request.visit.skills, request.postalCode);
  if (fleet.crew) return null;
  const duty = dutyRoster(request.schedule);
  return fleet.eligible.filter((t) => duty(t, start, start + request.visit.durationMs));
}
