// Assignment races over a real `wrangler dev` (docs/api.md, "Services and
// technicians"): choosing a technician and inserting the visit is one
// statement, so racing bookings never exceed the eligible technicians, never
// give one technician two overlapping visits (also when they start at
// different times), and bookings racing reschedules keep that. Checked in SQL
// over every pair of scheduled visits of each technician.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPEN_ALWAYS } from "../support/schedules";
import { daysAhead, iso } from "../support/time";
import { admin, applyMigrations, DevServer, d1Execute, freePort, jsonLine, request, type Tenant } from "./harness";

let stateDir: string;
let server: DevServer | undefined;

const NOW = Date.now();

async function createOrg(name: string): Promise<Tenant> {
  const org = jsonLine<Tenant>(await admin(stateDir, ["org", "create", "--name", name]), "org create");
  const file = path.join(stateDir, `schedule-${org.orgId}.json`);
  fs.writeFileSync(
    file,
    JSON.stringify({
      timeZone: "UTC",
      slotMinutes: 60,
      minNoticeMinutes: 0,
      horizonDays: 30,
      weeklyHours: OPEN_ALWAYS,
    }),
  );
  jsonLine(await admin(stateDir, ["schedule", "set", "--org", org.orgId, "--file", file]), "schedule set");
  return org;
}

/**
 * A service and `count` technicians who all may do it, stored as the admin CLI
 * stores them (with the org's longest span raised), in one statement run.
 */
async function provision(org: Tenant, { minutes, count }: { minutes: number; count: number }) {
  const service = `svc_race${org.orgId.slice(4, 20)}`;
  const now = Date.now();
  const technicians = Array.from({ length: count }, (_, i) => `tech_race${i}${org.orgId.slice(4, 20)}`);
  await d1Execute(
    stateDir,
    [
      `INSERT INTO services (id, org_id, name, name_lower, duration_minutes, buffer_minutes, arrival_window_minutes, skills, keywords, is_default, active, created_at, updated_at) VALUES ('${service}', '${org.orgId}', 'Long', 'long', ${minutes}, 0, 0, '["termite-license"]', '[]', 0, 1, ${now}, ${now})`,
      ...technicians.map(
        (id) =>
          `INSERT INTO technicians (id, org_id, name, skills, postal_codes, weekly_hours, days_off, active, created_at, updated_at) VALUES ('${id}', '${org.orgId}', '${id}', '["termite-license"]', '["112"]', NULL, '[]', 1, ${now}, ${now})`,
      ),
      `UPDATE orgs SET max_slot_minutes = max(max_slot_minutes, ${minutes}) WHERE id = '${org.orgId}'`,
    ].join("; "),
  );
  return { service, technicians };
}

/** Pairs of scheduled visits of one technician of the org whose occupied spans overlap. */
const overlaps = (org: Tenant) =>
  d1Execute(
    stateDir,
    `SELECT a.id AS a, b.id AS b FROM incidents a JOIN incidents b ON a.org_id = b.org_id AND a.technician_id = b.technician_id AND a.id < b.id WHERE a.org_id = '${org.orgId}' AND a.status = 'scheduled' AND b.status = 'scheduled' AND a.starts_at < b.occupied_until AND b.starts_at < a.occupied_until`,
  );

const post = (org: Tenant, endpoint: string, body: unknown) => request(server!.baseUrl, org, endpoint, { body });

const book = (org: Tenant, dateTime: number, extra: object) =>
  post(org, "/api/v1/ai-agent/create-incident", {
    dateTime: iso(dateTime),
    clientName: "Racer",
    insectName: "termites",
    postalCode: "11201",
    ...extra,
  });

let three: Tenant;
let one: Tenant;
let mixed: Tenant;

beforeAll(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-e2e-tech-"));
  await applyMigrations(stateDir);
  server = await DevServer.start(stateDir, await freePort());
  three = await createOrg("Three technicians");
  one = await createOrg("One technician");
  mixed = await createOrg("Mixed");
}, 300_000);

afterAll(async () => {
  await server?.stop();
  fs.rmSync(stateDir, { recursive: true, force: true });
});

describe("assignment races over wrangler dev", () => {
  it("30 bookings of a 3-hour service at one start with 3 eligible technicians: exactly 3 succeed, with 3 different technicians", async () => {
    const { service, technicians } = await provision(three, { minutes: 180, count: 3 });
    const at = daysAhead(2, 9, NOW);
    const results = await Promise.all(Array.from({ length: 30 }, () => book(three, at, { serviceId: service })));
    const won = results.filter((r) => r.status === 200);
    expect(won).toHaveLength(3);
    expect(new Set(won.map((r) => r.body.technicianId))).toEqual(new Set(technicians));
    for (const lost of results.filter((r) => r.status !== 200)) {
      expect(lost.status, lost.text).toBe(409);
      expect(lost.body.reason).toBe("fully_booked");
    }
    expect(await overlaps(three)).toEqual([]);
  }, 120_000);

  it("09:00 for 3 hours and 10:00, 11:00 for 1 hour racing for one technician: the overlapping ones never both win", async () => {
    const { service: long } = await provision(one, { minutes: 180, count: 1 });
    const shortService = `svc_short${one.orgId.slice(4, 20)}`;
    const now = Date.now();
    await d1Execute(
      stateDir,
      `INSERT INTO services (id, org_id, name, name_lower, duration_minutes, buffer_minutes, arrival_window_minutes, skills, keywords, is_default, active, created_at, updated_at) VALUES ('${shortService}', '${one.orgId}', 'Short', 'short', 60, 0, 0, '[]', '[]', 0, 1, ${now}, ${now})`,
    );
    const day = daysAhead(3, 0, NOW);
    const requests = Array.from({ length: 10 }, () => [
      book(one, day + 9 * 3_600_000, { serviceId: long }),
      book(one, day + 10 * 3_600_000, { serviceId: shortService }),
      book(one, day + 11 * 3_600_000, { serviceId: shortService }),
    ]).flat();
    const results = await Promise.all(requests);
    const starts = results.filter((r) => r.status === 200).map((r) => r.body.dateTime);
    expect(starts.length).toBeGreaterThan(0);
    // Either the long visit alone, or short ones only (at most one per hour).
    if (starts.includes(iso(day + 9 * 3_600_000))) expect(starts).toEqual([iso(day + 9 * 3_600_000)]);
    else expect(new Set(starts).size).toBe(starts.length);
    expect(await overlaps(one)).toEqual([]);
  }, 120_000);

  it("bookings and reschedules racing: no technician's spans ever overlap afterwards", async () => {
    const { service } = await provision(mixed, { minutes: 120, count: 2 });
    const day = daysAhead(4, 0, NOW);
    const hour = (h: number) => day + h * 3_600_000;
    const seeded = [];
    for (const h of [8, 12, 16]) {
      const res = await book(mixed, hour(h), { serviceId: service });
      expect(res.status, res.text).toBe(200);
      seeded.push(res.body.id as string);
    }
    const moves = seeded.flatMap((id) =>
      [9, 10, 11, 13].map((h) => post(mixed, `/api/v1/incidents/${id}/reschedule`, { dateTime: iso(hour(h)) })),
    );
    const bookings = [9, 10, 11, 13, 14].flatMap((h) => [book(mixed, hour(h), { serviceId: service })]);
    const results = await Promise.all([...moves, ...bookings]);
    for (const r of results) expect([200, 409], r.text).toContain(r.status);
    expect(await overlaps(mixed)).toEqual([]);
    const [{ scheduled }] = (await d1Execute(
      stateDir,
      `SELECT count(*) AS scheduled FROM incidents WHERE org_id = '${mixed.orgId}' AND status = 'scheduled' AND technician_id IS NOT NULL`,
    )) as [{ scheduled: number }];
    expect(scheduled).toBe(3 + results.slice(moves.length).filter((r) => r.status === 200).length);
  }, 180_000);
});
