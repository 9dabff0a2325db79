import { describe, expect, it } from "vitest";
import { DEFAULT_SCHEDULE, type Interval, type Schedule, type Weekday } from "../../src/scheduling/schedule";
import {
  assessSlot,
  type Booking,
  candidateSlots,
  forgetOpenings,
  hoursOn,
  slotView,
} from "../../src/scheduling/slots";
import { findBookable } from "../../src/scheduling/visits";
import { slotRequest } from "../support/schedules";
import { HOUR, MINUTE } from "../support/time";

const CLOSED_WEEK: Record<Weekday, Interval[]> = { mon: [], tue: [], wed: [], thu: [], fri: [], sat: [], sun: [] };

function schedule(timeZone: string, overrides: Partial<Schedule> = {}): Schedule {
  return { ...DEFAULT_SCHEDULE, timeZone, weeklyHours: CLOSED_WEEK, ...overrides };
}
const at = (iso: string) => Date.parse(iso);
const on = (day: Weekday, ...intervals: Interval[]) => ({ ...CLOSED_WEEK, [day]: intervals });

/** Every slot of one local day, as [UTC start, local start]. */
function day(s: Schedule, fromIso: string, untilIso: string) {
  return [...candidateSlots(s, at(fromIso), at(untilIso))].map((slot) => {
    const view = slotView({ ...slot, remaining: 0 }, s.timeZone);
    expect(slot.end - slot.start).toBe(s.slotMinutes * MINUTE);
    return [view.start, view.localStart];
  });
}

describe("candidateSlots: exact instants across zones and DST", () => {
  it.each([
    [
      "New York spring-forward night, 00:00–06:00 holds 5 hourly slots",
      schedule("America/New_York", { weeklyHours: on("sun", ["00:00", "06:00"]) }),
      "2026-03-08T00:00:00Z",
      "2026-03-09T00:00:00Z",
      [
        ["2026-03-08T05:00:00.000Z", "2026-03-08T00:00:00-05:00"],
        ["2026-03-08T06:00:00.000Z", "2026-03-08T01:00:00-05:00"],
        ["2026-03-08T07:00:00.000Z", "2026-03-08T03:00:00-04:00"],
        ["2026-03-08T08:00:00.000Z", "2026-03-08T04:00:00-04:00"],
        ["2026-03-08T09:00:00.000Z", "2026-03-08T05:00:00-04:00"],
      ],
    ],
    [
      "New York fall-back night, 00:00–06:00 holds 7 hourly slots",
      schedule("America/New_York", { weeklyHours: on("sun", ["00:00", "06:00"]) }),
      "2026-11-01T00:00:00Z",
      "2026-11-02T00:00:00Z",
      [
        ["2026-11-01T04:00:00.000Z", "2026-11-01T00:00:00-04:00"],
        ["2026-11-01T05:00:00.000Z", "2026-11-01T01:00:00-04:00"],
        ["2026-11-01T06:00:00.000Z", "2026-11-01T01:00:00-05:00"],
        ["2026-11-01T07:00:00.000Z", "2026-11-01T02:00:00-05:00"],
        ["2026-11-01T08:00:00.000Z", "2026-11-01T03:00:00-05:00"],
        ["2026-11-01T09:00:00.000Z", "2026-11-01T04:00:00-05:00"],
        ["2026-11-01T10:00:00.000Z", "2026-11-01T05:00:00-05:00"],
      ],
    ],
    [
      "an opening inside the spring-forward gap moves forward by the gap",
      schedule("America/New_York", { weeklyHours: on("sun", ["02:30", "05:00"]) }),
      "2026-03-08T00:00:00Z",
      "2026-03-09T00:00:00Z",
      [["2026-03-08T07:30:00.000Z", "2026-03-08T03:30:00-04:00"]],
    ],
    [
      "an ambiguous fall-back opening takes the earlier instant",
      schedule("America/New_York", { weeklyHours: on("sun", ["01:30", "03:00"]) }),
      "2026-11-01T00:00:00Z",
      "2026-11-02T00:00:00Z",
      [
        ["2026-11-01T05:30:00.000Z", "2026-11-01T01:30:00-04:00"],
        ["2026-11-01T06:30:00.000Z", "2026-11-01T01:30:00-05:00"],
      ],
    ],
    [
      "Asia/Kolkata, a half-hour offset",
      schedule("Asia/Kolkata", { weeklyHours: on("mon", ["09:00", "12:00"]) }),
      "2026-11-22T00:00:00Z",
      "2026-11-24T00:00:00Z",
      [
        ["2026-11-23T03:30:00.000Z", "2026-11-23T09:00:00+05:30"],
        ["2026-11-23T04:30:00.000Z", "2026-11-23T10:00:00+05:30"],
        ["2026-11-23T05:30:00.000Z", "2026-11-23T11:00:00+05:30"],
      ],
    ],
    [
      "Australia/Lord_Howe, whose DST shift is 30 minutes",
      schedule("Australia/Lord_Howe", { weeklyHours: on("sun", ["00:00", "06:00"]) }),
      "2026-10-03T00:00:00Z",
      "2026-10-04T12:00:00Z",
      [
        ["2026-10-03T13:30:00.000Z", "2026-10-04T00:00:00+10:30"],
        ["2026-10-03T14:30:00.000Z", "2026-10-04T01:00:00+10:30"],
        ["2026-10-03T15:30:00.000Z", "2026-10-04T02:30:00+11:00"],
        ["2026-10-03T16:30:00.000Z", "2026-10-04T03:30:00+11:00"],
        ["2026-10-03T17:30:00.000Z", "2026-10-04T04:30:00+11:00"],
      ],
    ],
    [
      "a closing time of 24:00 in UTC (offset +00:00, never Z)",
      schedule("UTC", { weeklyHours: on("mon", ["20:00", "24:00"]) }),
      "2026-11-23T00:00:00Z",
      "2026-11-24T00:00:00Z",
      [
        ["2026-11-23T20:00:00.000Z", "2026-11-23T20:00:00+00:00"],
        ["2026-11-23T21:00:00.000Z", "2026-11-23T21:00:00+00:00"],
        ["2026-11-23T22:00:00.000Z", "2026-11-23T22:00:00+00:00"],
        ["2026-11-23T23:00:00.000Z", "2026-11-23T23:00:00+00:00"],
      ],
    ],
    [
      "a lunch gap, and a last slot that must fit before closing",
      schedule("America/New_York", { slotMinutes: 90, weeklyHours: on("mon", ["08:00", "12:00"], ["13:00", "16:00"]) }),
      "2026-11-23T00:00:00Z",
      "2026-11-24T00:00:00Z",
      [
        ["2026-11-23T13:00:00.000Z", "2026-11-23T08:00:00-05:00"],
        ["2026-11-23T14:30:00.000Z", "2026-11-23T09:30:00-05:00"],
        ["2026-11-23T18:00:00.000Z", "2026-11-23T13:00:00-05:00"],
        ["2026-11-23T19:30:00.000Z", "2026-11-23T14:30:00-05:00"],
      ],
    ],
    [
      "a closed date has no slots",
      schedule("America/New_York", {
        weeklyHours: { ...CLOSED_WEEK, wed: [["09:00", "11:00"]], thu: [["09:00", "11:00"]] },
        closedDates: ["2026-11-26"],
      }),
      "2026-11-25T00:00:00Z",
      "2026-11-28T00:00:00Z",
      [
        ["2026-11-25T14:00:00.000Z", "2026-11-25T09:00:00-05:00"],
        ["2026-11-25T15:00:00.000Z", "2026-11-25T10:00:00-05:00"],
      ],
    ],
    [
      "a scan that starts mid-interval continues on the slot grid",
      schedule("UTC", { slotMinutes: 45, weeklyHours: on("mon", ["09:00", "12:00"]) }),
      "2026-11-23T09:50:00Z",
      "2026-11-24T00:00:00Z",
      [
        ["2026-11-23T10:30:00.000Z", "2026-11-23T10:30:00+00:00"],
        ["2026-11-23T11:15:00.000Z", "2026-11-23T11:15:00+00:00"],
      ],
    ],
  ])("%s", (_name, s, from, until, expected) => {
    expect(day(s, from, until)).toEqual(expected);
  });
});

// Monday 2026-11-23, 07:00 in New York; office hours with a lunch break.
const NOW = at("2026-11-23T12:00:00Z");
const OFFICE = schedule("America/New_York", {
  weeklyHours: {
    ...CLOSED_WEEK,
    mon: [
      ["08:00", "12:00"],
      ["13:00", "17:00"],
    ],
    tue: [["08:00", "17:00"]],
    wed: [["08:00", "17:00"]],
    thu: [["08:00", "17:00"]],
  },
  closedDates: ["2026-11-26"],
});

describe("hoursOn: openings kept per hours object and zone", () => {
  // 2026-03-09, a Monday: New York has changed its clocks the night before, London not yet.
  const monday = Math.floor(at("2026-03-09T00:00:00Z") / (1440 * MINUTE));
  const hours = on("mon", ["08:00", "12:00"], ["13:00", "17:00"]);
  it.each([
    [
      "America/New_York",
      ["2026-03-09T12:00:00Z", "2026-03-09T16:00:00Z", "2026-03-09T17:00:00Z", "2026-03-09T21:00:00Z"],
    ],
    ["Europe/London", ["2026-03-09T08:00:00Z", "2026-03-09T12:00:00Z", "2026-03-09T13:00:00Z", "2026-03-09T17:00:00Z"]],
    ["Asia/Kolkata", ["2026-03-09T02:30:00Z", "2026-03-09T06:30:00Z", "2026-03-09T07:30:00Z", "2026-03-09T11:30:00Z"]],
  ])("the same hours object in %s, asked twice and after forgetting", (timeZone, expected) => {
    const instants = () =>
      hoursOn(hours, timeZone, monday).flatMap((o) =>
        [o.start, o.end].map((i) => new Date(i).toISOString().replace(".000", "")),
      );
    expect(instants()).toEqual(expected);
    expect(instants()).toEqual(expected);
    forgetOpenings();
    expect(instants()).toEqual(expected);
    expect(hoursOn(hours, timeZone, monday + 1)).toEqual([]);
  });
});

describe("assessSlot: the reason", () => {
  it.each([
    ["2026-11-23T10:00:00Z", "in_the_past"],
    ["2026-12-23T12:00:00Z", "beyond_horizon"], // now + 30 days exactly is outside
    ["2026-12-23T13:00:00Z", "beyond_horizon"],
    ["2026-11-23T17:00:00Z", "closed"], // lunch
    ["2026-11-23T22:00:00Z", "closed"], // closing time itself
    ["2026-11-29T15:00:00Z", "closed"], // Sunday
    ["2026-11-26T15:00:00Z", "closed"], // closed date
    ["2026-11-23T13:30:00Z", "not_a_slot_start"], // also too soon: not_a_slot_start wins
    ["2026-11-24T15:15:00Z", "not_a_slot_start"],
    ["2026-11-23T13:00:00Z", "too_soon"],
    ["2026-11-23T14:00:00Z", null], // exactly now + notice
    ["2026-11-23T21:00:00Z", null], // the last slot of the day
    ["2026-12-22T21:00:00Z", null], // the last slot before the horizon (16:00 the day before)
    ["2026-12-23T11:00:00Z", "closed"], // 06:00 local, inside the horizon
  ])("%s → %s", (iso, reason) => {
    expect(assessSlot(OFFICE, NOW, at(iso)).reason).toBe(reason);
  });
});

describe("findBookable", () => {
  const query = ({
    schedule = OFFICE,
    ...overrides
  }: Partial<Omit<Parameters<typeof findBookable>[0], "request">> & { schedule?: Schedule } = {}) =>
    findBookable({
      request: slotRequest(schedule),
      bookings: [],
      maxBookingMs: HOUR,
      now: NOW,
      from: NOW,
      limit: 100,
      ...overrides,
    }).map((s) => [new Date(s.start).toISOString(), s.remaining]);

  it("lifts an early `from` to now + notice and skips lunch", () => {
    expect(query({ limit: 4 })).toEqual([
      ["2026-11-23T14:00:00.000Z", 1],
      ["2026-11-23T15:00:00.000Z", 1],
      ["2026-11-23T16:00:00.000Z", 1],
      ["2026-11-23T18:00:00.000Z", 1],
    ]);
  });

  it("stops at the horizon's edge", () => {
    const slots = query({ schedule: { ...OFFICE, horizonDays: 1 } });
    expect(slots.map(([start]) => start)).toEqual(
      ["14", "15", "16", "18", "19", "20", "21"].map((h) => `2026-11-23T${h}:00:00.000Z`),
    );
  });

  it("counts capacity, including bookings of an older, longer slot length", () => {
    const bookings: Booking[] = [
      { startsAt: at("2026-11-23T14:00:00Z"), endsAt: at("2026-11-23T15:00:00Z") },
      { startsAt: at("2026-11-23T14:00:00Z"), endsAt: at("2026-11-23T15:00:00Z") },
      // 90 minutes from 14:30: holds the 14:00 and 15:00 slots
      { startsAt: at("2026-11-23T14:30:00Z"), endsAt: at("2026-11-23T16:00:00Z") },
      { startsAt: at("2026-11-23T16:00:00Z"), endsAt: at("2026-11-23T17:00:00Z") },
    ];
    const slots = query({ schedule: { ...OFFICE, capacity: 2 }, bookings, maxBookingMs: 90 * MINUTE, limit: 3 });
    expect(slots).toEqual([
      ["2026-11-23T15:00:00.000Z", 1],
      ["2026-11-23T16:00:00.000Z", 1],
      ["2026-11-23T18:00:00.000Z", 2],
    ]);
  });

  it("answers an empty list when nothing is open", () => {
    expect(query({ schedule: { ...OFFICE, weeklyHours: CLOSED_WEEK } })).toEqual([]);
  });

  it("respects `until`, the end of the bookings it was given", () => {
    expect(query({ until: at("2026-11-23T16:00:00Z") }).length).toBe(2);
  });
});
