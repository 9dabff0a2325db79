// Service plans' calendar and placement (src/scheduling/plans.ts), with exact
// instants: due dates at month ends, in leap years and by weeks; due starts
// in a DST gap and overlap; and where a due visit goes when its start is
// free, blocked, taken by its technician, or nowhere to be had.
import { describe, expect, it } from "vitest";
import { type DueVisit, dueDate, dueStart, dueWindow, type Every, placeDueVisit } from "../../src/scheduling/plans";
import { DEFAULT_SCHEDULE, type Interval, type Schedule, WEEKDAYS } from "../../src/scheduling/schedule";
import type { Booking } from "../../src/scheduling/slots";
import { type Service, type Technician, visitOf } from "../../src/scheduling/visits";
import { everyDay } from "../support/schedules";
import { MINUTE } from "../support/time";

const NY = "America/New_York";
const at = (iso: string) => Date.parse(iso);
const iso = (t: number) => new Date(t).toISOString();
const monthly = (count = 1): Every => ({ count, unit: "month" });
const weekly = (count = 1): Every => ({ count, unit: "week" });

describe("dueDate: the first visit's date plus k × every, months counted from the first and clamped", () => {
  it.each<[string, string, Every, number, string]>([
    ["the first visit is due on its own date", "2026-01-31", monthly(), 0, "2026-01-31"],
    ["Jan 31 + 1 month is Feb 28", "2026-01-31", monthly(), 1, "2026-02-28"],
    ["Jan 31 + 2 months is Mar 31, not Feb 28 + 1 month", "2026-01-31", monthly(), 2, "2026-03-31"],
    ["Jan 31 + 3 months is Apr 30", "2026-01-31", monthly(), 3, "2026-04-30"],
    ["Jan 31 + 1 month in a leap year is Feb 29", "2028-01-31", monthly(), 1, "2028-02-29"],
    ["Jan 30 + 1 month in a leap year is Feb 29", "2028-01-30", monthly(), 1, "2028-02-29"],
    ["2100 is no leap year", "2100-01-31", monthly(), 1, "2100-02-28"],
    ["2000 is a leap year", "2000-01-31", monthly(), 1, "2000-02-29"],
    ["Feb 29 + 12 months is Feb 28", "2024-02-29", monthly(12), 1, "2025-02-28"],
    ["Feb 29 + 4 × 12 months is Feb 29 again", "2024-02-29", monthly(12), 4, "2028-02-29"],
    ["quarterly from Nov 30: Feb 28", "2026-11-30", monthly(3), 1, "2027-02-28"],
    ["quarterly from Nov 30: May 30, not Feb 28 + 3 months", "2026-11-30", monthly(3), 2, "2027-05-30"],
    ["every other month across a year end", "2026-12-31", monthly(2), 1, "2027-02-28"],
    ["every other month, k = 6, is a year later", "2026-12-31", monthly(2), 6, "2027-12-31"],
    ["monthly, k = 52, over four year ends", "2026-08-31", monthly(), 52, "2030-12-31"],
    ["a week across a year end", "2026-12-29", weekly(), 1, "2027-01-05"],
    ["a week onto Feb 29", "2028-02-22", weekly(), 1, "2028-02-29"],
    ["every 2 weeks, k = 3, is 42 days on", "2026-03-01", weekly(2), 3, "2026-04-12"],
    ["every 12 weeks, k = 51", "2026-01-01", weekly(12), 51, "2037-09-24"],
  ])("%s: %s, every %o, k = %i → %s", (_, first, every, k, expected) => {
    expect(dueDate(first, every, k)).toBe(expected);
  });

  it.each<[string, Every, number]>([
    ["2026-02-30", monthly(), 1],
    ["2026-2-01", monthly(), 1],
    ["2026-01-31", monthly(0), 1],
    ["2026-01-31", weekly(), -1],
    ["2026-01-31", weekly(), 1.5],
  ])("refuses %s, every %o, k = %d", (first, every, k) => {
    expect(() => dueDate(first, every, k)).toThrow(RangeError);
  });
});

describe('dueStart: the local time read as the schedule reads one (docs/api.md, "The schedule")', () => {
  it.each([
    ["a plain morning in winter", "2026-11-23", "09:00", NY, "2026-11-23T14:00:00.000Z"],
    ["the same local time after spring-forward", "2026-03-08", "09:00", NY, "2026-03-08T13:00:00.000Z"],
    [
      "a time in the spring-forward gap moves forward by the gap",
      "2026-03-08",
      "02:30",
      NY,
      "2026-03-08T07:30:00.000Z",
    ],
    ["an ambiguous fall-back time takes the earlier instant", "2026-11-01", "01:30", NY, "2026-11-01T05:30:00.000Z"],
    ["a half-hour gap (Lord Howe)", "2026-10-04", "02:15", "Australia/Lord_Howe", "2026-10-03T15:45:00.000Z"],
    ["a gap at midnight (Santiago)", "2026-09-06", "00:30", "America/Santiago", "2026-09-06T04:30:00.000Z"],
    ["midnight in UTC", "2026-01-01", "00:00", "UTC", "2026-01-01T00:00:00.000Z"],
  ])("%s: %s %s in %s is %s", (_, date, time, zone, expected) => {
    expect(iso(dueStart(date, time, zone))).toBe(expected);
  });

  it("a weekly plan keeps its local time across a DST change, so its instant moves", () => {
    const starts = [0, 1, 2].map((k) => iso(dueStart(dueDate("2026-03-01", weekly(), k), "09:00", NY)));
    expect(starts).toEqual(["2026-03-01T14:00:00.000Z", "2026-03-08T13:00:00.000Z", "2026-03-15T13:00:00.000Z"]);
  });

  it.each(["24:00", "9:00", "09:60", "0900"])("refuses the local time %s", (time) => {
    expect(() => dueStart("2026-11-23", time, NY)).toThrow(RangeError);
  });

  it("dueWindow: the local dates due − 3 … due + 3, across a DST change", () => {
    const window = dueWindow("2026-03-10", NY);
    expect([iso(window.start), iso(window.end)]).toEqual(["2026-03-07T05:00:00.000Z", "2026-03-14T04:00:00.000Z"]);
  });
});

// A New York org open 08:00–17:00 every day, hourly slots; now is Friday
// 2026-11-20, and the due visit is Wednesday 2026-11-25 at 09:00 (14:00Z).
const NOW = at("2026-11-20T12:00:00Z");
const DUE = "2026-11-25";

const schedule = (overrides: Partial<Schedule> = {}): Schedule => ({
  ...DEFAULT_SCHEDULE,
  timeZone: NY,
  weeklyHours: everyDay(["08:00", "17:00"]),
  horizonDays: 60,
  ...overrides,
});

const tech = (id: string, overrides: Partial<Technician> = {}): Technician => ({
  id,
  name: id,
  skills: [],
  postalCodes: [],
  weeklyHours: null,
  daysOff: [],
  active: true,
  ...overrides,
});
const TEAM = [tech("tech_a"), tech("tech_b"), tech("tech_c")];

/** A visit (or hold) from `start`, occupying `minutes`. */
const visit = (start: string, minutes: number, technicianId: string | null = null, count = 1): Booking => ({
  startsAt: at(start),
  endsAt: at(start) + minutes * MINUTE,
  technicianId,
  count,
});

const TERMITES: Service = {
  id: "svc_termite",
  name: "Termite treatment",
  durationMinutes: 180,
  bufferMinutes: 30,
  arrivalWindowMinutes: 0,
  skills: ["termite-license"],
  keywords: [],
  isDefault: false,
  active: true,
};

interface Case {
  schedule?: Partial<Schedule>;
  technicians?: Technician[];
  service?: Service;
  technicianId?: string | null;
  dueDate?: string;
  localTime?: string;
  now?: string;
  visits?: Booking[];
  held?: Booking[];
}

function place(c: Case) {
  const s = schedule(c.schedule);
  const input: DueVisit = {
    request: { schedule: s, visit: visitOf(s, c.service ?? null), technicians: c.technicians ?? [], postalCode: null },
    technicianId: c.technicianId ?? null,
    dueDate: c.dueDate ?? DUE,
    localTime: c.localTime ?? "09:00",
    now: c.now ? at(c.now) : NOW,
    visits: c.visits ?? [],
    held: c.held ?? [],
    // The longest span of the org: the visit's, or a longer booking's.
    maxBookingMs: Math.max(
      4 * 60 * MINUTE,
      ...[...(c.visits ?? []), ...(c.held ?? [])].map((b) => b.endsAt - b.startsAt),
    ),
  };
  const placed = placeDueVisit(input);
  return placed && [iso(placed.start), placed.technicianId];
}

/** The seven local dates of the window around DUE, every one closed. */
const WINDOW_CLOSED = ["2026-11-22", "2026-11-23", "2026-11-24", DUE, "2026-11-26", "2026-11-27", "2026-11-28"];
const CLOSED_WEEK = Object.fromEntries(WEEKDAYS.map((d) => [d, [] as Interval[]])) as Schedule["weeklyHours"];

describe("placeDueVisit: the start and technician a due visit takes", () => {
  it.each<[string, Case, [string, string | null] | null]>([
    // Crew mode.
    ["crew mode: the due start when free", {}, ["2026-11-25T14:00:00.000Z", null]],
    [
      "crew mode: the due start full moves to the nearest start; 08:00 and 10:00 tie, the earlier wins",
      { visits: [visit("2026-11-25T14:00:00Z", 60)] },
      ["2026-11-25T13:00:00.000Z", null],
    ],
    [
      "crew mode: 08:00 and 09:00 full, 10:00 is nearest",
      { visits: [visit("2026-11-25T13:00:00Z", 120)] },
      ["2026-11-25T15:00:00.000Z", null],
    ],
    [
      "crew mode: capacity 2 with one visit there is still the due start",
      { schedule: { capacity: 2 }, visits: [visit("2026-11-25T14:00:00Z", 60)] },
      ["2026-11-25T14:00:00.000Z", null],
    ],
    [
      "crew mode: a live hold takes the place too",
      { held: [visit("2026-11-25T14:00:00Z", 60)], visits: [visit("2026-11-25T13:00:00Z", 60)] },
      ["2026-11-25T15:00:00.000Z", null],
    ],
    [
      "a local time off the grid (09:20) goes to the nearest slot start, 09:00",
      { localTime: "09:20" },
      ["2026-11-25T14:00:00.000Z", null],
    ],
    [
      "a local time half-way between slots (09:30) goes to the earlier",
      { localTime: "09:30" },
      ["2026-11-25T14:00:00.000Z", null],
    ],
    [
      "a local time after closing (18:40) goes to the last slot of the day, 16:00",
      { localTime: "18:40" },
      ["2026-11-25T21:00:00.000Z", null],
    ],
    [
      "the due date closed: the day before at 16:00 (17 h) beats the day after at 08:00 (23 h)",
      { schedule: { closedDates: [DUE] } },
      ["2026-11-24T21:00:00.000Z", null],
    ],
    [
      "only 12:00 on due − 3 and on due + 3 left: exactly 3 days either way, the earlier",
      {
        schedule: { closedDates: WINDOW_CLOSED.slice(1, 6) },
        localTime: "12:00",
        visits: ["2026-11-22", "2026-11-28"].flatMap((d) => [
          visit(`${d}T13:00:00Z`, 4 * 60),
          visit(`${d}T18:00:00Z`, 4 * 60),
        ]),
      },
      ["2026-11-22T17:00:00.000Z", null],
    ],
    [
      "notice: the due start too soon moves to the first start after notice",
      { now: "2026-11-25T13:30:00Z" },
      ["2026-11-25T16:00:00.000Z", null],
    ],
    [
      "horizon: the due start beyond it moves to the last start before it",
      { now: "2026-11-20T12:00:00Z", schedule: { horizonDays: 5 } },
      ["2026-11-24T21:00:00.000Z", null],
    ],
    ["nothing bookable on the seven dates: null", { schedule: { closedDates: WINDOW_CLOSED } }, null],
    [
      "nothing bookable in the window, though due + 4 is open: null",
      { schedule: { closedDates: WINDOW_CLOSED }, dueDate: "2026-11-25", localTime: "23:59" },
      null,
    ],
    ["no opening hours at all: null", { schedule: { weeklyHours: CLOSED_WEEK } }, null],
    ["the whole window in the past: null", { now: "2026-12-01T00:00:00Z" }, null],
    // Technicians.
    [
      "the plan's technician at the due start, though others have fewer visits that day",
      {
        technicians: TEAM,
        technicianId: "tech_b",
        visits: [visit("2026-11-25T17:00:00Z", 60, "tech_b"), visit("2026-11-25T19:00:00Z", 60, "tech_b")],
      },
      ["2026-11-25T14:00:00.000Z", "tech_b"],
    ],
    [
      "the plan's technician busy: another at the due start, the fewest visits that day (tech_c)",
      {
        technicians: TEAM,
        technicianId: "tech_b",
        visits: [visit("2026-11-25T14:00:00Z", 60, "tech_b"), visit("2026-11-25T17:00:00Z", 60, "tech_a")],
      },
      ["2026-11-25T14:00:00.000Z", "tech_c"],
    ],
    [
      "the plan's technician busy, the others as loaded: by id (tech_a)",
      {
        technicians: TEAM,
        technicianId: "tech_b",
        visits: [visit("2026-11-25T14:00:00Z", 60, "tech_b")],
      },
      ["2026-11-25T14:00:00.000Z", "tech_a"],
    ],
    [
      "a hold keeps its technician busy but is none of their visits of the day",
      {
        technicians: TEAM,
        technicianId: "tech_b",
        held: [visit("2026-11-25T14:00:00Z", 60, "tech_b"), visit("2026-11-25T18:00:00Z", 60, "tech_c")],
        visits: [visit("2026-11-25T19:00:00Z", 60, "tech_a")],
      },
      ["2026-11-25T14:00:00.000Z", "tech_c"],
    ],
    [
      "a visit counted twice (count 2) is two visits of the day",
      {
        technicians: [tech("tech_a"), tech("tech_c")],
        visits: [visit("2026-11-25T18:00:00Z", 60, "tech_a", 2), visit("2026-11-25T20:00:00Z", 60, "tech_c")],
      },
      ["2026-11-25T14:00:00.000Z", "tech_c"],
    ],
    [
      "the plan's technician off that day: another at the due start",
      { technicians: [tech("tech_a"), tech("tech_b", { daysOff: [DUE] })], technicianId: "tech_b" },
      ["2026-11-25T14:00:00.000Z", "tech_a"],
    ],
    [
      "the plan's technician no longer active: the assignment rule",
      { technicians: [tech("tech_a"), tech("tech_b", { active: false })], technicianId: "tech_b" },
      ["2026-11-25T14:00:00.000Z", "tech_a"],
    ],
    [
      "the plan's technician no longer qualified for the service: another who is",
      {
        technicians: [tech("tech_a", { skills: ["termite-license"] }), tech("tech_b")],
        service: TERMITES,
        technicianId: "tech_b",
      },
      ["2026-11-25T14:00:00.000Z", "tech_a"],
    ],
    [
      "no technician for the plan (technicianId null) in technician mode: the assignment rule",
      { technicians: TEAM },
      ["2026-11-25T14:00:00.000Z", "tech_a"],
    ],
    [
      "everyone busy at the due start: the nearest start, with the plan's technician free there",
      {
        technicians: [tech("tech_a"), tech("tech_b")],
        technicianId: "tech_b",
        visits: [visit("2026-11-25T14:00:00Z", 60, "tech_a"), visit("2026-11-25T14:00:00Z", 60, "tech_b")],
      },
      ["2026-11-25T13:00:00.000Z", "tech_b"],
    ],
    [
      "everyone busy at the due start, the plan's technician busy at the nearest too: the engine's choice there",
      {
        technicians: [tech("tech_a"), tech("tech_b")],
        technicianId: "tech_b",
        visits: [visit("2026-11-25T14:00:00Z", 60, "tech_a"), visit("2026-11-25T13:00:00Z", 120, "tech_b")],
      },
      ["2026-11-25T13:00:00.000Z", "tech_a"],
    ],
    [
      "a 3-hour visit and its 30-minute buffer: a visit at 10:30–11:30 rules out 08:00 to 11:00, so due 10:00 takes 12:00",
      {
        technicians: [tech("tech_a", { skills: ["termite-license"] })],
        service: TERMITES,
        technicianId: "tech_a",
        visits: [visit("2026-11-25T15:30:00Z", 60, "tech_a")],
        localTime: "10:00",
      },
      ["2026-11-25T17:00:00.000Z", "tech_a"],
    ],
    [
      "the plan's technician's own hours: 09:00 is outside them, another takes the due start",
      {
        technicians: [tech("tech_a"), tech("tech_b", { weeklyHours: everyDay(["12:00", "17:00"]) })],
        technicianId: "tech_b",
      },
      ["2026-11-25T14:00:00.000Z", "tech_a"],
    ],
    ["no one qualified for the service: null", { technicians: TEAM, service: TERMITES, technicianId: "tech_a" }, null],
    [
      "every technician busy all week: null",
      {
        technicians: [tech("tech_a")],
        technicianId: "tech_a",
        visits: [visit("2026-11-22T00:00:00Z", 8 * 24 * 60, "tech_a")],
      },
      null,
    ],
    // DST: the due time in a gap, and in an overlap.
    [
      "a due time in the spring-forward gap (02:30) is 03:30 EDT, a slot start of 30-minute slots",
      {
        schedule: { slotMinutes: 30, weeklyHours: everyDay(["00:00", "06:00"]) },
        dueDate: "2026-03-08",
        localTime: "02:30",
        now: "2026-03-01T00:00:00Z",
      },
      ["2026-03-08T07:30:00.000Z", null],
    ],
    [
      "a due time in the gap with hourly slots: 03:00 and 04:00 EDT are equally near 03:30, the earlier",
      {
        schedule: { weeklyHours: everyDay(["00:00", "06:00"]) },
        dueDate: "2026-03-08",
        localTime: "02:30",
        now: "2026-03-01T00:00:00Z",
      },
      ["2026-03-08T07:00:00.000Z", null],
    ],
    [
      "an ambiguous due time (01:30 on fall-back night) is the earlier 01:30 (EDT)",
      {
        schedule: { slotMinutes: 30, weeklyHours: everyDay(["00:00", "06:00"]) },
        dueDate: "2026-11-01",
        localTime: "01:30",
        now: "2026-10-25T00:00:00Z",
      },
      ["2026-11-01T05:30:00.000Z", null],
    ],
    [
      "hourly slots on fall-back night: 01:30 is no slot start; 01:00 EDT and 01:00 EST are 30 min either side, the earlier",
      {
        schedule: { weeklyHours: everyDay(["00:00", "06:00"]) },
        dueDate: "2026-11-01",
        localTime: "01:30",
        now: "2026-10-25T00:00:00Z",
      },
      ["2026-11-01T05:00:00.000Z", null],
    ],
    [
      "fall-back night, 01:00 EDT taken: 01:00 EST, the later 01:00, is the nearest",
      {
        schedule: { weeklyHours: everyDay(["00:00", "06:00"]) },
        dueDate: "2026-11-01",
        localTime: "01:30",
        now: "2026-10-25T00:00:00Z",
        visits: [visit("2026-11-01T05:00:00Z", 60)],
      },
      ["2026-11-01T06:00:00.000Z", null],
    ],
  ])("%s", (_, c, expected) => {
    expect(place(c)).toEqual(expected);
  });
});
