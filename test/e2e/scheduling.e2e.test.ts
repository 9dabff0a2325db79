// End-to-end proof of the ai-agent scheduling endpoints (docs/api.md, "Scheduling")
// against a real `wrangler dev` over a real local D1, with schedules set only
// through the admin CLI: racing bookings never overbook a slot, the agent's
// find → check → book flow sees its own booking, accounts are linked by name,
// DST days have the right slots, bookings stay within their org, and an
// invalid schedule document is refused without changing the stored one.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { everyDay, OPEN_ALWAYS } from "../support/schedules";
import { DAY, HOUR, slotAt } from "../support/time";
import {
  type ApiResponse,
  admin,
  applyMigrations,
  DevServer,
  freePort,
  jsonLine,
  request,
  type Tenant,
} from "./harness";

interface Imported {
  imported: number;
  accounts: { id: string; name: string }[];
}
interface SlotView {
  start: string;
  end: string;
  localStart: string;
  localEnd: string;
  remaining: number;
  serviceId?: null;
  arrivalWindow?: null;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const RACERS = 50;

const utcSchedule = (capacity: number) => ({
  timeZone: "UTC",
  slotMinutes: 60,
  capacity,
  minNoticeMinutes: 0,
  horizonDays: 30,
  weeklyHours: OPEN_ALWAYS,
  closedDates: [],
});
const NEW_YORK_SCHEDULE = {
  timeZone: "America/New_York",
  slotMinutes: 60,
  capacity: 1,
  minNoticeMinutes: 0,
  horizonDays: 365,
  weeklyHours: everyDay(["00:00", "06:00"]),
};
// Every target slot is a whole UTC hour at least two days after today (as the suite started).
const NOW = Date.now();
const at = (days: number, hour: number) => slotAt(days, hour, NOW);

let stateDir: string | undefined;
let server: DevServer | undefined;
let orgA: Tenant; // capacity 1, UTC, all day: races, agent flow, account linking
let importA: Imported;

// CLI runs are sequential: parallel ones on one local database can fail with SQLITE_BUSY.
function writeFile(name: string, value: unknown): string {
  const file = path.join(stateDir!, name);
  fs.writeFileSync(file, JSON.stringify(value));
  return file;
}
const createOrg = async (name: string) =>
  jsonLine<Tenant>(await admin(stateDir!, ["org", "create", "--name", name]), `org create ${name}`);
const setSchedule = async (org: Tenant, document: unknown) =>
  jsonLine(
    await admin(stateDir!, [
      "schedule",
      "set",
      "--org",
      org.orgId,
      "--file",
      writeFile(`schedule-${org.orgId}.json`, document),
    ]),
    "schedule set",
  );
/** A new org with `document` as its schedule, and the schedule as stored. */
async function orgWithSchedule(name: string, document: unknown): Promise<{ org: Tenant; stored: unknown }> {
  const org = await createOrg(name);
  return { org, stored: await setSchedule(org, document) };
}

beforeAll(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-e2e-sched-"));
  await applyMigrations(stateDir);
  const dev = await DevServer.start(stateDir, await freePort());
  server = dev;
  ({ org: orgA } = await orgWithSchedule("Sched A", utcSchedule(1)));
  const accounts = writeFile("accounts-a.json", [
    { name: "Acme Apartments" },
    { name: "Twin Co" },
    { name: "twin co" },
  ]);
  importA = jsonLine(
    await admin(stateDir, ["accounts", "import", "--org", orgA.orgId, "--file", accounts]),
    "accounts import",
  );
});

afterAll(async () => {
  await server?.stop();
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

function post(tenant: Tenant, endpoint: string, json: unknown): Promise<ApiResponse> {
  if (!server) throw new Error("the server did not start");
  return request(server.baseUrl, tenant, `/api/v1/ai-agent/${endpoint}`, { body: json });
}

async function appointments(tenant: Tenant, dateTime: string, limit: number): Promise<SlotView[]> {
  const res = await post(tenant, "available-appointments", { dateTime, limit });
  expect(res.status, res.text).toBe(200);
  return res.body.slots;
}

async function check(tenant: Tenant, dateTime: string) {
  const res = await post(tenant, "is-booking-available", { dateTime });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const book = (tenant: Tenant, dateTime: string, clientName: string, insectName = "termites") =>
  post(tenant, "create-incident", { dateTime, clientName, insectName });

function expectUnavailable(res: ApiResponse, reason: string) {
  expect(res.status, res.text).toBe(409);
  expect(res.headers.get("Content-Type") ?? "").toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({
    type: "/problems/slot_unavailable",
    code: "slot_unavailable",
    status: 409,
    reason,
    alternatives: expect.any(Array),
  });
  expect(res.body.requestId).toBe(res.headers.get("X-Request-Id"));
  return res.body;
}

/** A UTC slot of `start` as the API shows it. */
/** create-incident's appointment: the visit's times and the places left. */
const utcAppointment = (start: string, remaining: number): SlotView => {
  const end = new Date(Date.parse(start) + HOUR).toISOString();
  const local = (iso: string) => `${iso.slice(0, 19)}+00:00`;
  return { start, end, localStart: local(start), localEnd: local(end), remaining };
};

/** The slot object of an org without services: no service, no arrival window. */
const utcSlot = (start: string, remaining: number): SlotView => ({
  ...utcAppointment(start, remaining),
  serviceId: null,
  arrivalWindow: null,
});

interface RaceResult {
  statuses: number[];
  ok: ApiResponse[];
  conflicts: ApiResponse[];
  serverErrors: number;
  failures: string[];
}

/** Fires `RACERS` create-incident requests for one slot at once. */
async function race(label: string, tenant: Tenant, dateTime: string): Promise<RaceResult> {
  const failures: string[] = [];
  const results = await Promise.all(
    Array.from({ length: RACERS }, (_, i) =>
      book(tenant, dateTime, `${label} client ${i}`).catch((error: unknown) => {
        failures.push(String(error));
        return null;
      }),
    ),
  );
  const answered = results.filter((res): res is ApiResponse => res !== null);
  const result: RaceResult = {
    statuses: answered.map((res) => res.status),
    ok: answered.filter((res) => res.status === 200),
    conflicts: answered.filter((res) => res.status === 409),
    serverErrors: answered.filter((res) => res.status >= 500).length,
    failures,
  };
  console.log(
    `race ${label}: ${RACERS} requests, ${result.ok.length} successes, ${result.conflicts.length} conflicts, ${result.serverErrors} 5xx, ${failures.length} network errors`,
    ...answered.filter((res) => res.status >= 500).map((res) => `\n  5xx: ${res.text.slice(0, 200)}`),
  );
  return result;
}

function expectRace(result: RaceResult, successes: number) {
  expect(result.failures).toEqual([]);
  expect(result.serverErrors).toBe(0);
  expect(result.ok).toHaveLength(successes);
  expect(result.conflicts).toHaveLength(RACERS - successes);
  for (const res of result.conflicts) expectUnavailable(res, "fully_booked");
  const ids = result.ok.map((res) => res.body.id);
  expect(new Set(ids).size).toBe(successes);
}

/** After a capacity-1 slot was won: it is full, and no longer offered. */
async function expectSoldOut(tenant: Tenant, start: string) {
  const checked = await check(tenant, start);
  expect(checked).toMatchObject({
    dateTime: start,
    available: false,
    reason: "fully_booked",
    slot: { start, remaining: 0 },
  });
  const slots = await appointments(tenant, start, 5);
  expect(slots.map((s) => s.start)).not.toContain(start);
  expect(slots[0]?.start).toBe(new Date(Date.parse(start) + HOUR).toISOString());
}

describe("concurrent bookings of one slot", () => {
  it(`books a capacity-1 slot exactly once out of ${RACERS} simultaneous requests`, async () => {
    const start = at(2, 15);
    expect(await check(orgA, start)).toMatchObject({ available: true, reason: null, slot: utcSlot(start, 1) });
    const result = await race("capacity 1", orgA, start);
    expectRace(result, 1);
    expect(result.ok[0]!.body.appointment).toEqual(utcAppointment(start, 0));
    await expectSoldOut(orgA, start);
  });

  it(`books a capacity-3 slot exactly three times out of ${RACERS}, counting down 2, 1, 0`, async () => {
    const { org: orgC } = await orgWithSchedule("Sched C", utcSchedule(3));
    const start = at(2, 15);
    expect(await check(orgC, start)).toMatchObject({ available: true, reason: null, slot: utcSlot(start, 3) });
    const result = await race("capacity 3", orgC, start);
    expectRace(result, 3);
    expect(result.ok.map((res) => res.body.appointment.remaining).sort()).toEqual([0, 1, 2]);
    for (const res of result.ok) expect(res.body.appointment).toMatchObject({ start, end: utcSlot(start, 0).end });
    expect(await check(orgC, start)).toMatchObject({
      available: false,
      reason: "fully_booked",
      slot: { start, remaining: 0 },
    });
  }, 120_000); // two CLI runs first

  it("books exactly once in three more capacity-1 races on other slots", async () => {
    for (const hour of [16, 17, 18]) {
      const start = at(2, hour);
      const result = await race(`capacity 1 at ${start}`, orgA, start);
      expectRace(result, 1);
      await expectSoldOut(orgA, start);
    }
  });
});

describe("the agent flow: find, check, book, see it gone", () => {
  it("books the first slot found and stops offering it", async () => {
    const from = at(3, 10);
    const found = await appointments(orgA, from, 3);
    expect(found).toEqual([utcSlot(at(3, 10), 1), utcSlot(at(3, 11), 1), utcSlot(at(3, 12), 1)]);
    const first = found[0]!;

    const checked = await check(orgA, first.start);
    expect(checked).toEqual({
      dateTime: first.start,
      available: true,
      reason: null,
      slot: first,
      alternatives: [found[1], found[2], utcSlot(at(3, 13), 1)],
    });

    const booked = await book(orgA, first.start, "Ann Agent", "wasps");
    expect(booked.status, booked.text).toBe(200);
    expect(booked.body).toEqual({
      id: expect.stringMatching(/^inc_/),
      status: "scheduled",
      dateTime: first.start,
      clientName: "Ann Agent",
      insectName: "wasps",
      accountId: null,
      phone: null,
      notes: null,
      serviceId: null,
      technicianId: null,
      postalCode: null,
      appointment: utcAppointment(first.start, 0),
      arrivalWindow: null,
      createdAt: expect.stringMatching(ISO),
      updatedAt: booked.body.createdAt,
      cancelledAt: null,
      cancelReason: null,
      closedAt: null,
      outcomeNote: null,
      planId: null,
    });

    const after = await appointments(orgA, from, 3);
    expect(after.map((s) => s.start)).not.toContain(first.start);
    expect(after).toEqual([found[1], found[2], utcSlot(at(3, 13), 1)]);
    expect(await check(orgA, first.start)).toMatchObject({
      available: false,
      reason: "fully_booked",
      slot: { ...first, remaining: 0 },
    });

    const again = expectUnavailable(await book(orgA, first.start, "Bob Late", "wasps"), "fully_booked");
    expect(again.alternatives).toHaveLength(3);
    const offered = await appointments(orgA, from, 10);
    for (const alternative of again.alternatives as SlotView[]) {
      expect(Date.parse(alternative.start)).toBeGreaterThan(Date.parse(first.start));
      expect(offered).toContainEqual(alternative);
    }
  });
});

describe("account linking", () => {
  it("links the one account named like the client, ignoring case and spaces, and no other", async () => {
    const acme = importA.accounts.find((a) => a.name === "Acme Apartments");
    expect(importA.imported).toBe(3);
    expect(acme?.id).toMatch(/^acct_/);

    const linked = await book(orgA, at(4, 9), "  acme APARTMENTS ");
    expect(linked.status, linked.text).toBe(200);
    expect(linked.body.accountId).toBe(acme!.id);

    const twins = await book(orgA, at(4, 10), "Twin Co");
    expect(twins.status, twins.text).toBe(200);
    expect(twins.body.accountId).toBeNull();

    const nobody = await book(orgA, at(4, 11), "Nobody");
    expect(nobody.status, nobody.text).toBe(200);
    expect(nobody.body.accountId).toBeNull();
  });
});

/** The `nth` Sunday (1-based) of a month, as a day of the month. */
const nthSunday = (year: number, month: number, nth: number) =>
  1 + ((7 - new Date(Date.UTC(year, month, 1)).getUTCDay()) % 7) + 7 * (nth - 1);

/** The next date, as its local midnight in New York (`utcHour` the UTC hour of it), whose midnight is still ahead. */
function nextNewYorkSunday(month: number, nth: number, utcHour: number) {
  for (let year = new Date(NOW).getUTCFullYear(); ; year++) {
    const day = nthSunday(year, month, nth);
    const midnight = Date.UTC(year, month, day, utcHour);
    if (midnight > Date.now())
      return { date: `${year}-${String(month + 1).padStart(2, "0")}-${String(day).padStart(2, "0")}`, midnight };
  }
}

describe("DST days in America/New_York, over HTTP", () => {
  let orgNY: Tenant;
  beforeAll(async () => {
    ({ org: orgNY } = await orgWithSchedule("Sched NY", NEW_YORK_SCHEDULE));
  });

  it.each([
    [
      "spring-forward",
      2,
      2,
      5,
      ["00:00:00-05:00", "01:00:00-05:00", "03:00:00-04:00", "04:00:00-04:00", "05:00:00-04:00"],
    ],
    [
      "fall-back",
      10,
      1,
      4,
      [
        "00:00:00-04:00",
        "01:00:00-04:00",
        "01:00:00-05:00",
        "02:00:00-05:00",
        "03:00:00-05:00",
        "04:00:00-05:00",
        "05:00:00-05:00",
      ],
    ],
  ])(
    "offers the %s day's slots, each exactly one hour long",
    async (_label, month: number, nth: number, utcHour: number, expected: string[]) => {
      const { date, midnight } = nextNewYorkSunday(month, nth, utcHour);
      expect(midnight + 6 * HOUR, `${date} lies beyond the 365-day horizon`).toBeLessThan(Date.now() + 365 * DAY);
      const res = await post(orgNY, "available-appointments", { dateTime: new Date(midnight).toISOString(), limit: 8 });
      expect(res.status, res.text).toBe(200);
      expect(res.body.timeZone).toBe("America/New_York");
      const slots: SlotView[] = res.body.slots.filter((s: SlotView) => s.localStart.startsWith(date));
      expect(slots.map((s) => s.localStart)).toEqual(expected.map((time) => `${date}T${time}`));
      for (const slot of slots) {
        expect(Date.parse(slot.end) - Date.parse(slot.start)).toBe(HOUR);
        expect(slot.remaining).toBe(1);
      }
      expect(slots[0]!.start).toBe(new Date(midnight).toISOString());
    },
  );
});

describe("org B: isolation from org A's bookings, and a schedule no invalid document changes", () => {
  let orgB: Tenant; // capacity 1, UTC, all day
  let storedB: unknown;
  beforeAll(async () => {
    ({ org: orgB, stored: storedB } = await orgWithSchedule("Sched B", utcSchedule(1)));
  });

  it("never lets a booking in org A reduce what org B has left", async () => {
    const start = at(5, 12);
    const inA = await book(orgA, start, "Alice A");
    expect(inA.status, inA.text).toBe(200);
    expect(await check(orgA, start)).toMatchObject({ available: false, reason: "fully_booked" });

    // The slot just booked in A and the slot A raced for are both whole in B.
    for (const slot of [start, at(2, 15)]) {
      expect(await check(orgB, slot)).toMatchObject({ available: true, reason: null, slot: utcSlot(slot, 1) });
      expect((await appointments(orgB, slot, 1))[0]).toEqual(utcSlot(slot, 1));
    }
    const inB = await book(orgB, start, "Bob B");
    expect(inB.status, inB.text).toBe(200);
    expect(inB.body.appointment).toEqual(utcAppointment(start, 0));
  });

  it("schedule set of an invalid document exits non-zero, prints nothing on stdout, names the problem, and leaves the schedule as it was", async () => {
    const dir = stateDir!;
    const cases: [string, unknown, RegExp][] = [
      [
        "overlap.json",
        {
          weeklyHours: {
            mon: [
              ["08:00", "12:00"],
              ["11:00", "13:00"],
            ],
          },
        },
        /weeklyHours\.mon: 08:00–12:00 overlaps 11:00–13:00/,
      ],
      ["slot.json", { slotMinutes: 3 }, /slotMinutes: must be at least 5/],
      ["unknown.json", { foo: 1 }, /foo: unknown field/],
      ["zone.json", { timeZone: "Mars/Base" }, /timeZone: must be an IANA time zone/],
    ];
    for (const [name, document, message] of cases) {
      const result = await admin(dir, ["schedule", "set", "--org", orgB.orgId, "--file", writeFile(name, document)]);
      expect(result.code, name).not.toBe(0);
      expect(result.stdout, name).toBe("");
      expect(result.stderr, name).toMatch(message);
      expect(result.stderr, name).toContain("nothing stored");
    }

    const shown = jsonLine(await admin(dir, ["schedule", "show", "--org", orgB.orgId]), "schedule show");
    expect(shown).toEqual(storedB);
    expect(shown).toEqual(utcSchedule(1));
  }, 120_000); // five CLI runs
});
