// The planner of a technician's change (src/scheduling/reassignment.ts), by
// tables with exact values: what a visit needs, which changes strand it,
// which changes could strand any, the window of bookings a move reads (across
// DST), and where each stranded visit goes. America/New_York: DST begins on
// Sunday 2026-03-08 and ends on Sunday 2026-11-01; Monday 2026-03-09 09:00
// local is 13:00Z.
import { describe, expect, it } from "vitest";
import {
  type BookedVisit,
  movesWindow,
  type Needs,
  needsOf,
  place,
  restricts,
  stranded,
  strands,
} from "../../src/scheduling/reassignment";
import { DEFAULT_SCHEDULE, type Schedule } from "../../src/scheduling/schedule";
import type { Booking } from "../../src/scheduling/slots";
import type { Service, Technician } from "../../src/scheduling/visits";

const at = Date.parse;
const ZONE = "America/New_York";
// Weekdays 08:00–17:00 local.
const SCHEDULE: Schedule = { ...DEFAULT_SCHEDULE, timeZone: ZONE };

const service = (id: string, skills: string[]): Service => ({
  id,
  name: id,
  durationMinutes: 60,
  bufferMinutes: 0,
  arrivalWindowMinutes: 0,
  skills,
  keywords: [],
  isDefault: false,
  active: true,
});
const SERVICES = [service("svc_plain", []), service("svc_rodent", ["rodent"]), service("svc_termite", ["termite"])];

const technician = (id: string, fields: Partial<Technician> = {}): Technician => ({
  id,
  name: id,
  skills: [],
  postalCodes: [],
  weeklyHours: null,
  daysOff: [],
  active: true,
  ...fields,
});

/** A visit of tech_x: an hour from `start` (ISO), its buffer to `occupiedUntil` (the end when absent). */
function visit(id: string, start: string, fields: Partial<BookedVisit> = {}): BookedVisit {
  const startsAt = at(start);
  return {
    id,
    serviceId: "svc_plain",
    technicianId: "tech_x",
    startsAt,
    endsAt: startsAt + 3_600_000,
    occupiedUntil: startsAt + 3_600_000,
    arrivalWindowMinutes: 0,
    postalCode: "10001",
    ...fields,
  };
}

describe("needsOf: the visit's local date, its service's skills now, its postal code normalised", () => {
  it.each<[string, string, Partial<BookedVisit>, Needs]>([
    ["late evening local is the day before in UTC", ZONE, {}, { date: "2026-03-08", skills: [], postalCode: "10001" }],
    ["the same instant in UTC", "UTC", {}, { date: "2026-03-09", skills: [], postalCode: "10001" }],
    [
      "a service's skills, a code with a space",
      ZONE,
      { serviceId: "svc_rodent", postalCode: "sw1a 1aa" },
      { date: "2026-03-08", skills: ["rodent"], postalCode: "SW1A1AA" },
    ],
    [
      "no service, a code with a dash",
      ZONE,
      { serviceId: null, postalCode: "10-001" },
      { date: "2026-03-08", skills: [], postalCode: "10001" },
    ],
    [
      "a service no longer listed, no code",
      ZONE,
      { serviceId: "svc_gone", postalCode: null },
      { date: "2026-03-08", skills: [], postalCode: null },
    ],
  ])("%s", (_, timeZone, fields, expected) => {
    expect(needsOf(visit("inc_1", "2026-03-09T03:30:00Z", fields), SERVICES, timeZone)).toEqual(expected);
  });
});

const BEFORE = technician("tech_x", {
  skills: ["rodent", "termite"],
  postalCodes: ["10", "SW1"],
  daysOff: ["2026-03-11"],
});
const NEEDS: Needs = { date: "2026-03-09", skills: ["rodent"], postalCode: "10001" };

describe("strands: only what the change takes away from what the visit needs", () => {
  it.each<[string, Partial<Technician>, Partial<Needs>, boolean]>([
    ["no change", {}, {}, false],
    ["deactivated", { active: false }, {}, true],
    ["a day off on its date", { daysOff: ["2026-03-11", "2026-03-09"] }, {}, true],
    ["a day off on another date", { daysOff: ["2026-03-11", "2026-03-12"] }, {}, false],
    ["its date was a day off already", {}, { date: "2026-03-11" }, false],
    ["a skill it needs removed", { skills: ["termite"] }, {}, true],
    ["a skill it does not need removed", { skills: ["rodent"] }, {}, false],
    ["a skill it needs but they never had", { skills: ["rodent"] }, { skills: ["bees"] }, false],
    ["the prefix covering its code removed", { postalCodes: ["SW1"] }, {}, true],
    ["narrowed to a prefix still covering it", { postalCodes: ["100"] }, {}, false],
    ["narrowed to a prefix not covering it", { postalCodes: ["11"] }, {}, true],
    ["widened to everywhere", { postalCodes: [] }, {}, false],
    ["prefixes changed, the visit has no code", { postalCodes: ["11"] }, { postalCode: null }, false],
    ["a code they did not cover before either", { postalCodes: ["11"] }, { postalCode: "20500" }, false],
  ])("%s", (_, changes, needs, expected) => {
    expect(strands({ before: BEFORE, after: { ...BEFORE, ...changes } }, { ...NEEDS, ...needs })).toBe(expected);
  });

  it("stranded keeps the stranded visits in their order", () => {
    const visits = [
      visit("inc_1", "2026-03-09T13:00:00Z"),
      visit("inc_2", "2026-03-10T13:00:00Z"),
      visit("inc_3", "2026-03-10T15:00:00Z", { postalCode: "20500" }),
      visit("inc_4", "2026-03-10T17:00:00Z", { serviceId: "svc_rodent" }),
    ];
    const after = { ...BEFORE, daysOff: [], skills: ["termite"] };
    expect(stranded({ before: BEFORE, after }, visits, SERVICES, ZONE).map((v) => v.id)).toEqual(["inc_4"]);
    const off = { ...BEFORE, daysOff: ["2026-03-11", "2026-03-10"] };
    expect(stranded({ before: BEFORE, after: off }, visits, SERVICES, ZONE).map((v) => v.id)).toEqual([
      "inc_2",
      "inc_3",
      "inc_4",
    ]);
  });
});

describe("restricts: whether the change takes anything away", () => {
  it.each<[string, Partial<Technician>, Partial<Technician>, boolean]>([
    ["no change", {}, {}, false],
    ["renamed", {}, { name: "Xavier" }, false],
    ["deactivated", {}, { active: false }, true],
    ["reactivated", { active: false }, { active: true }, false],
    ["a day off added", {}, { daysOff: ["2026-03-11", "2026-03-12"] }, true],
    ["a day off removed", {}, { daysOff: [] }, false],
    ["a skill removed", {}, { skills: ["rodent"] }, true],
    ["a skill added", {}, { skills: ["rodent", "termite", "bees"] }, false],
    ["everywhere narrowed to a prefix", { postalCodes: [] }, { postalCodes: ["10"] }, true],
    ["a prefix widened to everywhere", { postalCodes: ["10"] }, { postalCodes: [] }, false],
    ["a prefix narrowed", { postalCodes: ["10"] }, { postalCodes: ["100"] }, true],
    ["a prefix widened", { postalCodes: ["100"] }, { postalCodes: ["10"] }, false],
    ["a prefix added", { postalCodes: ["10"] }, { postalCodes: ["10", "11"] }, false],
    ["a prefix dropped", { postalCodes: ["10", "11"] }, { postalCodes: ["11"] }, true],
  ])("%s", (_, before, after, expected) => {
    const from = { ...BEFORE, ...before };
    expect(restricts({ before: from, after: { ...from, ...after } })).toBe(expected);
  });
});

describe("movesWindow: from the first visit's local midnight to the last one's next, or its occupied end", () => {
  it.each<[string, BookedVisit[], string, string]>([
    ["one visit", [visit("inc_1", "2026-03-09T13:00:00Z")], "2026-03-09T04:00:00.000Z", "2026-03-10T04:00:00.000Z"],
    [
      "from the DST day (midnight EST) to a day after it (midnight EDT)",
      [visit("inc_1", "2026-03-08T15:00:00Z"), visit("inc_2", "2026-03-09T13:00:00Z")],
      "2026-03-08T05:00:00.000Z",
      "2026-03-10T04:00:00.000Z",
    ],
    [
      "a buffer past midnight",
      [visit("inc_1", "2026-03-10T02:00:00Z", { occupiedUntil: at("2026-03-10T05:00:00Z") })],
      "2026-03-09T04:00:00.000Z",
      "2026-03-10T05:00:00.000Z",
    ],
    [
      "the 25-hour day DST ends",
      [visit("inc_1", "2026-11-01T15:00:00Z")],
      "2026-11-01T04:00:00.000Z",
      "2026-11-02T05:00:00.000Z",
    ],
  ])("%s", (_, visits, start, end) => {
    const window = movesWindow(visits, ZONE);
    expect([new Date(window.start).toISOString(), new Date(window.end).toISOString()]).toEqual([start, end]);
  });
});

// tech_a covers 10…, tech_b everywhere but is off on Tuesday 2026-03-10, tech_c covers 11… only.
const OTHERS = [
  technician("tech_a", { skills: ["rodent"], postalCodes: ["10"] }),
  technician("tech_b", { skills: ["rodent", "termite"], daysOff: ["2026-03-10"] }),
  technician("tech_c", { postalCodes: ["11"] }),
];
const booking = (technicianId: string, start: string, end: string): Booking => ({
  startsAt: at(start),
  endsAt: at(end),
  technicianId,
});

describe("place: each visit to the first technician assignmentOrder gives, the run's earlier moves counted", () => {
  it.each<[string, BookedVisit[], { visits: Booking[]; held: Booking[] }, [string, string][], string[]]>([
    [
      "the fewest visits that day first",
      [visit("inc_1", "2026-03-09T13:00:00Z")],
      { visits: [booking("tech_a", "2026-03-09T18:00:00Z", "2026-03-09T19:00:00Z")], held: [] },
      [["inc_1", "tech_b"]],
      [],
    ],
    ["ties by id", [visit("inc_1", "2026-03-09T13:00:00Z")], { visits: [], held: [] }, [["inc_1", "tech_a"]], []],
    [
      "a live hold over the span makes its technician busy",
      [visit("inc_1", "2026-03-09T13:00:00Z")],
      {
        visits: [booking("tech_a", "2026-03-09T18:00:00Z", "2026-03-09T19:00:00Z")],
        held: [booking("tech_b", "2026-03-09T13:30:00Z", "2026-03-09T14:00:00Z")],
      },
      [["inc_1", "tech_a"]],
      [],
    ],
    [
      "a live hold elsewhere that day is not one of the day's visits",
      [visit("inc_1", "2026-03-09T13:00:00Z")],
      {
        visits: [booking("tech_a", "2026-03-09T18:00:00Z", "2026-03-09T19:00:00Z")],
        held: [booking("tech_b", "2026-03-09T20:00:00Z", "2026-03-09T21:00:00Z")],
      },
      [["inc_1", "tech_b"]],
      [],
    ],
    [
      "the visit's buffer as booked counts for busy",
      [visit("inc_1", "2026-03-09T13:00:00Z", { occupiedUntil: at("2026-03-09T14:30:00Z") })],
      { visits: [booking("tech_a", "2026-03-09T14:15:00Z", "2026-03-09T15:00:00Z")], held: [] },
      [["inc_1", "tech_b"]],
      [],
    ],
    [
      "duty covers the visit, not its buffer: 16:00–17:00 local with a buffer past closing",
      [visit("inc_1", "2026-03-09T20:00:00Z", { occupiedUntil: at("2026-03-09T21:30:00Z") })],
      { visits: [], held: [] },
      [["inc_1", "tech_a"]],
      [],
    ],
    [
      "a visit placed earlier in the run counts for the next",
      [visit("inc_1", "2026-03-09T13:00:00Z"), visit("inc_2", "2026-03-09T15:00:00Z")],
      { visits: [], held: [] },
      [
        ["inc_1", "tech_a"],
        ["inc_2", "tech_b"],
      ],
      [],
    ],
    [
      "none eligible and on duty: the only one qualified is off that day",
      [visit("inc_1", "2026-03-10T13:00:00Z", { serviceId: "svc_termite" }), visit("inc_2", "2026-03-10T15:00:00Z")],
      { visits: [], held: [] },
      [["inc_2", "tech_a"]],
      ["inc_1"],
    ],
    [
      "the one covering its code is off that day",
      [visit("inc_1", "2026-03-10T13:00:00Z", { postalCode: "20500" })],
      { visits: [], held: [] },
      [],
      ["inc_1"],
    ],
  ])("%s", (_, visits, around, moves, unplaced) => {
    const placed = place(visits, { services: SERVICES, technicians: OTHERS }, SCHEDULE, around);
    expect(placed.moves.map((m) => [m.visit.id, m.to])).toEqual(moves);
    expect(placed.unplaced).toEqual(unplaced);
  });
});
