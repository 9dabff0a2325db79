// `npm run bench:engine`: a unit benchmark of the pure slot engine
// (findBookable, src/scheduling/visits.ts), no database, no Worker. One org in
// America/New_York (weekdays 08:00–17:00, 60-minute slots, 30-day horizon,
// 120 minutes' notice), a 60-minute default service, and 1, 20 and 100
// technicians (varied postal prefixes, some with hours and days off of their
// own), then crew mode (no technician, capacity 3). Each has a week of visits
// booked, about half the technician-hours (half the places in crew mode).
// Times findBookable for the first 50 slots from Sunday evening before that
// week: warm-up, then many calls timed with performance.now(). Prints median
// and p95 ms per call and slots per ms, and whether 20 technicians' 50 slots
// take under 1 ms (issue goal: "the slot engine alone computes a week of 50
// slots for 20 technicians in under 1 ms"), with the zone caches warm and
// cold (see measure). Always exits 0.
import { performance } from "node:perf_hooks";
import type { Interval, Schedule, WeeklyHours } from "../../src/scheduling/schedule";
import { type Booking, candidateSlots, forgetOpenings } from "../../src/scheduling/slots";
import {
  findBookable,
  fleetFor,
  normalisePostalCode,
  type Service,
  type Technician,
  type VisitRequest,
  visitOf,
} from "../../src/scheduling/visits";
import { forgetZoneCaches } from "../../src/scheduling/zone";
import { seededRandom } from "../support/random";

const MINUTE = 60_000;
const DAY = 1440 * MINUTE;
const LIMIT = 50;
const GOAL_MS = 1;
const WARMUP_CALLS = 200;
const MIN_CALLS = 200;
const MAX_CALLS = 5000;
const BUDGET_MS = 1500;

const hours = (weekdays: Interval[], saturday: Interval[] = []): WeeklyHours => ({
  mon: weekdays,
  tue: weekdays,
  wed: weekdays,
  thu: weekdays,
  fri: weekdays,
  sat: saturday,
  sun: [],
});

const schedule: Schedule = {
  timeZone: "America/New_York",
  slotMinutes: 60,
  capacity: 1,
  minNoticeMinutes: 120,
  horizonDays: 30,
  weeklyHours: hours([["08:00", "17:00"]]),
  closedDates: [],
};

const service: Service = {
  id: "svc_general",
  name: "General pest control",
  durationMinutes: 60,
  bufferMinutes: 0,
  arrivalWindowMinutes: 0,
  skills: [],
  keywords: [],
  isDefault: true,
  active: true,
};

const POSTAL_CODE = normalisePostalCode("11201");
// Prefixes that cover 11201 ("" is everywhere), and two that do not.
const COVERING: string[][] = [[], ["1"], ["11"], ["112"], ["11201", "100"], ["112", "2"]];
const ELSEWHERE: string[][] = [["100"], ["2", "SW1"]];

// Sunday 2026-11-29 07:00 in New York; the booked week is Monday 11-30 to Friday 12-04.
const NOW = Date.parse("2026-11-29T12:00:00Z");
const WEEK_DAYS = ["2026-11-30", "2026-12-01", "2026-12-02", "2026-12-03", "2026-12-04"];

/** `n` technicians: one in five serves elsewhere, one in four has hours of their own, one in three a day off this week. */
function techniciansOf(n: number): Technician[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `tech_${String(i).padStart(3, "0")}`,
    name: `Technician ${i}`,
    skills: i % 2 === 0 ? ["termite-license"] : [],
    postalCodes: (i % 5 === 4 ? ELSEWHERE[i % ELSEWHERE.length]! : COVERING[i % COVERING.length]!).map(
      normalisePostalCode,
    ),
    weeklyHours:
      i % 4 === 1
        ? hours([["07:00", "15:00"]], [["08:00", "12:00"]])
        : i % 4 === 3
          ? hours([["10:00", "19:00"]])
          : null,
    daysOff: i % 3 === 2 ? [WEEK_DAYS[i % WEEK_DAYS.length]!] : [],
    active: true,
  }));
}

/** The org's slot starts of the booked week. */
const weekSlots = () => [...candidateSlots(schedule, NOW, NOW + 7 * DAY)];

/** About half of each technician's hours of the week booked, one-hour visits on the hour; sorted by start. */
function technicianBookings(technicians: Technician[]): Booking[] {
  const next = seededRandom(20261126);
  const bookings: Booking[] = [];
  for (const t of technicians) {
    // Their own hours are booked too, outside the org's grid.
    const own: Schedule = { ...schedule, weeklyHours: t.weeklyHours ?? schedule.weeklyHours, closedDates: t.daysOff };
    for (const slot of candidateSlots(own, NOW, NOW + 7 * DAY))
      if (next() < 0.5) bookings.push({ startsAt: slot.start, endsAt: slot.end, technicianId: t.id, count: 1 });
  }
  return bookings.sort((a, b) => a.startsAt - b.startsAt);
}

/** Crew mode: 0 to 3 visits on each slot of the week (half the places on average), grouped as D1 reads them. */
function crewBookings(capacity: number): Booking[] {
  const next = seededRandom(20261127);
  const bookings: Booking[] = [];
  for (const slot of weekSlots()) {
    const count = Math.floor(next() * (capacity + 1));
    if (count > 0) bookings.push({ startsAt: slot.start, endsAt: slot.end, technicianId: null, count });
  }
  return bookings;
}

interface Case {
  name: string;
  request: VisitRequest;
  bookings: Booking[];
  /** Technicians taking the visit (or crew capacity). */
  eligible: string;
}

function caseOf(name: string, technicians: Technician[], capacity = 1): Case {
  const s = { ...schedule, capacity };
  const request: VisitRequest = { schedule: s, visit: visitOf(s, service), technicians, postalCode: POSTAL_CODE };
  const fleet = fleetFor(technicians, request.visit.skills, request.postalCode);
  return {
    name,
    request,
    bookings: fleet.crew ? crewBookings(capacity) : technicianBookings(technicians),
    eligible: fleet.crew ? `crew of ${capacity}` : `${fleet.eligible.length} of ${technicians.length}`,
  };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/**
 * Median and p95 ms of findBookable over many calls after a warm-up. Warm:
 * the zone caches (src/scheduling/zone.ts: the zone's formatter and the
 * offsets of the days asked about) and the openings of the dates asked about
 * (src/scheduling/slots.ts, hoursOn) are filled, as in an isolate that served
 * the org before; cold: emptied before each call (outside the timing), as for
 * an isolate's first request (its code already compiled).
 */
function measure({ request, bookings }: Case, cold: boolean) {
  const query = { request, bookings, maxBookingMs: 8 * 60 * MINUTE, now: NOW, from: NOW, limit: LIMIT };
  let slots = findBookable(query);
  for (let i = 0; i < WARMUP_CALLS; i++) slots = findBookable(query);
  const times: number[] = [];
  const started = performance.now();
  while (times.length < MAX_CALLS && (times.length < MIN_CALLS || performance.now() - started < BUDGET_MS)) {
    if (cold) {
      forgetZoneCaches();
      forgetOpenings();
    }
    const t0 = performance.now();
    slots = findBookable(query);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const median = percentile(times, 50);
  const first = slots[0];
  const last = slots.at(-1);
  return {
    calls: times.length,
    median,
    p95: percentile(times, 95),
    slots: slots.length,
    days: first && last ? (last.start - first.start) / DAY : 0,
    slotsPerMs: slots.length / median,
  };
}

const cases = [
  caseOf("1 technician", techniciansOf(1)),
  caseOf("20 technicians", techniciansOf(20)),
  caseOf("100 technicians", techniciansOf(100)),
  caseOf("crew (capacity 3)", [], 3),
];

console.log(
  `findBookable, limit ${LIMIT}, ${schedule.timeZone} weekdays 08:00–17:00, 60-minute slots; node ${process.version}`,
);
const rows = cases.flatMap((c) =>
  [false, true].map((cold) => {
    const r = measure(c, cold);
    return {
      case: c.name,
      caches: cold ? "cold" : "warm",
      eligible: c.eligible,
      bookings: c.bookings.length,
      slots: r.slots,
      "span (days)": r.days.toFixed(1),
      calls: r.calls,
      "median ms": r.median.toFixed(3),
      "p95 ms": r.p95.toFixed(3),
      "slots/ms": r.slotsPerMs.toFixed(1),
      median: r.median,
    };
  }),
);
console.table(rows.map(({ median: _, ...shown }) => shown));
for (const twenty of rows.filter((r) => r.case === "20 technicians"))
  console.log(
    `20 technicians, ${twenty.slots} slots, ${twenty.caches} zone caches: median ${twenty.median.toFixed(3)} ms — ${
      twenty.median < GOAL_MS ? "UNDER" : "NOT under"
    } ${GOAL_MS} ms`,
  );
