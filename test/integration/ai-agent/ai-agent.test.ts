// The ai-agent group (docs/api.md, "Scheduling"), driven over fetch against the real
// clock. Every instant is chosen relative to today 00:00 UTC or to the current
// whole hour so that the expectations hold whatever the day and hour of the run.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createKey } from "../../../src/db/api-keys";
import { type Interval, WEEKDAYS, type Weekday } from "../../../src/scheduling/schedule";
import { isProblem } from "../../support/problem";
import { call } from "../../support/request";
import { everyDay } from "../../support/schedules";
import {
  addAccount,
  db,
  newTenant,
  openAlways,
  openTenant,
  type ScheduleDocument,
  type Tenant,
} from "../../support/tenants";
import { DAY, daysAhead, HOUR, hoursAhead, iso, MINUTE, today } from "../../support/time";

const AVAILABLE = "/api/v1/ai-agent/available-appointments";
const CHECK = "/api/v1/ai-agent/is-booking-available";
const CREATE = "/api/v1/ai-agent/create-incident";

type WeeklyHours = Partial<Record<Weekday, Interval[]>>;

/** A fixed instant two days ahead: 10:00 UTC the day after tomorrow. */
const soon = () => daysAhead(2, 10);
const utcDate = (t: number) => iso(t).slice(0, 10);
const weekdayOf = (t: number): Weekday => WEEKDAYS[(new Date(t).getUTCDay() + 6) % 7]!;
const hhmm = (hour: number) => `${String(hour).padStart(2, "0")}:00`;

const onDays = (days: readonly Weekday[], ...hours: Interval[]): WeeklyHours =>
  Object.fromEntries(days.map((d) => [d, hours]));
/** Open only for the one hour starting at whole-hour UTC instant `t`, on t's weekday. */
const onlyHourOf = (t: number): WeeklyHours => {
  const hour = new Date(t).getUTCHours();
  return onDays([weekdayOf(t)], [hhmm(hour), hhmm(hour + 1)]);
};

/**
 * Changes a tenant's schedule and returns it with a new key: an isolate keeps a
 * verified key's org, schedule included, for AUTH_CACHE_TTL_MS (3 s), and a key
 * it has not verified yet reads the new schedule at once.
 */
async function rescheduled(tenant: Tenant, document: ScheduleDocument) {
  await openAlways(tenant, document);
  return { ...tenant, apiKey: (await createKey(db(), tenant.orgId))!.apiKey };
}

/** A new org with a UTC, always-open, no-notice schedule overridden by `document`. */
const tenantWith = (document: ScheduleDocument = {}, name?: string) => openTenant(name, document);

const list = (tenant: Tenant, dateTime: number | string, limit?: number) =>
  call(tenant, AVAILABLE, {
    body: {
      dateTime: typeof dateTime === "number" ? iso(dateTime) : dateTime,
      ...(limit === undefined ? {} : { limit }),
    },
  });
const check = (tenant: Tenant, at: number | string) =>
  call(tenant, CHECK, { body: { dateTime: typeof at === "number" ? iso(at) : at } });
const book = (tenant: Tenant, at: number, clientName = "Client", insectName = "Ants") =>
  call(tenant, CREATE, { body: { dateTime: iso(at), clientName, insectName } });

const countIncidents = async (tenant: Tenant) =>
  (
    await env.DB.prepare("SELECT count(*) AS n FROM incidents WHERE org_id = ?")
      .bind(tenant.orgId)
      .first<{ n: number }>()
  )?.n;

/** create-incident's appointment on a UTC schedule: the visit's times and the places left. */
const bookedOf = (start: number, remaining = 1, minutes = 60) => ({
  start: iso(start),
  end: iso(start + minutes * MINUTE),
  localStart: `${iso(start).slice(0, 19)}+00:00`,
  localEnd: `${iso(start + minutes * MINUTE).slice(0, 19)}+00:00`,
  remaining,
});

/** The slot object of a UTC schedule (an org without services: no service, no arrival window). */
const slotOf = (start: number, remaining = 1, minutes = 60) => ({
  ...bookedOf(start, remaining, minutes),
  serviceId: null,
  arrivalWindow: null,
});

const startsOf = (slots: { start: string }[]) => slots.map((s) => Date.parse(s.start));

function expectAscending(times: number[]) {
  for (let i = 1; i < times.length; i++) expect(times[i]!).toBeGreaterThan(times[i - 1]!);
}

/** The first instant from today+2 days at 00:00 UTC whose UTC month is one of `months`. */
function firstDayInMonths(months: number[]) {
  for (let t = today() + 2 * DAY; ; t += DAY) if (months.includes(new Date(t).getUTCMonth() + 1)) return t;
}

describe("POST /api/v1/ai-agent/available-appointments", () => {
  it("lists the first `limit` bookable slots from dateTime, ascending, with UTC wall-clock times", async () => {
    const tenant = await tenantWith();
    const at = soon();
    const res = await list(tenant, at, 3);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ timeZone: "UTC", slots: [slotOf(at), slotOf(at + HOUR), slotOf(at + 2 * HOUR)] });
  });

  it("starts at the next slot boundary when dateTime falls between slots", async () => {
    const tenant = await tenantWith();
    const at = soon();
    const res = await list(tenant, iso(at + 30 * MINUTE).replace("Z", "+00:00"), 2);
    expect(res.body.slots).toEqual([slotOf(at + HOUR), slotOf(at + 2 * HOUR)]);
  });

  it("lifts an earlier dateTime to now + minNoticeMinutes", async () => {
    const tenant = await tenantWith({ minNoticeMinutes: 90 });
    const before = Date.now();
    const res = await list(tenant, "2000-01-01T00:00:00Z", 2);
    const after = Date.now();
    expect(res.status).toBe(200);
    const [first, second] = startsOf(res.body.slots);
    expect(first).toBeGreaterThanOrEqual(Math.ceil((before + 90 * MINUTE) / HOUR) * HOUR);
    expect(first).toBeLessThanOrEqual(Math.ceil((after + 90 * MINUTE) / HOUR) * HOUR);
    expect(second).toBe(first! + HOUR);
  });

  it.each([
    ["omitted", 10, undefined],
    ["1", 1, 1],
    ["100", 100, 100],
  ])("returns, for limit %s, %i slots", async (_label, expected, limit) => {
    const tenant = await tenantWith();
    const at = soon();
    const res = await list(tenant, at, limit);
    expect(res.status).toBe(200);
    expect(startsOf(res.body.slots)).toEqual(Array.from({ length: expected }, (_, i) => at + i * HOUR));
  });

  it("lists nothing at or after now + horizonDays", async () => {
    const tenant = await tenantWith({ horizonDays: 1 });
    const before = Date.now();
    const res = await list(tenant, "2000-01-01T00:00:00Z", 100);
    const after = Date.now();
    const starts = startsOf(res.body.slots);
    // Hourly slots starting in [now, now + 24 h): always 24 of them.
    expect(starts).toHaveLength(24);
    expectAscending(starts);
    expect(starts[0]!).toBeGreaterThanOrEqual(before);
    expect(starts.at(-1)!).toBeLessThan(after + DAY);
  });

  it("follows the weekly hours and skips closed weekdays", async () => {
    const day = today() + 2 * DAY;
    const tenant = await tenantWith({ weeklyHours: onDays([weekdayOf(day)], ["09:00", "17:00"]) });
    const res = await list(tenant, day, 9);
    const expected = [...Array.from({ length: 8 }, (_, i) => day + (9 + i) * HOUR), day + 7 * DAY + 9 * HOUR];
    expect(startsOf(res.body.slots)).toEqual(expected);
  });

  it("skips closed dates", async () => {
    const day = today() + 2 * DAY;
    const tenant = await tenantWith({ closedDates: [utcDate(day), utcDate(day + DAY)] });
    const res = await list(tenant, day, 2);
    expect(res.body.slots).toEqual([slotOf(day + 2 * DAY), slotOf(day + 2 * DAY + HOUR)]);
  });

  it("skips full slots and reports the places left", async () => {
    const tenant = await tenantWith({ capacity: 2 });
    const at = soon();
    for (const t of [at, at, at + HOUR]) expect((await book(tenant, t)).status).toBe(200);
    const res = await list(tenant, at, 3);
    expect(res.body.slots).toEqual([slotOf(at + HOUR, 1), slotOf(at + 2 * HOUR, 2), slotOf(at + 3 * HOUR, 2)]);
  });

  it.each([
    ["every weekday is closed", true, (): ScheduleDocument => ({ weeklyHours: {} })],
    [
      "every date of the horizon is closed",
      true,
      (): ScheduleDocument => ({ horizonDays: 3, closedDates: [0, 1, 2, 3, 4].map((i) => utcDate(today() + i * DAY)) }),
    ],
    ["dateTime is beyond the horizon", false, (): ScheduleDocument => ({ horizonDays: 2 })],
  ])("returns an empty list when %s", async (_case, nothingAtAll, document) => {
    const tenant = await tenantWith(document());
    const res = await list(tenant, today() + 5 * DAY, 100);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ timeZone: "UTC", slots: [] });
    const fromPast = await list(tenant, "2000-01-01T00:00:00Z", 100);
    expect(fromPast.body.slots.length === 0).toBe(nothingAtAll);
  });

  it("gives wall-clock times with a half-hour offset in Asia/Kolkata", async () => {
    const day = today() + 2 * DAY;
    const tenant = await tenantWith({ timeZone: "Asia/Kolkata", weeklyHours: everyDay(["09:00", "17:00"]) });
    // 00:00 UTC is 05:30 in Kolkata, on the same date: the first slot opens at 09:00 local.
    const res = await list(tenant, day, 2);
    expect(res.body).toEqual({
      timeZone: "Asia/Kolkata",
      slots: [
        {
          start: iso(day + 3.5 * HOUR),
          end: iso(day + 4.5 * HOUR),
          localStart: `${utcDate(day)}T09:00:00+05:30`,
          localEnd: `${utcDate(day)}T10:00:00+05:30`,
          remaining: 1,
          serviceId: null,
          arrivalWindow: null,
        },
        {
          start: iso(day + 4.5 * HOUR),
          end: iso(day + 5.5 * HOUR),
          localStart: `${utcDate(day)}T10:00:00+05:30`,
          localEnd: `${utcDate(day)}T11:00:00+05:30`,
          remaining: 1,
          serviceId: null,
          arrivalWindow: null,
        },
      ],
    });
  });

  it.each([
    ["winter", [12, 1, 2], "-05:00", 14],
    ["summer", [6, 7, 8], "-04:00", 13],
  ])("gives America/New_York %s times with offset %s", async (_season, months, offset, utcHour) => {
    const day = firstDayInMonths(months);
    const tenant = await tenantWith({
      timeZone: "America/New_York",
      horizonDays: 365,
      weeklyHours: everyDay(["09:00", "17:00"]),
    });
    const res = await list(tenant, day + 12 * HOUR, 1);
    expect(res.body).toEqual({
      timeZone: "America/New_York",
      slots: [
        {
          start: iso(day + utcHour * HOUR),
          end: iso(day + (utcHour + 1) * HOUR),
          localStart: `${utcDate(day)}T09:00:00${offset}`,
          localEnd: `${utcDate(day)}T10:00:00${offset}`,
          remaining: 1,
          serviceId: null,
          arrivalWindow: null,
        },
      ],
    });
  });
});

interface Scenario {
  tenant: Tenant;
  at: number;
  /** Places left in the slot at `at`, or null when `at` is not a slot start. */
  slot: number | null;
  alternatives: number[];
}

/** One case per reason (and per precedence worth pinning), each on a fresh tenant. */
const REASONS: [string, string, () => Promise<Scenario>][] = [
  [
    "in_the_past",
    "an hour ago, on a whole slot",
    async () => {
      const at = Math.floor(Date.now() / HOUR) * HOUR - HOUR;
      return {
        tenant: await tenantWith({ weeklyHours: onlyHourOf(at) }),
        at,
        slot: 1,
        alternatives: [at + 7 * DAY, at + 14 * DAY, at + 21 * DAY],
      };
    },
  ],
  [
    "in_the_past",
    "in the past and closed",
    async () => {
      const at = Math.floor(Date.now() / HOUR) * HOUR - HOUR;
      return { tenant: await tenantWith({ weeklyHours: {} }), at, slot: null, alternatives: [] };
    },
  ],
  [
    "beyond_horizon",
    "a slot start past the horizon",
    async () => ({
      tenant: await tenantWith({ horizonDays: 2 }),
      at: daysAhead(5, 10),
      slot: 1,
      alternatives: [],
    }),
  ],
  [
    "beyond_horizon",
    "past the horizon on a closed date",
    async () => {
      const at = daysAhead(5, 10);
      return {
        tenant: await tenantWith({ horizonDays: 2, closedDates: [utcDate(at)] }),
        at,
        slot: null,
        alternatives: [],
      };
    },
  ],
  [
    "closed",
    "outside the weekly hours",
    async () => {
      const day = today() + 2 * DAY;
      return {
        tenant: await tenantWith({ weeklyHours: everyDay(["08:00", "17:00"]) }),
        at: day + 20 * HOUR,
        slot: null,
        alternatives: [day + DAY + 8 * HOUR, day + DAY + 9 * HOUR, day + DAY + 10 * HOUR],
      };
    },
  ],
  [
    "closed",
    "at closing time",
    async () => {
      const day = today() + 2 * DAY;
      return {
        tenant: await tenantWith({ weeklyHours: everyDay(["08:00", "17:00"]) }),
        at: day + 17 * HOUR,
        slot: null,
        alternatives: [day + DAY + 8 * HOUR, day + DAY + 9 * HOUR, day + DAY + 10 * HOUR],
      };
    },
  ],
  [
    "closed",
    "on a closed weekday",
    async () => {
      const day = today() + 2 * DAY;
      return {
        tenant: await tenantWith({ weeklyHours: onDays([weekdayOf(day + DAY)], ["08:00", "17:00"]) }),
        at: day + 10 * HOUR,
        slot: null,
        alternatives: [day + DAY + 8 * HOUR, day + DAY + 9 * HOUR, day + DAY + 10 * HOUR],
      };
    },
  ],
  [
    "closed",
    "on a closed date",
    async () => {
      const day = today() + 2 * DAY;
      return {
        tenant: await tenantWith({ closedDates: [utcDate(day)] }),
        at: day + 10 * HOUR,
        slot: null,
        alternatives: [day + DAY, day + DAY + HOUR, day + DAY + 2 * HOUR],
      };
    },
  ],
  [
    "not_a_slot_start",
    "between two slot starts",
    async () => {
      const at = soon();
      return {
        tenant: await tenantWith(),
        at: at + 30 * MINUTE,
        slot: null,
        alternatives: [at + HOUR, at + 2 * HOUR, at + 3 * HOUR],
      };
    },
  ],
  [
    "not_a_slot_start",
    "in opening hours where no whole slot fits before closing",
    async () => {
      const day = today() + 2 * DAY;
      return {
        tenant: await tenantWith({ weeklyHours: everyDay(["08:00", "17:30"]) }),
        at: day + 17 * HOUR,
        slot: null,
        alternatives: [day + DAY + 8 * HOUR, day + DAY + 9 * HOUR, day + DAY + 10 * HOUR],
      };
    },
  ],
  [
    "not_a_slot_start",
    "off a slot boundary and too soon",
    async () => {
      const hour = hoursAhead(2);
      return {
        tenant: await tenantWith({ minNoticeMinutes: 300, weeklyHours: onlyHourOf(hour) }),
        at: hour + 30 * MINUTE,
        slot: null,
        alternatives: [hour + 7 * DAY, hour + 14 * DAY, hour + 21 * DAY],
      };
    },
  ],
  [
    "too_soon",
    "a free slot before now + minNoticeMinutes",
    async () => {
      const at = hoursAhead(2);
      return {
        tenant: await tenantWith({ minNoticeMinutes: 300, weeklyHours: onlyHourOf(at) }),
        at,
        slot: 1,
        alternatives: [at + 7 * DAY, at + 14 * DAY, at + 21 * DAY],
      };
    },
  ],
  [
    "too_soon",
    "a full slot before now + minNoticeMinutes",
    async () => {
      const at = hoursAhead(2);
      const booker = await tenantWith({ weeklyHours: onlyHourOf(at) });
      expect((await book(booker, at)).status).toBe(200);
      const tenant = await rescheduled(booker, { minNoticeMinutes: 300, weeklyHours: onlyHourOf(at) });
      return { tenant, at, slot: 0, alternatives: [at + 7 * DAY, at + 14 * DAY, at + 21 * DAY] };
    },
  ],
  [
    "fully_booked",
    "a slot holding capacity bookings",
    async () => {
      const at = soon();
      const tenant = await tenantWith();
      expect((await book(tenant, at)).status).toBe(200);
      return { tenant, at, slot: 0, alternatives: [at + HOUR, at + 2 * HOUR, at + 3 * HOUR] };
    },
  ],
];

describe("POST /api/v1/ai-agent/is-booking-available", () => {
  it("says a free bookable slot is available, with its slot and the next ones", async () => {
    const tenant = await tenantWith();
    const at = soon();
    const res = await check(tenant, at);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      dateTime: iso(at),
      available: true,
      reason: null,
      slot: slotOf(at),
      alternatives: [slotOf(at + HOUR), slotOf(at + 2 * HOUR), slotOf(at + 3 * HOUR)],
    });
  });

  it("answers dateTime as an ISO instant whatever offset it was given in", async () => {
    const tenant = await tenantWith();
    const at = soon();
    const res = await check(tenant, `${utcDate(at)}T12:00:00+02:00`);
    expect(res.body).toMatchObject({ dateTime: iso(at), available: true, slot: slotOf(at) });
  });

  // Each case also asks create-incident, which must refuse with the same reason and alternatives.
  it.each(REASONS)("reason %s (%s), and create-incident refuses it with 409", async (reason, _case, setup) => {
    const { tenant, at, slot, alternatives } = await setup();
    const res = await check(tenant, at);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      dateTime: iso(at),
      available: false,
      reason,
      slot: slot === null ? null : slotOf(at, slot),
      alternatives: alternatives.map((t) => slotOf(t)),
    });
    const before = await countIncidents(tenant);
    const refused = await book(tenant, at);
    expect(refused.status).toBe(409);
    expect(refused.headers.get("Content-Type")).toBe("application/problem+json");
    expect(isProblem(refused.body)).toBe(true);
    expect(refused.body).toMatchObject({
      status: 409,
      code: "slot_unavailable",
      reason,
      alternatives: alternatives.map((t) => slotOf(t)),
    });
    expect(await countIncidents(tenant)).toBe(before);
  });

  it("offers as alternatives up to 3 bookable slots strictly after dateTime, ascending, skipping full ones", async () => {
    const tenant = await tenantWith();
    const at = soon();
    expect((await book(tenant, at + HOUR)).status).toBe(200);
    for (const from of [at, at + 30 * MINUTE, at - 1]) {
      const res = await check(tenant, from);
      const alternatives = startsOf(res.body.alternatives);
      expect(alternatives).toEqual(
        from === at - 1 ? [at, at + 2 * HOUR, at + 3 * HOUR] : [at + 2 * HOUR, at + 3 * HOUR, at + 4 * HOUR],
      );
      for (const t of alternatives) {
        expect(t).toBeGreaterThan(from);
        expect((await check(tenant, t)).body.available).toBe(true);
      }
    }
  });

  it("offers fewer than 3 alternatives when fewer are bookable", async () => {
    const day = today() + 2 * DAY;
    const closedDates = Array.from({ length: 40 }, (_, i) => utcDate(day + (i + 1) * DAY));
    const tenant = await tenantWith({ closedDates });
    const late = await check(tenant, day + 21 * HOUR);
    expect(late.body).toMatchObject({
      available: true,
      alternatives: [slotOf(day + 22 * HOUR), slotOf(day + 23 * HOUR)],
    });
    const last = await check(tenant, day + 23 * HOUR);
    expect(last.body).toMatchObject({ available: true, slot: slotOf(day + 23 * HOUR), alternatives: [] });
  });

  it("reads closedDates and weekly hours on the org's local date (Asia/Kolkata)", async () => {
    const day = today() + 3 * DAY;
    const tenant = await tenantWith({ timeZone: "Asia/Kolkata", closedDates: [utcDate(day)] });
    // 18:30 UTC the day before is 00:00 local on the closed date; 17:30 UTC is 23:00 local the day before.
    const closed = await check(tenant, day - 5.5 * HOUR);
    expect(closed.body).toMatchObject({ available: false, reason: "closed", slot: null });
    const open = await check(tenant, day - 6.5 * HOUR);
    expect(open.body).toMatchObject({
      available: true,
      slot: {
        start: iso(day - 6.5 * HOUR),
        end: iso(day - 5.5 * HOUR),
        localStart: `${utcDate(day - DAY)}T23:00:00+05:30`,
        localEnd: `${utcDate(day)}T00:00:00+05:30`,
        remaining: 1,
      },
    });
    // Local whole hours fall on UTC half hours.
    expect((await check(tenant, day - 6 * HOUR)).body.reason).toBe("not_a_slot_start");
    // After the closed local date, slots resume at 00:00 local.
    const next = day + DAY - 5.5 * HOUR;
    expect(startsOf(open.body.alternatives)).toEqual([next, next + HOUR, next + 2 * HOUR]);
  });
});

describe("POST /api/v1/ai-agent/create-incident", () => {
  it("books the slot at dateTime and returns the incident", async () => {
    const tenant = await tenantWith();
    const at = soon();
    const before = Date.now();
    const res = await book(tenant, at, "Jane Doe", "Termites");
    const after = Date.now();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^inc_/),
      status: "scheduled",
      dateTime: iso(at),
      clientName: "Jane Doe",
      insectName: "Termites",
      accountId: null,
      phone: null,
      notes: null,
      serviceId: null,
      technicianId: null,
      postalCode: null,
      appointment: bookedOf(at, 0),
      arrivalWindow: null,
      createdAt: expect.any(String),
      updatedAt: res.body.createdAt,
      cancelledAt: null,
      cancelReason: null,
      closedAt: null,
      outcomeNote: null,
      planId: null,
    });
    expect(Date.parse(res.body.createdAt)).toBeGreaterThanOrEqual(before - 1);
    expect(Date.parse(res.body.createdAt)).toBeLessThanOrEqual(after + 1);
    expect(await countIncidents(tenant)).toBe(1);
    expect((await check(tenant, at)).body).toMatchObject({
      available: false,
      reason: "fully_booked",
      slot: slotOf(at, 0),
    });
  });

  it("trims clientName and insectName and accepts 200 characters", async () => {
    const tenant = await tenantWith();
    const at = soon();
    const name = "n".repeat(200);
    const res = await book(tenant, at, `  ${name}  `, "\tWasps \n");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ clientName: name, insectName: "Wasps" });
  });

  it("fills a slot of capacity 2 with two bookings and refuses the third", async () => {
    const tenant = await tenantWith({ capacity: 2 });
    const at = soon();
    const first = await book(tenant, at);
    expect(first.body.appointment).toEqual(bookedOf(at, 1));
    expect((await list(tenant, at, 1)).body.slots).toEqual([slotOf(at, 1)]);
    expect((await check(tenant, at)).body).toMatchObject({ available: true, slot: slotOf(at, 1) });
    const second = await book(tenant, at);
    expect(second.body.appointment).toEqual(bookedOf(at, 0));
    const third = await book(tenant, at);
    expect(third.status).toBe(409);
    expect(third.body).toMatchObject({ code: "slot_unavailable", reason: "fully_booked" });
    expect(await countIncidents(tenant)).toBe(2);
    expect(new Set([first.body.id, second.body.id]).size).toBe(2);
  });

  it("books exactly capacity places when requests race", async () => {
    const tenant = await tenantWith({ capacity: 3 });
    const at = soon();
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => book(tenant, at, `Racer ${i}`)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(3);
    expect(results.filter((r) => r.status === 409 && r.body.reason === "fully_booked")).toHaveLength(5);
    expect(await countIncidents(tenant)).toBe(3);
  });

  it("keeps a booking made under 90-minute slots holding every 60-minute slot it overlaps", async () => {
    const before = await tenantWith({ slotMinutes: 90, capacity: 2 });
    const at = daysAhead(2, 9); // 540 min: a 90-minute slot start
    const booked = await book(before, at);
    expect(booked.body.appointment).toEqual(bookedOf(at, 1, 90));
    const tenant = await rescheduled(before, { slotMinutes: 60, capacity: 2 });
    const remaining = await Promise.all(
      [-1, 0, 1, 2].map(async (h) => (await check(tenant, at + h * HOUR)).body.slot.remaining),
    );
    expect(remaining).toEqual([2, 1, 1, 2]);
    expect((await list(tenant, at - HOUR, 4)).body.slots).toEqual([
      slotOf(at - HOUR, 2),
      slotOf(at, 1),
      slotOf(at + HOUR, 1),
      slotOf(at + 2 * HOUR, 2),
    ]);
    expect((await book(tenant, at + HOUR)).body.appointment).toEqual(bookedOf(at + HOUR, 0));
    expect((await book(tenant, at + HOUR)).body.reason).toBe("fully_booked");
    expect((await book(tenant, at)).body.appointment).toEqual(bookedOf(at, 0));
    // A booking ending as a slot starts does not hold it.
    expect((await list(tenant, at, 2)).body.slots).toEqual([slotOf(at + 2 * HOUR, 2), slotOf(at + 3 * HOUR, 2)]);
  });

  it.each([
    ["matches case-insensitively after trimming", ["Acme Pest Control"], "  acme PEST control ", 0],
    ["matches by Unicode lower case", ["Émile Zoë"], "ÉMILE ZOË", 0],
    ["is null when no account has that name", ["Acme"], "Acme Pest", null],
    ["is null when two accounts share the name", ["Twin Co", "TWIN CO"], "twin co", null],
  ] as const)("accountId %s", async (_case, names, clientName, match) => {
    const tenant = await tenantWith();
    const accounts = [];
    for (const name of names) accounts.push(await addAccount(tenant, name));
    const res = await book(tenant, soon(), clientName);
    expect(res.status).toBe(200);
    expect(res.body.clientName).toBe(clientName.trim());
    expect(res.body.accountId).toBe(match === null ? null : accounts[match]!.id);
  });

  it("never links another org's account", async () => {
    const other = await newTenant("Other");
    await addAccount(other, "Foreign Ltd");
    const tenant = await tenantWith();
    const res = await book(tenant, soon(), "Foreign Ltd");
    expect(res.status).toBe(200);
    expect(res.body.accountId).toBeNull();
  });
});

describe("consistency and isolation", () => {
  it("lists a slot ⇔ says it is available ⇔ books it", { timeout: 60_000 }, async () => {
    const day = today() + 2 * DAY;
    const tenant = await tenantWith({
      weeklyHours: everyDay(["08:00", "12:00"], ["13:00", "17:00"]),
      capacity: 2,
      closedDates: [utcDate(day + DAY)],
    });
    for (const t of [day + 9 * HOUR, day + 9 * HOUR, day + 10 * HOUR]) expect((await book(tenant, t)).status).toBe(200);
    const listed = new Map<number, number>(
      (await list(tenant, day, 100)).body.slots
        .filter((s: { start: string }) => Date.parse(s.start) < day + 3 * DAY)
        .map((s: { start: string; remaining: number }) => [Date.parse(s.start), s.remaining]),
    );
    // day: 8 slots but 09:00 full; day + 1: closed; day + 2: 8 slots.
    expect(listed.size).toBe(15);
    expect(listed.get(day + 10 * HOUR)).toBe(1);
    // Every half hour from 06:00 to 18:00 of the three days: all the listed slots and every kind of unlisted instant.
    const instants = [0, 1, 2].flatMap((d) =>
      Array.from({ length: 25 }, (_, i) => day + d * DAY + 6 * HOUR + i * 30 * MINUTE),
    );
    expect([...listed.keys()].every((t) => instants.includes(t))).toBe(true);
    const checks = await Promise.all(instants.map((t) => check(tenant, t)));
    checks.forEach((res, i) => {
      const t = instants[i]!;
      expect(res.body.available, iso(t)).toBe(listed.has(t));
      if (listed.has(t)) expect(res.body.slot.remaining).toBe(listed.get(t));
    });
    const refused = await Promise.all(instants.filter((t) => !listed.has(t)).map((t) => book(tenant, t)));
    expect(refused.map((r) => r.status)).toEqual(refused.map(() => 409));
    expect(await countIncidents(tenant)).toBe(3);
    const accepted = await Promise.all([...listed.keys()].map((t) => book(tenant, t)));
    expect(accepted.map((r) => r.status)).toEqual(accepted.map(() => 200));
    expect(await countIncidents(tenant)).toBe(3 + 15);
  });

  it("leaves org B's availability untouched by org A's bookings", async () => {
    const a = await tenantWith({}, "Org A");
    const b = await tenantWith({}, "Org B");
    const at = soon();
    expect((await book(a, at)).status).toBe(200);
    expect((await check(a, at)).body.reason).toBe("fully_booked");
    expect((await check(b, at)).body).toMatchObject({ available: true, slot: slotOf(at, 1) });
    expect((await list(b, at, 1)).body.slots).toEqual([slotOf(at, 1)]);
    expect((await book(b, at)).body.appointment).toEqual(bookedOf(at, 0));
    expect((await list(a, at, 1)).body.slots).toEqual([slotOf(at + HOUR, 1)]);
    expect(await countIncidents(a)).toBe(1);
    expect(await countIncidents(b)).toBe(1);
  });
});

describe("validation and methods", () => {
  const valid = "2026-11-23T14:00:00Z";
  it.each([
    [AVAILABLE, {}, "dateTime", "required"],
    [AVAILABLE, { dateTime: "2026-11-23T14:00:00" }, "dateTime", "invalid_format"],
    [AVAILABLE, { dateTime: valid, limit: 0 }, "limit", "out_of_range"],
    [AVAILABLE, { dateTime: valid, limit: 101 }, "limit", "out_of_range"],
    [AVAILABLE, { dateTime: valid, foo: 1 }, "foo", "unknown_field"],
    [CHECK, {}, "dateTime", "required"],
    [CHECK, { dateTime: "2026-02-30T10:00:00Z" }, "dateTime", "invalid_format"],
    [CHECK, { dateTime: valid, limit: 3 }, "limit", "unknown_field"],
    [CREATE, { clientName: "Ann", insectName: "Ants" }, "dateTime", "required"],
    [CREATE, { dateTime: valid, clientName: "  ", insectName: "Ants" }, "clientName", "required"],
    [CREATE, { dateTime: valid, clientName: "x".repeat(201), insectName: "Ants" }, "clientName", "too_long"],
    [CREATE, { dateTime: valid, clientName: "Ann" }, "insectName", "required"],
    [CREATE, { dateTime: valid, clientName: "Ann", insectName: "Ants", comments: "x" }, "comments", "unknown_field"],
  ] as const)("%s %j → 422 %s %s", async (path, body, field, code) => {
    const tenant = await tenantWith();
    const res = await call(tenant, path, { body });
    expect(res.status).toBe(422);
    expect(res.headers.get("Content-Type")).toBe("application/problem+json");
    expect(isProblem(res.body)).toBe(true);
    expect(res.body.code).toBe("validation_failed");
    expect(res.body.errors).toEqual([{ path: field, code, message: expect.any(String) }]);
    expect(await countIncidents(tenant)).toBe(0);
  });

  it.each([
    ["client_name", "clientName"],
    ["Client-Name", "clientName"],
    ["insect_name", "insectName"],
    ["date_time", "dateTime"],
  ])("create-incident with %s → 422 unknown_field, did you mean '%s'?", async (sent, known) => {
    const tenant = await tenantWith();
    const body = { dateTime: valid, clientName: "Ann", insectName: "Ants", [sent]: "x" };
    const res = await call(tenant, CREATE, { body });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([
      { path: sent, code: "unknown_field", message: `unknown field; did you mean '${known}'?` },
    ]);
    expect(await countIncidents(tenant)).toBe(0);
  });

  it.each([AVAILABLE, CHECK, CREATE])("GET %s → 405 with Allow: POST", async (path) => {
    const res = await call(await newTenant(), path, { method: "GET" });
    expect(res.status).toBe(405);
    expect(res.headers.get("Allow")).toBe("POST");
    expect(res.body.code).toBe("method_not_allowed");
  });
});
