// A technician's change without a stranded visit (docs/api.md,
// "Technicians"): which of their future visits a change strands, whether it
// could strand any, the window of bookings a move must see, and where each
// stranded visit goes. Pure: src/db/technicians.ts reads the visits and the
// bookings around them, and writes the moves.
import { MINUTE } from "../lib/datetime";
import { covers, offOn } from "./eligibility";
import type { Schedule } from "./schedule";
import type { Booking, SlotTimes } from "./slots";
import {
  assignmentOrder,
  type Catalogue,
  normalisePostalCode,
  type Service,
  type Technician,
  type VisitRequest,
} from "./visits";
import { dateString, localDateOf, localToInstant } from "./zone";

/** A scheduled visit as it was booked: its times, service, place and arrival window, and its technician. */
export interface BookedVisit {
  id: string;
  serviceId: string | null;
  technicianId: string | null;
  startsAt: number;
  endsAt: number;
  /** The end of its buffer. */
  occupiedUntil: number;
  arrivalWindowMinutes: number;
  /** As the caller gave it (trimmed). */
  postalCode: string | null;
}

/** What a visit needs of its technician: its local date, its service's skills, and its place (normalised). */
export interface Needs {
  date: string;
  skills: string[];
  postalCode: string | null;
}

/** A technician before and after a change. */
export interface TechnicianChange {
  before: Technician;
  after: Technician;
}

/** A visit moving to another technician. */
export interface Move<V extends BookedVisit = BookedVisit> {
  visit: V;
  to: string;
}

const dateOf = (instant: number, timeZone: string) => dateString(localDateOf(instant, timeZone));

/** What `visit` needs, its service's skills as they are now (a service may gain a skill after a booking). */
export function needsOf(visit: BookedVisit, services: Service[], timeZone: string): Needs {
  return {
    date: dateOf(visit.startsAt, timeZone),
    skills: services.find((s) => s.id === visit.serviceId)?.skills ?? [],
    postalCode: visit.postalCode === null ? null : normalisePostalCode(visit.postalCode),
  };
}

/**
 * Whether the change makes the technician unable to do a visit with these
 * needs, by one of the four things a change can take away. Only what the
 * change takes counts: a visit that already fell short (its service gained a
 * skill after it was booked) does not block an unrelated change.
 */
export function strands({ before, after }: TechnicianChange, needs: Needs): boolean {
  if (before.active && !after.active) return true;
  if (!offOn(before, needs.date) && offOn(after, needs.date)) return true;
  if (needs.skills.some((s) => before.skills.includes(s) && !after.skills.includes(s))) return true;
  return covers(before, needs.postalCode) && !covers(after, needs.postalCode);
}

/** The visits of `visits` (the technician's) that the change strands, in their order. */
export const stranded = <V extends BookedVisit>(
  change: TechnicianChange,
  visits: V[],
  services: Service[],
  timeZone: string,
): V[] => visits.filter((visit) => strands(change, needsOf(visit, services, timeZone)));

/** Whether the change takes anything away at all (so that some visit could be stranded by it). */
export function restricts({ before, after }: TechnicianChange): boolean {
  // Some code `before` covers that `after` does not: everywhere narrowed to
  // prefixes, or a prefix of before's that none of after's is a prefix of.
  const narrower =
    after.postalCodes.length > 0 &&
    (before.postalCodes.length === 0 || before.postalCodes.some((p) => !covers(after, p)));
  return (
    (before.active && !after.active) ||
    after.daysOff.some((d) => !offOn(before, d)) ||
    before.skills.some((s) => !after.skills.includes(s)) ||
    narrower
  );
}

/**
 * The span whose bookings a move of `visits` (sorted by start) must see:
 * from the start of the first one's local day to the end of the last one's
 * day or occupied span. What occupies an instant of it (overlapping) holds every
 * visit that could overlap one of them, and every visit starting on one of
 * their days (the assignment's count of the day).
 */
export function movesWindow(visits: BookedVisit[], timeZone: string): SlotTimes {
  const dayStart = (instant: number) => localToInstant(localDateOf(instant, timeZone), 0, timeZone);
  const dayEnd = (instant: number) => localToInstant(localDateOf(instant, timeZone) + 1, 0, timeZone);
  return {
    start: dayStart(visits[0]!.startsAt),
    end: Math.max(...visits.map((v) => Math.max(dayEnd(v.startsAt), v.occupiedUntil))),
  };
}

/**
 * Where each visit goes, in order: the first technician `assignmentOrder`
 * gives for it, counting the visits placed before it in this run as booked.
 * `catalogue.technicians` leaves out the technician the visits leave;
 * `around` is what occupies movesWindow: scheduled visits, and live holds.
 */
export function place<V extends BookedVisit>(
  visits: V[],
  catalogue: Catalogue,
  schedule: Schedule,
  around: { visits: Booking[]; held: Booking[] },
): { moves: Move<V>[]; unplaced: string[] } {
  // A live hold keeps its technician busy, but is not one of their visits of the day.
  const booked = [...around.visits];
  const moves: Move<V>[] = [];
  const unplaced: string[] = [];
  for (const visit of visits) {
    const needs = needsOf(visit, catalogue.services, schedule.timeZone);
    const request: VisitRequest = {
      schedule,
      // As booked: its own span and buffer, its service's skills now.
      visit: {
        serviceId: visit.serviceId,
        durationMs: visit.endsAt - visit.startsAt,
        bufferMs: visit.occupiedUntil - visit.endsAt,
        windowMs: visit.arrivalWindowMinutes * MINUTE,
        skills: needs.skills,
      },
      technicians: catalogue.technicians,
      postalCode: needs.postalCode,
    };
    const sameDay = booked.filter((b) => dateOf(b.startsAt, schedule.timeZone) === needs.date);
    const [chosen] = assignmentOrder(request, [...booked, ...around.held], visit.startsAt, sameDay);
    if (!chosen) {
      unplaced.push(visit.id);
      continue;
    }
    moves.push({ visit, to: chosen.id });
    booked.push({ startsAt: visit.startsAt, endsAt: visit.occupiedUntil, technicianId: chosen.id });
  }
  return { moves, unplaced };
}
