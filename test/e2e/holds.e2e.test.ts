// Hold races over a real `wrangler dev` (docs/api.md, "Holding a slot"): a
// live hold occupies its place exactly as a booking does, so holds and
// bookings racing for one start never exceed its places together; a booking
// that names a live hold for its start always gets the place, whatever races
// it; a hold is used at most once; and in technician mode no technician is
// ever given two overlapping occupations (visits and live holds together).
// Every count is checked in SQL on the server's own database afterwards.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPEN_ALWAYS } from "../support/schedules";
import { daysAhead, iso, MINUTE } from "../support/time";
import {
  type ApiResponse,
  admin,
  applyMigrations,
  DevServer,
  d1Execute,
  freePort,
  jsonLine,
  request,
  type Tenant,
} from "./harness";

const NOW = Date.now();
/** `hour`:00 UTC, `days` days from today: a whole open hour, far from notice and horizon. */
const at = (days: number, hour: number) => iso(daysAhead(days, hour, NOW));
/** `hour`:00 UTC of the first Monday to Friday at least `days` days ahead: open in the default schedule. */
function weekdayAt(days: number, hour: number): string {
  for (let d = days; ; d++) {
    const day = new Date(daysAhead(d, hour, NOW)).getUTCDay();
    if (day !== 0 && day !== 6) return at(d, hour);
  }
}

let stateDir: string;
let server: DevServer | undefined;
let crew5: Tenant; // crew mode, 5 places a start, open around the clock
let crew1: Tenant; // crew mode, the default schedule: 1 place a start, Monday to Friday 08:00–17:00 UTC
let tech: Tenant; // technician mode, the default schedule: 3 technicians, one 180-minute service
const SERVICE = "svc_holdsrace0000000000000000";
const TECHNICIANS = [
  "tech_holdsrace000000000000000a",
  "tech_holdsrace000000000000000b",
  "tech_holdsrace000000000000000c",
];

const createOrg = async (name: string) =>
  jsonLine<Tenant>(await admin(stateDir, ["org", "create", "--name", name]), `org create ${name}`);

/**
 * Orgs by the admin CLI; then, in one `d1 execute` (each CLI run costs a
 * workerd start), crew5's schedule, and tech's service and technicians, stored
 * as the CLI stores them (technicians.e2e.test.ts does the same). Each test
 * first checks over HTTP that its start has exactly the places it expects.
 */
beforeAll(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-e2e-holds-"));
  await applyMigrations(stateDir);
  server = await DevServer.start(stateDir, await freePort());
  crew5 = await createOrg("Holds five");
  crew1 = await createOrg("Holds one");
  tech = await createOrg("Holds technicians");
  const now = Date.now();
  const stored = {
    slotMinutes: 60,
    capacity: 5,
    minNoticeMinutes: 0,
    horizonDays: 30,
    weeklyHours: OPEN_ALWAYS,
    closedDates: [],
  };
  await d1Execute(
    stateDir,
    [
      `UPDATE orgs SET schedule = '${JSON.stringify(stored)}' WHERE id = '${crew5.orgId}'`,
      `INSERT INTO services (id, org_id, name, name_lower, duration_minutes, buffer_minutes, arrival_window_minutes, skills, keywords, is_default, active, created_at, updated_at) VALUES ('${SERVICE}', '${tech.orgId}', 'Termite treatment', 'termite treatment', 180, 0, 0, '["termite-license"]', '[]', 0, 1, ${now}, ${now})`,
      ...TECHNICIANS.map(
        (id) =>
          `INSERT INTO technicians (id, org_id, name, skills, postal_codes, weekly_hours, days_off, active, created_at, updated_at) VALUES ('${id}', '${tech.orgId}', '${id}', '["termite-license"]', '["112"]', NULL, '[]', 1, ${now}, ${now})`,
      ),
      `UPDATE orgs SET max_slot_minutes = max(max_slot_minutes, 180) WHERE id = '${tech.orgId}'`,
    ].join("; "),
  );
}, 180_000);

afterAll(async () => {
  await server?.stop();
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

const post = (org: Tenant, endpoint: string, body: unknown): Promise<ApiResponse> => {
  if (!server) throw new Error("the server did not start");
  return request(server.baseUrl, org, `/api/v1/ai-agent/${endpoint}`, { body });
};
const hold = (org: Tenant, dateTime: string, extra: object = {}) => post(org, "hold-slot", { dateTime, ...extra });
const book = (org: Tenant, dateTime: string, clientName: string, extra: object = {}) =>
  post(org, "create-incident", { dateTime, clientName, insectName: "termites", ...extra });

/**
 * One read of the server's database about `start` of the org: its scheduled
 * incidents, the holds there still occupying a place now (not expired,
 * released or used), and every hold there with the incident that used it.
 */
async function stateAt(org: Tenant, start: string) {
  const where = `org_id = '${org.orgId}' AND starts_at = ${Date.parse(start)}`;
  const [row] = await d1Execute(
    stateDir,
    `SELECT (SELECT count(*) FROM incidents WHERE ${where} AND status = 'scheduled') AS scheduled,
      (SELECT count(*) FROM holds WHERE ${where} AND expires_at > ${Date.now()}) AS live,
      (SELECT json_group_array(json_object('id', id, 'incidentId', incident_id)) FROM (SELECT id, incident_id FROM holds WHERE ${where} ORDER BY id)) AS holds`,
  );
  return {
    scheduled: Number(row!.scheduled),
    live: Number(row!.live),
    holds: JSON.parse(String(row!.holds)) as { id: string; incidentId: string | null }[],
  };
}

async function expectPlaces(org: Tenant, start: string, remaining: number, visit: object = {}) {
  const res = await post(org, "is-booking-available", { dateTime: start, ...visit });
  expect(res.status, res.text).toBe(200);
  expect(res.body).toMatchObject(
    remaining > 0
      ? { available: true, reason: null, slot: { start, remaining } }
      : { available: false, reason: "fully_booked", slot: { start, remaining: 0 } },
  );
}

function expectUnavailable(res: ApiResponse, holdExpired?: true) {
  expect(res.status, res.text).toBe(409);
  expect(res.body).toMatchObject({ code: "slot_unavailable", reason: "fully_booked", alternatives: expect.any(Array) });
  expect(res.body.holdExpired).toBe(holdExpired);
}

function expectHeld(res: ApiResponse, start: string) {
  expect(res.status, res.text).toBe(200);
  expect(res.body).toMatchObject({ holdId: expect.stringMatching(/^hold_/), slot: { start } });
  const expires = Date.parse(res.body.expiresAt);
  expect(expires).toBeGreaterThan(Date.now() + 3 * MINUTE); // default 5 minutes
  expect(expires).toBeLessThanOrEqual(Date.now() + 5 * MINUTE);
}

const byId = <T extends { id: string }>(list: T[]) => [...list].sort((a, b) => (a.id < b.id ? -1 : 1));

describe("holds racing bookings over wrangler dev", () => {
  it("20 holds racing 20 bookings for a start with 5 places: exactly 5 win in all, and the start is full", async () => {
    const start = at(2, 9);
    await expectPlaces(crew5, start, 5);
    const requests = Array.from({ length: 20 }, (_, i) => [hold(crew5, start), book(crew5, start, `Racer ${i}`)]);
    const results = await Promise.all(requests.flat());
    const holds = results.filter((_, i) => i % 2 === 0);
    const bookings = results.filter((_, i) => i % 2 === 1);
    const heldOk = holds.filter((r) => r.status === 200);
    const bookedOk = bookings.filter((r) => r.status === 200);
    console.log(`race 1: ${heldOk.length} holds and ${bookedOk.length} bookings won`);

    expect(heldOk.length + bookedOk.length).toBe(5);
    for (const r of heldOk) {
      expectHeld(r, start);
      expect(r.body.technicianId).toBeNull();
    }
    for (const r of bookedOk) {
      expect(r.body.dateTime).toBe(start);
      expect(r.body).not.toHaveProperty("holdExpired"); // no holdId sent
    }
    // Each winner saw the places left after it, holds counted: 4, 3, 2, 1, 0 once each.
    const remaining = [
      ...heldOk.map((r) => r.body.slot.remaining),
      ...bookedOk.map((r) => r.body.appointment.remaining),
    ];
    expect(remaining.sort()).toEqual([0, 1, 2, 3, 4]);
    for (const r of [...holds, ...bookings].filter((r) => r.status !== 200)) expectUnavailable(r);

    const state = await stateAt(crew5, start);
    expect(state.scheduled).toBe(bookedOk.length);
    expect(state.live).toBe(heldOk.length);
    expect(state.scheduled + state.live).toBe(5);
    expect(state.holds).toEqual(byId(heldOk.map((r) => ({ id: r.body.holdId, incidentId: null }))));
    await expectPlaces(crew5, start, 0);
  });

  it("5 held places booked with their holds while 50 plain bookings race them: every hold booking wins, every plain one loses", async () => {
    const start = at(3, 9);
    await expectPlaces(crew5, start, 5);
    const holdIds: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await hold(crew5, start);
      expectHeld(res, start);
      expect(res.body.slot.remaining).toBe(4 - i);
      holdIds.push(res.body.holdId);
    }
    const withHold = holdIds.map((holdId, i) => book(crew5, start, `Holder ${i}`, { holdId }));
    const plain = Array.from({ length: 50 }, (_, i) => book(crew5, start, `Walk-in ${i}`));
    // All in flight at once; each list is awaited as a whole.
    const [held, walkIns] = await Promise.all([Promise.all(withHold), Promise.all(plain)]);

    for (const r of held) {
      expect(r.status, r.text).toBe(200);
      expect(r.body).toMatchObject({ dateTime: start, status: "scheduled", holdExpired: false });
    }
    for (const r of walkIns) expectUnavailable(r);

    const state = await stateAt(crew5, start);
    expect(state.scheduled).toBe(5);
    expect(state.live).toBe(0);
    // Each hold was used by the booking that named it.
    expect(state.holds).toEqual(byId(holdIds.map((id, i) => ({ id, incidentId: held[i]!.body.id }))));
    await expectPlaces(crew5, start, 0);
  });

  it("one hold named by two racing bookings (and 5 plain ones) on a 1-place start: exactly one booking, the other is told the hold lapsed", async () => {
    const start = weekdayAt(2, 9);
    await expectPlaces(crew1, start, 1);
    const held = await hold(crew1, start);
    expectHeld(held, start);
    expect(held.body.slot.remaining).toBe(0);
    const { holdId } = held.body;

    const results = await Promise.all([
      book(crew1, start, "Holder A", { holdId }),
      ...Array.from({ length: 5 }, (_, i) => book(crew1, start, `Walk-in ${i}`)),
      book(crew1, start, "Holder B", { holdId }),
    ]);
    const withHold = [results[0]!, results.at(-1)!];
    const plain = results.slice(1, -1);

    const won = withHold.filter((r) => r.status === 200);
    expect(won, withHold.map((r) => r.text).join("\n")).toHaveLength(1);
    expect(won[0]!.body).toMatchObject({ dateTime: start, holdExpired: false });
    expectUnavailable(withHold.find((r) => r.status !== 200)!, true);
    for (const r of plain) expectUnavailable(r);

    const state = await stateAt(crew1, start);
    expect(state.scheduled).toBe(1);
    expect(state.live).toBe(0);
    expect(state.holds).toEqual([{ id: holdId, incidentId: won[0]!.body.id }]);
  });

  it("technician mode: 10 holds racing 10 bookings of a 3-hour service with 3 technicians: 3 winners, no technician occupied twice at once", async () => {
    const start = weekdayAt(2, 9);
    const visit = { serviceId: SERVICE, postalCode: "11201" };
    await expectPlaces(tech, start, 3, visit);
    const requests = Array.from({ length: 10 }, (_, i) => [
      hold(tech, start, visit),
      book(tech, start, `Racer ${i}`, visit),
    ]);
    const results = await Promise.all(requests.flat());
    const won = results.filter((r) => r.status === 200);
    const heldOk = results.filter((r, i) => i % 2 === 0 && r.status === 200);
    console.log(`race 4: ${heldOk.length} holds and ${won.length - heldOk.length} bookings won`);

    expect(won).toHaveLength(3);
    expect(new Set(won.map((r) => r.body.technicianId))).toEqual(new Set(TECHNICIANS));
    for (const r of results.filter((r) => r.status !== 200)) expectUnavailable(r);

    // Every occupation of the org (scheduled visits and live holds), and the pairs of one technician's that overlap.
    const occupations = `SELECT id, technician_id, starts_at, occupied_until FROM incidents WHERE org_id = '${tech.orgId}' AND status = 'scheduled' UNION ALL SELECT id, technician_id, starts_at, occupied_until FROM holds WHERE org_id = '${tech.orgId}' AND expires_at > ${Date.now()}`;
    const [row] = await d1Execute(
      stateDir,
      `WITH o AS (${occupations}) SELECT
        (SELECT json_group_array(json_object('id', id, 'technicianId', technician_id)) FROM (SELECT * FROM o ORDER BY id)) AS occupations,
        (SELECT json_group_array(json_array(a.id, b.id)) FROM o a JOIN o b ON a.technician_id = b.technician_id AND a.id < b.id WHERE a.starts_at < b.occupied_until AND b.starts_at < a.occupied_until) AS overlaps`,
    );
    expect(JSON.parse(String(row!.overlaps))).toEqual([]);
    expect(JSON.parse(String(row!.occupations))).toEqual(
      byId(won.map((r) => ({ id: r.body.holdId ?? r.body.id, technicianId: r.body.technicianId }))),
    );
    await expectPlaces(tech, start, 0, visit);
  });
});
