// Where a plan's due visit goes (src/scheduling/plans.ts, placeDueVisit)
// against a deliberately naive oracle, over random plans, orgs and calendars:
// due dates at month ends and around the DST changes of zones with whole,
// half-hour and midnight changes; local times in gaps and overlaps; services,
// technicians (skills, areas, own hours, days off) or crews; visits and holds,
// some on the due start. The oracle reads the calendar with Temporal, tries
// every minute of the seven local dates due − 3 … due + 3 by the rules of
// the schedule's and the technicians' rules (docs/api.md) written out again (slot grid, closed dates, notice,
// horizon, crews counted minute by minute, technicians on duty and free),
// then follows the plans' order of preference step by step.
import fc from "fast-check";
import { Temporal } from "temporal-polyfill";
import { describe, expect, it } from "vitest";
import { dueDate, dueStart, type Every, placeDueVisit } from "../../src/scheduling/plans";
import { type Schedule, WEEKDAYS, type WeeklyHours } from "../../src/scheduling/schedule";
import { type Booking, candidateSlots } from "../../src/scheduling/slots";
import { normalisePostalCode, type Technician, type VisitRequest, visitOf } from "../../src/scheduling/visits";
import { weeklyHours, ZONES } from "../support/schedules";
import { MINUTE } from "../support/time";

const RUNS = 10_000;
const DAY = 1440 * MINUTE;

// The clock changes of 2026 in the zones that have them (NY and London by an
// hour at night, Lord Howe by half an hour, Santiago at midnight, Chatham at
// 02:45): the local date, and a local time inside the gap or the overlap.
const CHANGES: { timeZone: string; date: string; inside: number }[] = [
  { timeZone: "America/New_York", date: "2026-03-08", inside: 150 }, // 02:00–03:00 does not exist
  { timeZone: "America/New_York", date: "2026-11-01", inside: 90 }, // 01:00–02:00 happens twice
  { timeZone: "Europe/London", date: "2026-03-29", inside: 90 },
  { timeZone: "Europe/London", date: "2026-10-25", inside: 90 },
  { timeZone: "Australia/Lord_Howe", date: "2026-04-05", inside: 105 }, // 01:30–02:00 twice
  { timeZone: "Australia/Lord_Howe", date: "2026-10-04", inside: 135 }, // 02:00–02:30 missing
  { timeZone: "America/Santiago", date: "2026-04-04", inside: 1410 }, // 23:00–24:00 twice
  { timeZone: "America/Santiago", date: "2026-09-06", inside: 30 }, // 00:00–01:00 missing
  { timeZone: "Pacific/Chatham", date: "2026-04-05", inside: 195 }, // 02:45–03:45 twice
  { timeZone: "Pacific/Chatham", date: "2026-09-27", inside: 195 }, // 02:45–03:45 missing
];
const SKILLS = ["termite-license", "rodent"];
const PREFIXES = ["1", "10", "112", "SW1", "2"];
const POSTAL_CODES = ["10001", "11201", "sw1a 1aa", "20500", "9"];

const hhmm = (minutes: number) =>
  `${String(Math.floor(minutes / 60)).padStart(2, "0")}:${String(minutes % 60).padStart(2, "0")}`;

const every: fc.Arbitrary<Every> = fc.record({
  count: fc.integer({ min: 1, max: 12 }),
  unit: fc.constantFrom("week" as const, "month" as const),
});

/** A plan's calendar: its zone, and how the due date comes about. */
const calendar = fc.oneof(
  // Month ends: a first visit on the 28th–31st (clamped to the month), any period.
  fc.record({
    kind: fc.constant("month-end" as const),
    timeZone: fc.constantFrom(...ZONES),
    year: fc.integer({ min: 2023, max: 2028 }),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.integer({ min: 28, max: 31 }),
    every,
    k: fc.integer({ min: 0, max: 24 }),
  }),
  // Around a DST change: the due date on or a few days from one, reached from a first visit k periods before.
  fc.record({
    kind: fc.constant("dst" as const),
    change: fc.constantFrom(...CHANGES),
    shift: fc.oneof(fc.constant(0), fc.integer({ min: -4, max: 4 })),
    every,
    k: fc.integer({ min: 0, max: 12 }),
  }),
);

const service = fc.record({
  durationMinutes: fc.integer({ min: 3, max: 96 }).map((n) => n * 5),
  bufferMinutes: fc.constantFrom(0, 0, 15, 30, 60),
  arrivalWindowMinutes: fc.constantFrom(0, 60, 120),
  skills: fc.subarray(SKILLS),
});

const technician = fc.record({
  skills: fc.subarray(SKILLS),
  postalCodes: fc.subarray(PREFIXES, { maxLength: 2 }),
  weeklyHours: fc.oneof({ arbitrary: fc.constant(null), weight: 3 }, { arbitrary: weeklyHours, weight: 1 }),
  // Days off as days from the due date.
  daysOff: fc.uniqueArray(fc.integer({ min: -4, max: 4 }), { maxLength: 2 }),
  active: fc.constantFrom(true, true, true, false),
});

const scenario = fc.record({
  calendar,
  // The plan's local time: a slot start of the due date, or near the clock change (its zone's, if any), or any minute.
  localTime: fc.oneof(
    { arbitrary: fc.record({ slot: fc.nat() }), weight: 3 },
    { arbitrary: fc.record({ nearChange: fc.constantFrom(0, 0, 0, -60, -30, -15, 15, 30, 60) }), weight: 2 },
    { arbitrary: fc.record({ minutes: fc.integer({ min: 0, max: 1439 }) }), weight: 1 },
  ),
  schedule: fc.record({
    slotMinutes: fc.constantFrom(15, 30, 60, 90),
    capacity: fc.integer({ min: 1, max: 3 }),
    minNoticeMinutes: fc.integer({ min: 0, max: 600 }),
    horizonDays: fc.oneof(fc.integer({ min: 1, max: 20 }), fc.constant(30)),
    weeklyHours,
  }),
  // Closed dates as days from the due date.
  closedDays: fc.uniqueArray(fc.integer({ min: -4, max: 4 }), { maxLength: 2 }),
  // Now, as minutes before the due start (negative: after it), and a few milliseconds more.
  nowBefore: fc.oneof(
    fc.integer({ min: 3 * 1440, max: 15 * 1440 }),
    fc.integer({ min: -4 * 1440, max: 4 * 1440 }),
    fc.integer({ min: -30, max: 600 }),
  ),
  nowJitter: fc.constantFrom(0, 0, 0, 1, 59_999),
  service: fc.option(service, { freq: 4 }),
  technicians: fc.array(technician, { maxLength: 4 }),
  postalCode: fc.option(fc.constantFrom(...POSTAL_CODES), { freq: 2 }),
  // The plan's technician: one of the org's (index), none (4) or one since deleted (5).
  planTechnician: fc.nat({ max: 5 }),
  // Visits and holds on slot starts (or next to them) of the dates around the due date.
  visits: fc.array(
    fc.record({
      pick: fc.nat(),
      offMinutes: fc.constantFrom(0, 0, 0, 10, -35),
      minutes: fc.integer({ min: 1, max: 60 }).map((n) => n * 5),
      technician: fc.nat({ max: 4 }),
      count: fc.constantFrom(1, 1, 2),
      held: fc.constantFrom(false, false, false, true),
    }),
    { maxLength: 24 },
  ),
  // Visits starting exactly at the due start, one per technician in order (or crews).
  atDue: fc.oneof(fc.constant(0), fc.nat({ max: 3 })),
});

// Temporal is slow, and the same zones, dates and times come back run after
// run: what it answers is remembered, by strings.
const remembered = new Map<string, number | string>();
function remember<T extends number | string>(key: string, compute: () => T): T {
  let value = remembered.get(key);
  if (value === undefined) {
    value = compute();
    remembered.set(key, value);
  }
  return value as T;
}

/** Local date `date` (`YYYY-MM-DD`) plus `days`. */
const plusDays = (date: string, days: number): string =>
  remember(`${date} + ${days}`, () => Temporal.PlainDate.from(date).add({ days }).toString());

/** The instant of local `date` at `time` ("24:00": the next day's start) in `timeZone`, by Temporal's "compatible". */
const instantOf = (date: string, time: string, timeZone: string): number =>
  remember(`${timeZone} ${date} ${time}`, () =>
    time === "24:00"
      ? startOf(plusDays(date, 1), timeZone)
      : Temporal.PlainDateTime.from(`${date}T${time}`).toZonedDateTime(timeZone, { disambiguation: "compatible" })
          .epochMilliseconds,
  );

/** The first instant of local `date` in `timeZone` (also when midnight falls in a gap). */
const startOf = (date: string, timeZone: string): number =>
  remember(`${timeZone} ${date}`, () => Temporal.PlainDate.from(date).toZonedDateTime({ timeZone }).epochMilliseconds);

/** The local "HH:MM" of `instant` in `timeZone`. */
const wallTime = (instant: number, timeZone: string): string =>
  remember(`${timeZone} ${instant} wall`, () =>
    Temporal.Instant.fromEpochMilliseconds(instant).toZonedDateTimeISO(timeZone).toPlainTime().toString().slice(0, 5),
  );

/** [opening, closing) instants of `hours` on local `date`. */
const openings = (hours: WeeklyHours, date: string, timeZone: string): [number, number][] =>
  (hours[WEEKDAYS[remember(`${date} weekday`, () => Temporal.PlainDate.from(date).dayOfWeek) - 1]!] ?? []).map(
    ([open, close]) => [instantOf(date, open, timeZone), instantOf(date, close, timeZone)],
  );

/** A visit or hold, one per unit of count, as the oracle sees it. */
interface Occupant {
  start: number;
  until: number;
  technicianId: string | null;
  held: boolean;
}

interface Case {
  plan: VisitRequest;
  technicianId: string | null;
  dueDate: string;
  localTime: string;
  now: number;
  occupants: Occupant[];
}

type Placed = { start: number; technicianId: string | null } | null;

/** The oracle: every minute of the seven dates, each tried by the API's rules, then the plans' order of preference. */
function oracle(c: Case): { placed: Placed; tags: string[] } {
  const { schedule, visit } = c.plan;
  const { timeZone } = schedule;
  const due = instantOf(c.dueDate, c.localTime, timeZone);
  const slotMs = schedule.slotMinutes * MINUTE;
  const earliest = c.now + schedule.minNoticeMinutes * MINUTE;
  const horizon = c.now + schedule.horizonDays * DAY;
  const active = c.plan.technicians.filter((x) => x.active);
  const postal = c.plan.postalCode;
  const eligible = active
    .filter((x) => postal === null || x.postalCodes.length === 0 || x.postalCodes.some((p) => postal.startsWith(p)))
    .filter((x) => visit.skills.every((s) => x.skills.includes(s)));
  const crew = active.length === 0;

  const candidates: { start: number; free: Technician[]; dayStart: number; dayEnd: number }[] = [];
  for (let d = -3; d <= 3; d++) {
    const date = plusDays(c.dueDate, d);
    if (schedule.closedDates.includes(date)) continue;
    const dayStart = startOf(date, timeZone);
    const dayEnd = startOf(plusDays(date, 1), timeZone);
    const org = openings(schedule.weeklyHours, date, timeZone);
    const [opens, closes] = [org.map(([o]) => o), org.map(([, close]) => close)];
    const duty = eligible
      .filter((x) => !x.daysOff.includes(date))
      .map((x) => ({ x, hours: openings(x.weeklyHours ?? schedule.weeklyHours, date, timeZone) }));
    for (let t = dayStart; t < dayEnd; t += MINUTE) {
      if (t < earliest || t >= horizon) continue;
      // A slot start: a whole number of slots after an opening, the slot ending by its closing.
      let closing = 0;
      for (let i = 0; i < opens.length; i++)
        if (opens[i]! <= t && t + slotMs <= closes[i]! && (t - opens[i]!) % slotMs === 0) closing = closes[i]!;
      if (closing === 0) continue;
      const end = t + visit.durationMs;
      const spanEnd = end + visit.bufferMs;
      const overlapping = c.occupants.filter((v) => v.start < spanEnd && v.until > t);
      if (crew) {
        if (end > closing) continue;
        // Minute by minute: is any minute of the span taken by `capacity` visits and holds?
        // (From the first minute any of them occupies: none occupies a minute before.)
        let full = false;
        const from = Math.max(t, Math.min(...overlapping.map((v) => v.start)));
        for (let m = from; m < spanEnd && !full && overlapping.length >= schedule.capacity; m += MINUTE) {
          let here = 0;
          for (const v of overlapping) if (v.start <= m && m < v.until) here++;
          full = here >= schedule.capacity;
        }
        if (!full) candidates.push({ start: t, free: [], dayStart, dayEnd });
      } else {
        const free = duty
          .filter(({ hours }) => hours.some(([o, close]) => o <= t && end <= close))
          .filter(({ x }) => !overlapping.some((v) => v.technicianId === x.id))
          .map(({ x }) => x);
        if (free.length > 0) candidates.push({ start: t, free, dayStart, dayEnd });
      }
    }
  }

  const tags: string[] = [];
  const assign = (candidate: (typeof candidates)[number]): string => {
    const load = (x: Technician) =>
      c.occupants.filter(
        (v) => !v.held && v.technicianId === x.id && candidate.dayStart <= v.start && v.start < candidate.dayEnd,
      ).length;
    const [first] = [...candidate.free].sort((a, b) => load(a) - load(b) || (a.id < b.id ? -1 : 1));
    return first!.id;
  };
  const atDue = candidates.find((x) => x.start === due);
  let placed: Placed;
  if (atDue && !crew && atDue.free.some((x) => x.id === c.technicianId)) {
    tags.push("due start, plan's technician");
    placed = { start: due, technicianId: c.technicianId };
  } else if (atDue) {
    tags.push(crew ? "due start, crew" : "due start, another technician");
    placed = { start: due, technicianId: crew ? null : assign(atDue) };
  } else if (candidates.length > 0) {
    const distance = (x: (typeof candidates)[number]) => Math.abs(x.start - due);
    const [nearest, next] = [...candidates].sort((a, b) => distance(a) - distance(b) || a.start - b.start);
    if (next && distance(next) === distance(nearest!)) tags.push("a tie");
    const own = !crew && nearest!.free.some((x) => x.id === c.technicianId);
    tags.push(crew ? "nearest, crew" : own ? "nearest, plan's technician" : "nearest, another technician");
    placed = { start: nearest!.start, technicianId: crew ? null : own ? c.technicianId : assign(nearest!) };
  } else {
    tags.push(crew ? "nothing, crew" : eligible.length === 0 ? "nothing, no one eligible" : "nothing, technicians");
    placed = null;
  }
  return { placed, tags };
}

/** What kind of local time the due start was: one that exists, one in a gap, or one that happens twice. */
const timeKind = (date: string, time: string, timeZone: string): string =>
  remember(`${timeZone} ${date} ${time} kind`, () => {
    const wall = Temporal.PlainDateTime.from(`${date}T${time}`);
    const earlier = wall.toZonedDateTime(timeZone, { disambiguation: "earlier" });
    const later = wall.toZonedDateTime(timeZone, { disambiguation: "later" });
    if (earlier.epochMilliseconds === later.epochMilliseconds) return "plain time";
    return Temporal.PlainDateTime.compare(earlier.toPlainDateTime(), wall) === 0 ? "ambiguous time" : "time in a gap";
  });

describe("placeDueVisit against a minute-by-minute oracle (property)", () => {
  it(`agrees on the start and the technician of every due visit (${RUNS} plans)`, () => {
    // What the cases met: so that a generator that stopped reaching a case fails the test.
    const seen = new Map<string, number>();
    const see = (tag: string) => seen.set(tag, (seen.get(tag) ?? 0) + 1);
    fc.assert(
      fc.property(scenario, (s) => {
        // The calendar: the due date from the first visit's, held to Temporal's own month arithmetic.
        const cal = s.calendar;
        const timeZone = cal.kind === "dst" ? cal.change.timeZone : cal.timeZone;
        const unit = cal.every.unit === "week" ? "weeks" : "months";
        const periods = { [unit]: cal.every.count * cal.k };
        const first =
          cal.kind === "month-end"
            ? Temporal.PlainDate.from({ year: cal.year, month: cal.month, day: cal.day }) // day clamped
            : Temporal.PlainDate.from(cal.change.date).add({ days: cal.shift }).subtract(periods);
        const due = dueDate(first.toString(), cal.every, cal.k);
        expect(due).toBe(first.add(periods).toString());
        if (cal.kind === "month-end" && cal.every.unit === "month" && Number(due.slice(8)) < first.day)
          see("month end clamped");
        const dayFrom = (days: number) => plusDays(due, days);

        const schedule: Schedule = { timeZone, ...s.schedule, closedDates: s.closedDays.map(dayFrom) };
        const technicians: Technician[] = s.technicians.map((x, i) => ({
          id: `tech_${i}`,
          name: `T${i}`,
          skills: x.skills,
          postalCodes: x.postalCodes.map(normalisePostalCode),
          weeklyHours: x.weeklyHours,
          daysOff: x.daysOff.map(dayFrom),
          active: x.active,
        }));
        const plan: VisitRequest = {
          schedule,
          visit: visitOf(
            schedule,
            s.service && { id: "svc_1", name: "S", keywords: [], isDefault: true, active: true, ...s.service },
          ),
          technicians,
          postalCode: s.postalCode === null ? null : normalisePostalCode(s.postalCode),
        };
        const crew = !technicians.some((x) => x.active);
        const technicianId =
          s.planTechnician < technicians.length
            ? `tech_${s.planTechnician}`
            : s.planTechnician === 5
              ? "tech_gone"
              : null;

        // The slot starts of the dates around the due date, bookings aside: where visits, holds and local times go.
        const around = startOf(dayFrom(-4), timeZone);
        const grid = [...candidateSlots(schedule, around, around + 9 * DAY)];
        const [dueDayStart, dueDayEnd] = [startOf(due, timeZone), startOf(dayFrom(1), timeZone)];
        const dueDateGrid = grid.filter((g) => dueDayStart <= g.start && g.start < dueDayEnd);
        const localTime =
          "minutes" in s.localTime
            ? hhmm(s.localTime.minutes)
            : "nearChange" in s.localTime
              ? hhmm(((((cal.kind === "dst" ? cal.change.inside : 150) + s.localTime.nearChange) % 1440) + 1440) % 1440)
              : dueDateGrid.length > 0
                ? wallTime(dueDateGrid[s.localTime.slot % dueDateGrid.length]!.start, timeZone)
                : "09:00";
        const dueAt = dueStart(due, localTime, timeZone);
        expect(dueAt).toBe(instantOf(due, localTime, timeZone));
        see(timeKind(due, localTime, timeZone));
        const now = dueAt - s.nowBefore * MINUTE + s.nowJitter;

        const occupants: Occupant[] = [];
        const technicianOf = (n: number) => (crew ? null : (technicians[n % technicians.length]?.id ?? null));
        for (let n = 0; n < s.atDue; n++)
          occupants.push({ start: dueAt, until: dueAt + 60 * MINUTE, technicianId: technicianOf(n), held: false });
        if (grid.length > 0)
          for (const v of s.visits) {
            const start = grid[v.pick % grid.length]!.start + v.offMinutes * MINUTE;
            for (let i = 0; i < v.count; i++)
              occupants.push({
                start,
                until: start + v.minutes * MINUTE,
                technicianId: technicianOf(v.technician),
                held: v.held,
              });
          }
        // Grouped as the database reads them: one entry per distinct times and technician, with its count.
        const grouped = (held: boolean) => {
          const bookings: Booking[] = [];
          for (const o of occupants.filter((x) => x.held === held)) {
            const same = bookings.find(
              (b) => b.startsAt === o.start && b.endsAt === o.until && b.technicianId === o.technicianId,
            );
            if (same) same.count = (same.count ?? 1) + 1;
            else bookings.push({ startsAt: o.start, endsAt: o.until, technicianId: o.technicianId, count: 1 });
          }
          return bookings;
        };
        const maxBookingMs = Math.max(
          plan.visit.durationMs + plan.visit.bufferMs,
          ...occupants.map((o) => o.until - o.start),
        );

        const c: Case = { plan, technicianId, dueDate: due, localTime, now, occupants };
        const expected = oracle(c);
        for (const tag of expected.tags) see(tag);
        const placed = placeDueVisit({
          request: plan,
          technicianId,
          dueDate: due,
          localTime,
          now,
          visits: grouped(false),
          held: grouped(true),
          maxBookingMs,
        });
        expect(placed).toEqual(expected.placed);
      }),
      { seed: 20261214, numRuns: RUNS },
    );
    for (const tag of [
      "month end clamped",
      "plain time",
      "time in a gap",
      "ambiguous time",
      "due start, plan's technician",
      "due start, another technician",
      "due start, crew",
      "nearest, plan's technician",
      "nearest, another technician",
      "nearest, crew",
      "a tie",
      "nothing, crew",
      "nothing, technicians",
      "nothing, no one eligible",
    ])
      expect(seen.get(tag) ?? 0, `${tag} (seen: ${JSON.stringify(Object.fromEntries(seen))})`).toBeGreaterThan(20);
  }, 300_000);
});
