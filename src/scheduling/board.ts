// The dispatch board's rows (docs/api.md, "The dispatch board"): who works a
// local date, when, and what each of them has that day. Pure: the caller
// passes the catalogue, the schedule and the day's visits and holds.
import { offOn } from "./eligibility";
import type { Schedule } from "./schedule";
import { openingsOn, type SlotTimes } from "./slots";
import type { Technician } from "./visits";
import { dateString, type LocalDate } from "./zone";

/** A visit or a hold as the board places it: by its technician (null in crew mode). */
export interface Placed {
  technicianId: string | null;
}

export interface BoardRow<V extends Placed, H extends Placed> {
  /** null: the crews (crew mode), or the visits no active technician has. */
  technician: Technician | null;
  duty: SlotTimes[];
  visits: V[];
  holds: H[];
}

/**
 * The intervals a technician works on local `date`: those of their weekly
 * hours (or the org's) on that date, none on a day off of theirs or a closed
 * date. The slot engine reads the same openings (openingsOn) and days off (offOn)
 * to decide whether they are on duty for a visit (dutyRoster), and offers
 * no start on a closed date.
 */
export function dutyOn(schedule: Schedule, technician: Technician, date: LocalDate): SlotTimes[] {
  if (offOn(technician, dateString(date))) return [];
  return openingsOn({ ...schedule, weeklyHours: technician.weeklyHours ?? schedule.weeklyHours }, date);
}

const byName = (a: Technician, b: Technician) => {
  const [x, y] = [a.name.toLowerCase(), b.name.toLowerCase()];
  return x < y ? -1 : x > y ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
};

export interface BoardDay<V extends Placed, H extends Placed> {
  schedule: Schedule;
  technicians: Technician[];
  date: LocalDate;
  /** The day's visits, in the order the rows list them (by start, then id). */
  visits: V[];
  /** The day's live holds, likewise. */
  holds: H[];
}

/**
 * The rows of a day: one per active technician, by name (any case) then id,
 * each with their duty, visits and holds; then, only when it has visits, a
 * row without a technician for visits of none or of an inactive one (and
 * holds of an inactive one). With no active technician (crew mode), one row
 * without a technician whose duty is the org's opening hours of the day.
 */
export function boardRows<V extends Placed, H extends Placed>(day: BoardDay<V, H>): BoardRow<V, H>[] {
  const { schedule, date, visits, holds } = day;
  const active = day.technicians.filter((t) => t.active).sort(byName);
  if (active.length === 0) return [{ technician: null, duty: openingsOn(schedule, date), visits, holds }];
  const rows: BoardRow<V, H>[] = active.map((technician) => ({
    technician,
    duty: dutyOn(schedule, technician, date),
    visits: [],
    holds: [],
  }));
  const rowOf = new Map(rows.map((row) => [row.technician!.id, row]));
  const unassigned: BoardRow<V, H> = { technician: null, duty: [], visits: [], holds: [] };
  for (const visit of visits) (rowOf.get(visit.technicianId ?? "") ?? unassigned).visits.push(visit);
  for (const hold of holds) (rowOf.get(hold.technicianId ?? "") ?? unassigned).holds.push(hold);
  return unassigned.visits.length > 0 ? [...rows, unassigned] : rows;
}
