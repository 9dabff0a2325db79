// GET /api/v1/board (docs/api.md, "The dispatch board"): one local day of an
// org in America/New_York — its rows, their order and duty, the row without a
// technician, crew mode, holds, statuses, the 422s and the roles.
import { beforeAll, describe, expect, it } from "vitest";
import { storeSchedule } from "../../../src/db/orgs";
import { storeHold, storeVisit } from "../../support/board";
import { addService, addTechnician } from "../../support/catalogue";
import { mcpCall, toolAnswer } from "../../support/mcp";
import { expectProblem } from "../../support/problem";
import { call } from "../../support/request";
import { everyDay } from "../../support/schedules";
import { db, newTenant, type Tenant, withRole } from "../../support/tenants";
import { MINUTE } from "../../support/time";

const ZONE = "America/New_York";
// A Tuesday in winter: New York is at -05:00, so local 09:00 is 14:00Z.
const DAY = "2031-03-04";
const board = (t: Tenant, query = `?date=${DAY}`) => call(t, `/api/v1/board${query}`);
/** The instant of local `hh:mm` on DAY (EST, -05:00). */
const at = (hhmm: string, date = DAY) => new Date(`${date}T${hhmm}:00-05:00`).toISOString();
const duty = (from: string, to: string, date = DAY, offset = "-05:00") => ({
  start: new Date(`${date}T${from}:00${offset}`).toISOString(),
  end: new Date(`${date}T${to}:00${offset}`).toISOString(),
  localStart: `${date}T${from}:00${offset}`,
  localEnd: `${date}T${to}:00${offset}`,
});

let t: Tenant;
const ids: Record<string, string> = {};
const incident = async (id: string) => (await call(t, `/api/v1/incidents/${id}`)).body;

beforeAll(async () => {
  t = await newTenant("Board Org");
  await storeSchedule(db(), t.orgId, {
    timeZone: ZONE,
    weeklyHours: { ...everyDay(["08:00", "17:00"]), sat: [], sun: [["00:00", "06:00"]] },
    closedDates: ["2031-03-05"],
  });
  const termites = await addService(t, { name: "Termites", durationMinutes: 180, bufferMinutes: 30 });
  ids.termites = termites.id;
  // Names in mixed case, two equal ones: the rows go by name in any case, then id.
  ids.zoe = (await addTechnician(t, { name: "zoe Park", weeklyHours: everyDay(["10:00", "14:00"]) })).id;
  ids.samA = (await addTechnician(t, { name: "Sam Ortiz" })).id;
  ids.samB = (await addTechnician(t, { name: "Sam Ortiz" })).id;
  ids.adam = (await addTechnician(t, { name: "adam Bell", daysOff: [DAY] })).id;
  ids.ivy = (await addTechnician(t, { name: "Ivy Gone", active: false })).id;

  const [sam, other] = [ids.samA!, ids.samB!].sort() as [string, string];
  ids.sam = sam;
  ids.nineOClock = await storeVisit(t, {
    start: at("09:00"),
    technicianId: sam,
    clientName: "Jane",
    postalCode: "10001",
  });
  ids.termiteVisit = await storeVisit(t, {
    start: at("13:00"),
    minutes: 180,
    bufferMinutes: 30,
    technicianId: sam,
    serviceId: termites.id,
  });
  ids.sameStart = await storeVisit(t, { start: at("13:00"), technicianId: ids.zoe });
  ids.cancelled = await storeVisit(t, { start: at("08:00"), technicianId: sam, status: "cancelled" });
  ids.completed = await storeVisit(t, { start: at("10:00"), technicianId: ids.zoe, status: "completed" });
  ids.noShow = await storeVisit(t, { start: at("11:00"), technicianId: ids.zoe, status: "no_show" });
  ids.inactive = await storeVisit(t, { start: at("11:00"), technicianId: ids.ivy });
  ids.unassigned = await storeVisit(t, { start: at("12:00") });
  // 23:30 local is the next UTC day: still this local date. 23:30 the evening before is not.
  ids.lateEvening = await storeVisit(t, { start: at("23:30"), technicianId: sam });
  await storeVisit(t, { start: at("23:30", "2031-03-03"), technicianId: sam });
  await storeVisit(t, { start: new Date(Date.parse(at("00:00")) + 1440 * MINUTE).toISOString(), technicianId: sam });

  await storeHold(t, { start: at("15:00"), technicianId: other, serviceId: termites.id, minutes: 180 });
  await storeHold(t, { start: at("09:00"), technicianId: ids.zoe, expiresAt: Date.now() - 1 });
  await storeHold(t, { start: at("09:00"), technicianId: ids.zoe, expiresAt: 0 });
  ids.other = other;

  // Another org's visit on the same day is not this org's.
  const neighbour = await newTenant();
  await storeSchedule(db(), neighbour.orgId, { timeZone: ZONE });
  await storeVisit(neighbour, { start: at("09:00") });
  await storeHold(neighbour, { start: at("09:00") });
});

describe("GET /api/v1/board", () => {
  it("a row per active technician by name in any case, then id; their duty, visits by start then id, live holds; then the visits of no active technician", async () => {
    const res = await board(t);
    expect(res.status, res.text).toBe(200);
    const { body } = res;
    expect(body.date).toBe(DAY);
    expect(body.timeZone).toBe(ZONE);
    const sams = [ids.samA!, ids.samB!].sort();
    expect(body.rows.map((r: { technician: { id: string } | null }) => r.technician?.id ?? null)).toEqual([
      ids.adam,
      ...sams,
      ids.zoe,
      null,
    ]);
    const [adam, sam, other, zoe, loose] = body.rows;
    expect(adam).toEqual({ technician: { id: ids.adam, name: "adam Bell" }, duty: [], visits: [], holds: [] });
    expect(sam.technician).toEqual({ id: ids.sam, name: "Sam Ortiz" });
    expect(sam.duty).toEqual([duty("08:00", "17:00")]);
    // Each visit exactly as GET /incidents/{id} answers it.
    expect(sam.visits).toEqual([
      await incident(ids.nineOClock!),
      await incident(ids.termiteVisit!),
      await incident(ids.lateEvening!),
    ]);
    expect(sam.visits[0]).toMatchObject({
      clientName: "Jane",
      postalCode: "10001",
      appointment: { localStart: `${DAY}T09:00:00-05:00`, localEnd: `${DAY}T10:00:00-05:00` },
    });
    expect(sam.holds).toEqual([]);
    expect(other.holds).toEqual([
      {
        start: at("15:00"),
        end: at("18:00"),
        expiresAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        serviceId: ids.termites,
      },
    ]);
    expect(Date.parse(other.holds[0].expiresAt)).toBeGreaterThan(Date.now());
    expect(zoe.duty).toEqual([duty("10:00", "14:00")]);
    expect(zoe.visits.map((v: { id: string }) => v.id)).toEqual([ids.completed, ids.noShow, ids.sameStart]);
    expect(zoe.holds).toEqual([]);
    expect(loose).toEqual({
      technician: null,
      duty: [],
      visits: [await incident(ids.inactive!), await incident(ids.unassigned!)],
      holds: [],
    });
  });

  it("shows every status but cancelled, each with its own status", async () => {
    const { body } = await board(t);
    const visits = body.rows.flatMap((r: { visits: { id: string; status: string }[] }) => r.visits);
    expect(visits.map((v: { id: string }) => v.id)).not.toContain(ids.cancelled);
    const statusOf = (id: string) => visits.find((v: { id: string }) => v.id === id)?.status;
    expect(statusOf(ids.completed!)).toBe("completed");
    expect(statusOf(ids.noShow!)).toBe("no_show");
    expect(statusOf(ids.nineOClock!)).toBe("scheduled");
  });

  it("a day without visits of no one: no row without a technician; a closed date: no one's duty", async () => {
    const monday = await board(t, "?date=2031-03-03");
    expect(monday.body.rows.map((r: { technician: { id: string } | null }) => r.technician?.id ?? null)).not.toContain(
      null,
    );
    expect(monday.body.rows).toHaveLength(4);
    const closed = await board(t, "?date=2031-03-05");
    expect(closed.body.rows.map((r: { duty: unknown[] }) => r.duty)).toEqual([[], [], [], []]);
  });

  it("duty across a DST change keeps each end's own offset", async () => {
    // 2031-03-09, a Sunday: New York moves from -05:00 to -04:00 at 02:00.
    const { body } = await board(t, "?date=2031-03-09");
    const sam = body.rows.find((r: { technician: { id: string } | null }) => r.technician?.id === ids.sam);
    expect(sam.duty).toEqual([
      {
        start: "2031-03-09T05:00:00.000Z",
        end: "2031-03-09T10:00:00.000Z",
        localStart: "2031-03-09T00:00:00-05:00",
        localEnd: "2031-03-09T06:00:00-04:00",
      },
    ]);
  });

  it("without a date: the org's today", async () => {
    const today = new Intl.DateTimeFormat("en-CA", { timeZone: ZONE }).format(Date.now());
    const res = await board(t, "");
    expect(res.status, res.text).toBe(200);
    expect(res.body.date).toBe(today);
  });

  it("crew mode: one row without a technician, the org's opening hours as its duty, every visit and live hold", async () => {
    const crews = await newTenant("Crews");
    await storeSchedule(db(), crews.orgId, { timeZone: ZONE, capacity: 2 });
    const first = await storeVisit(crews, { start: at("09:00") });
    const second = await storeVisit(crews, { start: at("09:00") });
    await storeHold(crews, { start: at("11:00") });
    const res = await board(crews);
    expect(res.status, res.text).toBe(200);
    expect(res.body.rows).toHaveLength(1);
    const [row] = res.body.rows;
    expect(row.technician).toBeNull();
    expect(row.duty).toEqual([duty("08:00", "17:00")]);
    expect(row.visits.map((v: { id: string }) => v.id)).toEqual([first, second].sort());
    expect(row.holds).toMatchObject([{ start: at("11:00"), end: at("12:00"), serviceId: null }]);
    // An empty day of crew mode still has its row.
    const empty = await board(crews, "?date=2031-03-03");
    expect(empty.body.rows).toEqual([
      { technician: null, duty: [duty("08:00", "17:00", "2031-03-03")], visits: [], holds: [] },
    ]);
  });

  it.each([
    ["an impossible date", "?date=2031-02-30", "date", "invalid_format"],
    ["a date without zero padding", "?date=2031-3-4", "date", "invalid_format"],
    ["a date-time", "?date=2031-03-04T00:00:00Z", "date", "invalid_format"],
    ["year 0000", "?date=0000-01-01", "date", "invalid_format"],
    ["an empty date", "?date=", "date", "empty_value"],
    ["a repeated date", `?date=${DAY}&date=${DAY}`, "date", "invalid_type"],
    ["an unknown parameter", "?day=2031-03-04", "day", "unknown_field"],
  ])("%s is 422", async (_name, query, path, code) => {
    const body = expectProblem(await board(t, query), 422, "validation_failed");
    expect(body.errors).toContainEqual(expect.objectContaining({ path, code }));
  });

  it("office and read keys may read it; an agent key is 403 forbidden; MCP get_board answers the same", async () => {
    const read = await withRole(t, "read");
    const office = await board(t);
    expect((await board(read)).body).toEqual(office.body);
    const agent = expectProblem(await board(await withRole(t, "agent")), 403, "forbidden");
    expect(agent.role).toBe("agent");
    expect(toolAnswer(await mcpCall(read, "get_board", { date: DAY })).body).toEqual(office.body);
    expectProblem(await call(null, `/api/v1/board?date=${DAY}`), 401, "unauthenticated");
  });
});
