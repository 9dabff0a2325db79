// Plans over a real `wrangler dev` (docs/api.md, "Plans"), one server for
// the file: a weekly plan whose first visit is tomorrow has its second visit
// (due in 8 days) booked within seconds of create-plan — after the answer, at
// the same local time, with the same technician — and its third (due in 15
// days) not yet; a due start that is taken moves to the nearest bookable one;
// nothing bookable gives plan.visit_unplaced; and the Cron Trigger fired five
// times at once decides each due visit once. Counts are read in SQL on the
// server's own database.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { everyDay } from "../support/schedules";
import { DAY, daysAhead, HOUR, iso } from "../support/time";
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
const TODAY = Math.floor(NOW / DAY) * DAY;
const date = (t: number) => iso(t).slice(0, 10);

let stateDir: string;
let server: DevServer | undefined;
let crew: Tenant; // one crew, open 08:00–17:00 UTC every day
let technicians: Tenant; // two technicians, the same hours
let closed: Tenant; // one crew, closed around the second visit's due date
const TECHNICIANS = ["tech_planse2e00000000000000000a", "tech_planse2e00000000000000000b"];

const createOrg = async (name: string) =>
  jsonLine<Tenant>(await admin(stateDir, ["org", "create", "--name", name]), `org create ${name}`);

const schedule = (closedDates: string[] = []) =>
  JSON.stringify({
    slotMinutes: 60,
    capacity: 1,
    minNoticeMinutes: 0,
    horizonDays: 30,
    weeklyHours: everyDay(["08:00", "17:00"]),
    closedDates,
  });

beforeAll(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-e2e-plans-"));
  await applyMigrations(stateDir);
  server = await DevServer.start(stateDir, await freePort(), ["--test-scheduled"]); // /__scheduled runs the Cron Trigger (src/cli/dev.ts says why)
  crew = await createOrg("Plans crew");
  technicians = await createOrg("Plans technicians");
  closed = await createOrg("Plans closed");
  const now = Date.now();
  // The second visit of a plan first due tomorrow is due in 8 days: its dates ± 3 closed.
  const around = [5, 6, 7, 8, 9, 10, 11].map((d) => date(TODAY + d * DAY));
  await d1Execute(
    stateDir,
    [
      `UPDATE orgs SET schedule = '${schedule()}' WHERE id IN ('${crew.orgId}', '${technicians.orgId}')`,
      `UPDATE orgs SET schedule = '${schedule(around)}' WHERE id = '${closed.orgId}'`,
      ...TECHNICIANS.map(
        (id) =>
          `INSERT INTO technicians (id, org_id, name, skills, postal_codes, weekly_hours, days_off, active, created_at, updated_at) VALUES ('${id}', '${technicians.orgId}', '${id}', '[]', '[]', NULL, '[]', 1, ${now}, ${now})`,
      ),
    ].join("; "),
  );
}, 180_000);

afterAll(async () => {
  await server?.stop();
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

const call = (org: Tenant, urlPath: string, body?: unknown): Promise<ApiResponse> => {
  if (!server) throw new Error("the server did not start");
  return request(server.baseUrl, org, urlPath, body === undefined ? {} : { body });
};

const createPlan = (org: Tenant, first: number, extra: object = {}) =>
  call(org, "/api/v1/ai-agent/create-plan", {
    dateTime: iso(first),
    clientName: "Pat Planner",
    insectName: "ants",
    phone: "+19175550188",
    every: { count: 1, unit: "week" },
    ...extra,
  });

/** The plan's visits as the server stores them, by start. */
const visitsOf = (planId: string) =>
  d1Execute(
    stateDir,
    `SELECT id, starts_at, technician_id, status FROM incidents WHERE plan_id = '${planId}' ORDER BY starts_at`,
  );

/** Waits (up to `ms`) until the plan has decided `made` visits; its answer then. */
async function decided(org: Tenant, planId: string, made: number, ms = 10_000) {
  const until = Date.now() + ms;
  for (;;) {
    const res = await call(org, `/api/v1/plans/${planId}`);
    expect(res.status, res.text).toBe(200);
    if (res.body.visitsMade >= made || Date.now() > until) return res.body;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe("plans over wrangler dev", () => {
  it("a weekly plan whose first visit is tomorrow: its second visit is booked within seconds, same local time and technician; its third not yet", async () => {
    const first = daysAhead(1, 10, NOW);
    const started = Date.now();
    const res = await createPlan(technicians, first);
    expect(res.status, res.text).toBe(200);
    // The answer shows the plan after its first visit only.
    expect(res.body.plan).toMatchObject({ visitsMade: 1, nextDueDate: date(first + 7 * DAY), localTime: "10:00" });
    const technician = res.body.plan.technicianId;
    expect(TECHNICIANS).toContain(technician);
    const plan = await decided(technicians, res.body.plan.id, 2);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(plan).toMatchObject({ visitsMade: 2, nextDueDate: date(first + 14 * DAY), status: "active" });
    const visits = await visitsOf(plan.id);
    expect(visits.map((v) => [Number(v.starts_at), v.technician_id, v.status])).toEqual([
      [first, technician, "scheduled"],
      [first + 7 * DAY, technician, "scheduled"],
    ]);
    const events = await call(technicians, "/api/v1/events?type=incident.created");
    const second = events.body.data.find((e: { data: { id: string } }) => e.data.id === visits[1]!.id);
    expect(second.actor).toEqual({ keyId: null, role: null, channel: "plan", callId: null, callerPhone: null });
  }, 60_000);

  it("a due start that is taken moves to the nearest bookable start", async () => {
    const first = daysAhead(2, 12, NOW);
    const blocker = await call(crew, "/api/v1/ai-agent/create-incident", {
      dateTime: iso(first + 7 * DAY),
      clientName: "Walk-in",
      insectName: "ants",
    });
    expect(blocker.status, blocker.text).toBe(200);
    const res = await createPlan(crew, first);
    expect(res.status, res.text).toBe(200);
    const plan = await decided(crew, res.body.plan.id, 2);
    expect(plan.visitsMade).toBe(2);
    // 11:00 and 13:00 are as near as each other: the earlier.
    expect((await visitsOf(plan.id)).map((v) => Number(v.starts_at))).toEqual([first, first + 7 * DAY - HOUR]);
  }, 60_000);

  it("nothing bookable within three days of the due date: plan.visit_unplaced, and no visit", async () => {
    const first = daysAhead(1, 9, NOW);
    const res = await createPlan(closed, first);
    expect(res.status, res.text).toBe(200);
    const plan = await decided(closed, res.body.plan.id, 2);
    expect(plan.visitsMade).toBe(2);
    expect(await visitsOf(plan.id)).toHaveLength(1);
    const events = await call(closed, "/api/v1/events?type=plan.visit_unplaced");
    expect(events.body.data.map((e: { data: { id: string; dueDate: string } }) => e.data)).toEqual([
      { ...plan, dueDate: date(first + 7 * DAY) },
    ]);
  }, 60_000);

  it("the Cron Trigger fired five times at once decides each due visit once", async () => {
    // Five plans as create-plan leaves monthly ones, whose next visit has come due (decide_at passed).
    const ids = Array.from({ length: 5 }, (_, i) => `plan_cronrace00000000000000000${i}`);
    const firstDay = TODAY + 3 * DAY;
    const now = Date.now();
    await d1Execute(
      stateDir,
      ids
        .map(
          (id, i) =>
            `INSERT INTO plans (id, org_id, status, every_count, every_unit, client_name, insect_name, local_time, first_visit_date, visits_made, next_due_date, decide_at, created_at, updated_at) VALUES ('${id}', '${crew.orgId}', 'active', 1, 'week', 'Cron race', 'ants', '${12 + i}:00', '${date(firstDay)}', 1, '${date(firstDay + 7 * DAY)}', ${now - 1}, ${now}, ${now})`,
        )
        .join("; "),
    );
    const fires = await Promise.all(
      Array.from({ length: 5 }, () => fetch(`${server!.baseUrl}/__scheduled?cron=*+*+*+*+*`)),
    );
    for (const fire of fires) {
      await fire.arrayBuffer();
      expect(fire.status).toBe(200);
    }
    for (const id of ids) expect((await decided(crew, id, 2)).visitsMade).toBe(2);
    const [counts] = await d1Execute(
      stateDir,
      `SELECT (SELECT count(*) FROM incidents WHERE plan_id IN (${ids.map((id) => `'${id}'`).join(", ")})) AS visits,
        (SELECT count(*) FROM plan_visits WHERE plan_id IN (${ids.map((id) => `'${id}'`).join(", ")})) AS decisions,
        (SELECT count(*) FROM events WHERE org_id = '${crew.orgId}' AND type = 'incident.created' AND json_extract(body, '$.data.planId') IN (${ids.map((id) => `'${id}'`).join(", ")})) AS events`,
    );
    expect(counts).toEqual({ visits: 5, decisions: 5, events: 5 });
    const visits = await Promise.all(ids.map(visitsOf));
    expect(visits.map((v) => v.map((row) => Number(row.starts_at)))).toEqual(
      ids.map((_, i) => [firstDay + 7 * DAY + (12 + i) * HOUR]),
    );
  }, 90_000);
});
