// The visit engine (src/scheduling/visits.ts) against a deliberately naive
// oracle, over random orgs: random services (15–480 minutes, buffers, arrival
// windows, skills), technicians (skills, postal prefixes, own hours, days off)
// or crews, visits, postal codes and DST dates. The oracle counts occupancy
// minute by minute per technician (or for the whole crew) and finds duty
// hours with Temporal; the two must agree on every start's `available`,
// `reason` and `remaining`, and on what the scan lists.
import fc from "fast-check";
import { Temporal } from "temporal-polyfill";
import { describe, expect, it } from "vitest";
import type { Interval, Schedule, WeeklyHours } from "../../src/scheduling/schedule";
import { WEEKDAYS } from "../../src/scheduling/schedule";
import { assessSlot, type Booking, candidateSlots, type Reason } from "../../src/scheduling/slots";
import {
  assessVisit,
  findBookable,
  normalisePostalCode,
  placesCounter,
  type Service,
  type Technician,
  type VisitRequest,
  visitOf,
} from "../../src/scheduling/visits";
import { weeklyHours, ZONES } from "../support/schedules";
import { MINUTE } from "../support/time";

const RUNS = 10_000;

// Instants near DST changes of the zones, so that random `now`s meet them often.
const ANCHORS = ["2026-03-08T07:00:00Z", "2026-03-29T01:00:00Z", "2026-04-04T15:00:00Z", "2026-11-01T06:00:00Z"].map(
  Date.parse,
);
const SKILLS = ["termite-license", "rodent"];
const PREFIXES = ["1", "10", "112", "SW1", "2"];
const POSTAL_CODES = ["10001", "11201", "sw1a 1aa", "20500", "9"];

const service = fc.record({
  durationMinutes: fc.integer({ min: 3, max: 96 }).map((n) => n * 5),
  bufferMinutes: fc.constantFrom(0, 0, 15, 30, 60),
  arrivalWindowMinutes: fc.constantFrom(0, 60, 120),
  skills: fc.subarray(SKILLS),
});

const technician = fc.record({
  skills: fc.subarray(SKILLS),
  postalCodes: fc.subarray(PREFIXES, { maxLength: 2 }),
  weeklyHours: fc.option(weeklyHours, { freq: 2 }),
  daysOff: fc.uniqueArray(fc.integer({ min: -1, max: 4 }), { maxLength: 2 }),
  active: fc.constantFrom(true, true, true, false),
});

const scenario = fc.record({
  schedule: fc.record({
    timeZone: fc.constantFrom(...ZONES),
    slotMinutes: fc.constantFrom(15, 30, 60, 90),
    capacity: fc.integer({ min: 1, max: 3 }),
    minNoticeMinutes: fc.integer({ min: 0, max: 600 }),
    horizonDays: fc.integer({ min: 1, max: 4 }),
    weeklyHours,
  }),
  closedDays: fc.uniqueArray(fc.integer({ min: 0, max: 4 }), { maxLength: 1 }),
  now: fc
    .tuple(fc.constantFrom(...ANCHORS), fc.integer({ min: -2 * 1440, max: 2 * 1440 }))
    .map(([anchor, minutes]) => anchor + minutes * MINUTE),
  service: fc.option(service, { freq: 4 }),
  technicians: fc.array(technician, { maxLength: 4 }),
  postalCode: fc.option(fc.constantFrom(...POSTAL_CODES)),
  // Visits: on a candidate start or on any minute, of some length, with a technician or none.
  visits: fc.array(
    fc.record({
      pick: fc.nat(),
      offMinutes: fc.constantFrom(0, 0, 0, 10, -35),
      minutes: fc.integer({ min: 1, max: 60 }).map((n) => n * 5),
      technician: fc.nat({ max: 4 }),
      count: fc.constantFrom(1, 1, 2),
    }),
    { maxLength: 10 },
  ),
  picks: fc.array(
    fc.oneof(fc.record({ candidate: fc.nat() }), fc.record({ minutes: fc.integer({ min: -60, max: 5 * 1440 }) })),
    {
      minLength: 1,
      maxLength: 3,
    },
  ),
});

const dateOf = (now: number, days: number, timeZone: string) =>
  Temporal.Instant.fromEpochMilliseconds(now + days * 1440 * MINUTE)
    .toZonedDateTimeISO(timeZone)
    .toPlainDate()
    .toString();

/** [opening, closing) instants of `hours` on the local date of `at`, by Temporal's "compatible" rule. */
function openingsAt(hours: WeeklyHours, at: number, timeZone: string): [number, number][] {
  const date = Temporal.Instant.fromEpochMilliseconds(at).toZonedDateTimeISO(timeZone).toPlainDate();
  const intervals: Interval[] = hours[WEEKDAYS[date.dayOfWeek - 1]!] ?? [];
  const instant = (hhmm: string) => {
    const minutes = Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3));
    const day = minutes === 1440 ? date.add({ days: 1 }) : date;
    const time = minutes === 1440 ? "00:00" : hhmm;
    return Temporal.PlainDateTime.from(`${day.toString()}T${time}`)
      .toZonedDateTime(timeZone, { disambiguation: "compatible" })
      .toInstant().epochMilliseconds;
  };
  return intervals.map(([open, close]) => [instant(open), instant(close)]);
}

/** The oracle: is a visit starting at `t` available, why not, and how many places. */
function oracle(
  request: VisitRequest,
  visits: { start: number; until: number; technicianId: string | null }[],
  now: number,
  t: number,
): { reason: Reason | null; remaining: number; isStart: boolean } {
  const { schedule, visit } = request;
  const grid = assessSlot(schedule, now, t);
  const isStart = grid.slot !== null;
  const end = t + visit.durationMs;
  const spanEnd = end + visit.bufferMs;
  const active = request.technicians.filter((x) => x.active);
  // Minute by minute: does anything in `among` occupy any minute of the span?
  const occupancy = (among: typeof visits) => {
    let most = 0;
    for (let m = t; m < spanEnd; m += MINUTE) {
      let here = 0;
      for (const v of among) if (v.start <= m && m < v.until) here++;
      most = Math.max(most, here);
    }
    return most;
  };
  let reason: Reason | null = grid.reason;
  let remaining = 0;
  if (active.length === 0) {
    const closing = openingsAt(schedule.weeklyHours, t, schedule.timeZone).find(([o, c]) => o <= t && t < c)?.[1];
    const fits = closing !== undefined && end <= closing;
    if (isStart && !fits && (reason === null || reason === "too_soon")) reason = "closed";
    remaining = isStart && fits ? Math.max(0, schedule.capacity - occupancy(visits)) : 0;
  } else {
    const postal = request.postalCode;
    const covering = active.filter(
      (x) => postal === null || x.postalCodes.length === 0 || x.postalCodes.some((p) => postal.startsWith(p)),
    );
    const eligible = covering.filter((x) => visit.skills.every((s) => x.skills.includes(s)));
    if (isStart && (reason === null || reason === "too_soon")) {
      if (covering.length === 0) reason = "out_of_service_area";
      else if (eligible.length === 0) reason = "no_qualified_technician";
    }
    const localDate = Temporal.Instant.fromEpochMilliseconds(t).toZonedDateTimeISO(schedule.timeZone).toPlainDate();
    remaining = isStart
      ? eligible.filter(
          (x) =>
            !x.daysOff.includes(localDate.toString()) &&
            openingsAt(x.weeklyHours ?? schedule.weeklyHours, t, schedule.timeZone).some(
              ([o, c]) => o <= t && end <= c,
            ) &&
            occupancy(visits.filter((v) => v.technicianId === x.id)) === 0,
        ).length
      : 0;
  }
  if (reason === null && remaining === 0) reason = "fully_booked";
  return { reason, remaining, isStart };
}

describe("visit engine against a minute-by-minute oracle (property)", () => {
  it(`agrees on available, reason and remaining, and the scan lists exactly the available starts (${RUNS} orgs)`, () => {
    // What the cases met, by mode: so that a generator that stopped reaching a case fails the test.
    const seen = new Set<string>();
    fc.assert(
      fc.property(scenario, (s) => {
        const { timeZone } = s.schedule;
        const schedule: Schedule = {
          ...s.schedule,
          closedDates: s.closedDays.map((d) => dateOf(s.now, d, timeZone)),
        };
        const services: Service[] = s.service
          ? [{ id: "svc_1", name: "S", keywords: [], isDefault: true, active: true, ...s.service }]
          : [];
        const technicians: Technician[] = s.technicians.map((x, i) => ({
          id: `tech_${i}`,
          name: `T${i}`,
          skills: x.skills,
          postalCodes: x.postalCodes.map(normalisePostalCode),
          weeklyHours: x.weeklyHours,
          daysOff: x.daysOff.map((d) => dateOf(s.now, d, timeZone)),
          active: x.active,
        }));
        const request: VisitRequest = {
          schedule,
          visit: visitOf(schedule, services[0] ?? null),
          technicians,
          postalCode: s.postalCode === null ? null : normalisePostalCode(s.postalCode),
        };
        const crew = !technicians.some((x) => x.active);
        const horizonEnd = s.now + (schedule.horizonDays + 1) * 1440 * MINUTE;
        const candidates = [...candidateSlots(schedule, s.now - 1440 * MINUTE, horizonEnd)];
        // The visits, one per unit of `count` for the oracle, grouped as the database reads them for the engine.
        const visits = candidates.length
          ? s.visits.flatMap((v) => {
              const start = candidates[v.pick % candidates.length]!.start + v.offMinutes * MINUTE;
              const technicianId = crew ? null : (technicians[v.technician % technicians.length]?.id ?? null);
              return Array.from({ length: v.count }, () => ({
                start,
                until: start + v.minutes * MINUTE,
                technicianId,
              }));
            })
          : [];
        const bookings: Booking[] = [];
        for (const v of visits) {
          const same = bookings.find(
            (b) => b.startsAt === v.start && b.endsAt === v.until && b.technicianId === v.technicianId,
          );
          if (same) same.count = (same.count ?? 1) + 1;
          else bookings.push({ startsAt: v.start, endsAt: v.until, technicianId: v.technicianId, count: 1 });
        }
        bookings.sort((a, b) => a.startsAt - b.startsAt);
        const maxBookingMs = Math.max(schedule.slotMinutes, 300, 480 + 60) * MINUTE;

        for (const pick of s.picks) {
          const t =
            "candidate" in pick
              ? (candidates[pick.candidate % Math.max(1, candidates.length)]?.start ?? s.now)
              : Math.floor(s.now / MINUTE) * MINUTE + pick.minutes * MINUTE;
          const expected = oracle(request, visits, s.now, t);
          seen.add(`${crew ? "crew" : "technicians"} ${expected.reason} ${Math.min(expected.remaining, 2)}`);
          const assessed = assessVisit(request, s.now, t);
          const places = assessed.slot && assessed.fits ? placesCounter(request, bookings, maxBookingMs)(t) : 0;
          const reason = assessed.reason ?? (places > 0 ? null : "fully_booked");
          expect({ reason, remaining: places, isStart: assessed.slot !== null }).toEqual(expected);
          const listed = findBookable({ request, bookings, maxBookingMs, now: s.now, from: t, limit: 1 })[0];
          expect(listed?.start === t).toBe(expected.reason === null);
          if (listed?.start === t) expect(listed.remaining).toBe(expected.remaining);
        }
      }),
      { seed: 20261125, numRuns: RUNS },
    );
    for (const mode of ["crew", "technicians"])
      for (const outcome of ["null 1", "null 2", "fully_booked 0", "closed 0", "too_soon 1", "beyond_horizon 0"])
        expect(seen).toContain(`${mode} ${outcome}`);
    for (const outcome of ["out_of_service_area 0", "no_qualified_technician 0"])
      expect(seen).toContain(`technicians ${outcome}`);
  }, 300_000);
});
