// End-to-end proof of docs/api.md's "After the booking" (incidents) against
// a real `wrangler dev` over a real local D1: new bookings and reschedules of
// other incidents racing for one slot never overbook it and never leave a
// moved incident in two slots or none; a reschedule racing a cancel of the
// same incident always ends cancelled and holding nothing; the MCP tools give
// the same JSON as HTTP; and refused input changes nothing.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { credentialsOf } from "../support/http";
import { expectProblem } from "../support/problem";
import { OPEN_ALWAYS } from "../support/schedules";
import { DAY, HOUR, iso, MINUTE, slotAt } from "../support/time";
import {
  type ApiResponse,
  admin,
  applyMigrations,
  DevServer,
  d1Execute,
  freePort,
  jsonLine,
  type RequestOptions,
  request,
  type Tenant,
} from "./harness";

// biome-ignore lint/suspicious/noExplicitAny: incidents and problems are arbitrary JSON here
type Json = any;

const NOW = Date.now();
const RACERS = 50;
/** How long the second request of a reschedule-versus-cancel round waits after the first leaves. */
const STAGGER_MS = [0, 0, 1, 2, 4, 8];
const CAPACITY_B = 3;
const PHONE = "(917) 555-0134";
const E164 = "+19175550134";

let stateDir: string | undefined;
let server: DevServer | undefined;
/** The default schedule of a new org (UTC, capacity 1, Mon–Fri 08:00–17:00, 120 minutes notice). */
let orgA: Tenant;
/** UTC, open around the clock, capacity 3, no notice. */
let orgB: Tenant;
/** Bookable slots of org A, at least two days ahead, in order; each test takes its own. */
let poolA: string[] = [];

/** An incident of org A whose appointment started yesterday, written straight into local D1. */
const PAST_ID = "inc_0000000000pastpastpastpast";
const PAST_START = Math.floor(NOW / DAY) * DAY - DAY + 10 * HOUR;

function take(count: number): string[] {
  if (poolA.length < count) throw new Error(`only ${poolA.length} slots of org A left, ${count} wanted`);
  return poolA.splice(0, count);
}

/** `wrangler d1 execute` on the suite's local state. */
const execute = (sql: string) => d1Execute(stateDir!, sql);

beforeAll(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-e2e-incidents-"));
  stateDir = dir;
  // Migrations, the server, then the orgs: a workerd starting beside another
  // process's write can die of SQLITE_BUSY (DevServer.start).
  await applyMigrations(dir);
  const dev = await DevServer.start(dir, await freePort());
  server = dev;
  // Two chains at once, each through its own process; a write that meets the
  // other's lock is tried again (the CLI does so itself, execute() here).
  const provisionA = async () => {
    orgA = jsonLine<Tenant>(await admin(dir, ["org", "create", "--name", "Incidents A"]), "org create A");
    // No API call makes an appointment that has already started: one is written as create-incident would have.
    const created = PAST_START - 2 * DAY;
    await execute(
      `INSERT INTO incidents (id, org_id, status, client_name, insect_name, account_id, phone, notes, starts_at, ends_at, created_at, updated_at, cancelled_at, cancel_reason) VALUES ('${PAST_ID}', '${orgA.orgId}', 'scheduled', 'Past Caller', 'wasps', NULL, '${E164}', NULL, ${PAST_START}, ${PAST_START + HOUR}, ${created}, ${created}, NULL, NULL)`,
    );
  };
  const provisionB = async () => {
    orgB = jsonLine<Tenant>(
      await admin(dir, ["org", "create", "--name", "Incidents B", "--time-zone", "UTC"]),
      "org create B",
    );
    const schedule = path.join(dir, "schedule-b.json");
    fs.writeFileSync(
      schedule,
      JSON.stringify({ capacity: CAPACITY_B, minNoticeMinutes: 0, horizonDays: 30, weeklyHours: OPEN_ALWAYS }),
    );
    jsonLine(await admin(dir, ["schedule", "set", "--org", orgB.orgId, "--file", schedule]), "schedule set B");
  };
  await Promise.all([provisionA(), provisionB()]);
  const found = await agent(orgA, "available-appointments", { dateTime: slotAt(2, 0, NOW), limit: 100 });
  expect(found.status, found.text).toBe(200);
  poolA = found.body.slots.map((slot: { start: string }) => slot.start);
  expect(poolA).toHaveLength(100);
}, 180_000);

afterAll(async () => {
  if (proxyLost.resent > 0)
    console.log(`wrangler dev's proxy lost ${proxyLost.resent} request(s); each was sent again`);
  await server?.stop();
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

/**
 * wrangler dev's own answer (text, not a problem document) when its proxy
 * writes a request into a pooled connection to the worker that the worker's
 * side is closing after 5 s idle (cloudflare/workers-sdk#14641, #15252): the
 * request never reached the worker, which did not restart either. It is sent
 * again, and counted; any other 5xx is the API's and fails the test.
 */
const PROXY_LOST = /^Your worker restarted mid-request/;
const proxyLost = { resent: 0 };
const isProxyLost = (status: number, text: string) => status === 503 && PROXY_LOST.test(text);

async function call(tenant: Tenant, urlPath: string, options: RequestOptions = {}): Promise<ApiResponse> {
  if (!server) throw new Error("the server did not start");
  for (let attempt = 1; ; attempt++) {
    const res = await request(server.baseUrl, tenant, urlPath, options);
    if (attempt === 3 || !isProxyLost(res.status, res.text)) return res;
    proxyLost.resent++;
  }
}

/** fetch for the MCP client, with the same resending of requests wrangler's proxy lost. */
async function mcpFetch(url: string | URL, init?: RequestInit): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const response = await fetch(url, init);
    if (attempt === 3 || response.status !== 503) return response;
    const text = await response.clone().text();
    if (!isProxyLost(response.status, text)) return response;
    proxyLost.resent++;
  }
}

const agent = (tenant: Tenant, endpoint: string, body: unknown) =>
  call(tenant, `/api/v1/ai-agent/${endpoint}`, { body });
const book = (tenant: Tenant, dateTime: string, clientName: string, extra: Record<string, unknown> = {}) =>
  agent(tenant, "create-incident", { dateTime, clientName, insectName: "termites", ...extra });
const getIncident = (tenant: Tenant, id: string) => call(tenant, `/api/v1/incidents/${encodeURIComponent(id)}`);
const cancel = (tenant: Tenant, id: string, body: unknown = {}) =>
  call(tenant, `/api/v1/incidents/${encodeURIComponent(id)}/cancel`, { body });
const reschedule = (tenant: Tenant, id: string, dateTime: string) =>
  call(tenant, `/api/v1/incidents/${encodeURIComponent(id)}/reschedule`, { body: { dateTime } });

async function booked(tenant: Tenant, dateTime: string, clientName: string, extra: Record<string, unknown> = {}) {
  const res = await book(tenant, dateTime, clientName, extra);
  expect(res.status, res.text).toBe(200);
  expect(res.body).toMatchObject({ status: "scheduled", dateTime, appointment: { remaining: expect.any(Number) } });
  // The incident as GET shows it: create-incident's appointment also carries `remaining`.
  const { remaining: _, ...appointment } = res.body.appointment;
  return { ...res.body, appointment } as Json;
}

async function incident(tenant: Tenant, id: string): Promise<Json> {
  const res = await getIncident(tenant, id);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** Every incident of the list with `query`, all pages. */
async function listAll(tenant: Tenant, query: Record<string, string> = {}): Promise<Json[]> {
  const all: Json[] = [];
  let cursor: string | null = null;
  do {
    const params = new URLSearchParams({ ...query, limit: "200", ...(cursor ? { cursor } : {}) });
    const res = await call(tenant, `/api/v1/incidents?${params}`);
    expect(res.status, res.text).toBe(200);
    all.push(...res.body.data);
    cursor = res.body.nextCursor;
  } while (cursor);
  return all;
}

async function check(tenant: Tenant, dateTime: string): Promise<Json> {
  const res = await agent(tenant, "is-booking-available", { dateTime });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** A free slot of capacity `capacity`: available, nothing holding it. */
async function expectFree(tenant: Tenant, dateTime: string, capacity = 1) {
  const checked = await check(tenant, dateTime);
  expect(checked, dateTime).toMatchObject({
    available: true,
    reason: null,
    slot: { start: dateTime, remaining: capacity },
  });
}

function expectInvalidPhone(res: ApiResponse) {
  const body = expectProblem(res, 422, "validation_failed");
  expect(body.errors).toEqual([{ path: "phone", code: "invalid_phone", message: expect.any(String) }]);
}

function expectNotChangeable(res: ApiResponse, reason: "cancelled" | "in_the_past") {
  expectProblem(res, 409, "incident_not_changeable");
  expect(res.body.reason).toBe(reason);
}

function expectSlotUnavailable(res: ApiResponse, reason: string) {
  expectProblem(res, 409, "slot_unavailable");
  expect(res.body).toMatchObject({ reason, alternatives: expect.any(Array) });
}

/** Counts of scheduled incidents by appointment start. */
function bySlot(incidents: Json[]): Map<string, Json[]> {
  const slots = new Map<string, Json[]>();
  for (const one of incidents) {
    expect(one.status).toBe("scheduled");
    expect(one.dateTime).toBe(one.appointment.start);
    slots.set(one.dateTime, [...(slots.get(one.dateTime) ?? []), one]);
  }
  return slots;
}

/**
 * No slot of the org holds more scheduled incidents than `capacity`, and for
 * each of `slots` is-booking-available and available-appointments agree with
 * the incidents listed there.
 */
async function expectSlotsAgree(tenant: Tenant, capacity: number, slots: string[]) {
  const holding = bySlot(await listAll(tenant, { status: "scheduled" }));
  for (const [start, there] of holding)
    expect(there.length, `scheduled incidents at ${start}`).toBeLessThanOrEqual(capacity);
  const sorted = [...new Set(slots)].sort();
  const checks = await Promise.all(sorted.map((start) => check(tenant, start)));
  const listed = await agent(tenant, "available-appointments", { dateTime: sorted[0], limit: 100 });
  expect(listed.status, listed.text).toBe(200);
  const offered = new Map<string, number>(
    listed.body.slots.map((slot: { start: string; remaining: number }) => [slot.start, slot.remaining]),
  );
  const last = listed.body.slots.at(-1).start;
  expect(last >= sorted.at(-1)!, "the listing reaches every slot checked").toBe(true);
  sorted.forEach((start, i) => {
    const remaining = capacity - (holding.get(start)?.length ?? 0);
    expect(checks[i], start).toMatchObject({
      available: remaining > 0,
      reason: remaining > 0 ? null : "fully_booked",
      slot: { start, remaining },
    });
    expect(offered.get(start), start).toBe(remaining > 0 ? remaining : undefined);
  });
  // Every slot offered in that window has exactly the room its listed incidents leave.
  for (const [start, remaining] of offered) expect(remaining, start).toBe(capacity - (holding.get(start)?.length ?? 0));
  return holding;
}

interface Mover {
  id: string;
  from: string;
  before: Json;
}

interface RaceFigures {
  ok: number;
  conflicts: number;
  serverErrors: number;
}

/**
 * Fires RACERS requests at once for `target`: new bookings and reschedules of
 * `movers` (booked beforehand in other slots), in `order`; checks that exactly
 * `capacity` succeed and what every incident holds afterwards.
 */
async function raceForSlot(
  label: string,
  tenant: Tenant,
  capacity: number,
  target: string,
  movers: Mover[],
  order: "reschedules first" | "alternating",
) {
  const newBookings = RACERS - movers.length;
  const before = await listAll(tenant, { status: "scheduled" });
  const failures: string[] = [];
  const resentBefore = proxyLost.resent;
  type Outcome = { kind: "book"; res: ApiResponse } | { kind: "move"; mover: Mover; res: ApiResponse };
  const requests: Promise<Outcome | null>[] = [];
  // A reschedule reads its incident before it can write, a new booking writes at once: with the reschedules
  // leaving first they win places too, alternating mostly the new bookings do.
  for (let i = 0; i < RACERS; i++) {
    const mover = order === "reschedules first" ? movers[i] : i % 2 === 1 ? movers[(i - 1) / 2] : undefined;
    const sent: Promise<Outcome> = mover
      ? reschedule(tenant, mover.id, target).then((res) => ({ kind: "move", mover, res }))
      : book(tenant, target, `${label} racer ${i}`).then((res) => ({ kind: "book", res }));
    requests.push(
      sent.catch((error: unknown) => {
        failures.push(String(error));
        return null;
      }),
    );
  }
  const outcomes = (await Promise.all(requests)).filter((o): o is Outcome => o !== null);
  const figures: RaceFigures = {
    ok: outcomes.filter((o) => o.res.status === 200).length,
    conflicts: outcomes.filter((o) => o.res.status === 409).length,
    serverErrors: outcomes.filter((o) => o.res.status >= 500).length,
  };
  const moved = outcomes.filter((o) => o.kind === "move" && o.res.status === 200).length;
  console.log(
    `race ${label} (capacity ${capacity}, ${order}): ${newBookings} new bookings + ${movers.length} reschedules → ${figures.ok} × 200 (${moved} reschedules), ${figures.conflicts} × 409, ${figures.serverErrors} × 5xx, ${failures.length} network errors, ${proxyLost.resent - resentBefore} resent after wrangler's proxy lost them`,
  );
  expect(failures).toEqual([]);
  const unexpected = outcomes.filter((o) => o.res.status !== 200 && o.res.status !== 409);
  expect(unexpected.map((o) => `${o.kind} → ${o.res.status} ${o.res.text}`).join("\n")).toBe("");
  expect(figures).toEqual({ ok: capacity, conflicts: RACERS - capacity, serverErrors: 0 });

  const winners = new Set<string>();
  const refused: Mover[] = [];
  for (const outcome of outcomes) {
    if (outcome.res.status === 409) {
      expectSlotUnavailable(outcome.res, "fully_booked");
      if (outcome.kind === "move") refused.push(outcome.mover);
      continue;
    }
    expect(outcome.res.body).toMatchObject({ status: "scheduled", dateTime: target, appointment: { start: target } });
    if (outcome.kind === "move") expect(outcome.res.body.id).toBe(outcome.mover.id);
    winners.add(outcome.res.body.id);
  }
  expect(winners.size).toBe(capacity);

  // Every incident is where its answer says: a moved one in the target only, a refused one untouched in its old slot.
  const after = await listAll(tenant, { status: "scheduled" });
  const createdOk = outcomes.filter((o) => o.kind === "book" && o.res.status === 200).length;
  expect(after).toHaveLength(before.length + createdOk);
  const byId = new Map(after.map((one) => [one.id, one]));
  expect(byId.size).toBe(after.length);
  const fetched = await Promise.all(movers.map((mover) => incident(tenant, mover.id)));
  for (const [i, mover] of movers.entries()) {
    const now = byId.get(mover.id);
    expect(fetched[i]).toEqual(now);
    if (winners.has(mover.id)) {
      expect(now).toMatchObject({ status: "scheduled", dateTime: target, createdAt: mover.before.createdAt });
      expect(now.updatedAt >= mover.before.updatedAt).toBe(true);
    } else {
      expect(now, mover.id).toEqual(mover.before);
    }
  }
  const holding = await expectSlotsAgree(tenant, capacity, [target, ...movers.map((m) => m.from)]);
  expect(new Set((holding.get(target) ?? []).map((one: Json) => one.id))).toEqual(winners);
  for (const start of new Set(movers.map((m) => m.from))) {
    const stayed = refused.filter((m) => m.from === start).map((m) => m.id);
    expect(new Set((holding.get(start) ?? []).map((one: Json) => one.id)), start).toEqual(new Set(stayed));
  }
  return figures;
}

describe("racing bookings and reschedules for one slot", () => {
  it(`capacity 1: ${RACERS} requests, exactly one wins, nothing held twice or lost`, async () => {
    const [target, ...old] = take(1 + RACERS / 2);
    const movers = await Promise.all(
      old.map(async (from, i) => {
        const before = await booked(orgA, from, `Mover A${i}`);
        return { id: before.id, from, before };
      }),
    );
    await raceForSlot("A", orgA, 1, target!, movers, "reschedules first");
  });

  it(`capacity 3: ${RACERS} requests, exactly three win, nothing held twice or lost`, async () => {
    const target = slotAt(2, 12, NOW);
    // 25 incidents three to a slot (the last slot holds one): a refused one must stay beside the others.
    const movers = await Promise.all(
      Array.from({ length: RACERS / 2 }, async (_, i) => {
        const from = slotAt(3, Math.floor(i / CAPACITY_B), NOW);
        const before = await booked(orgB, from, `Mover B${i}`);
        return { id: before.id, from, before };
      }),
    );
    await raceForSlot("B", orgB, CAPACITY_B, target, movers, "alternating");
  });
});

describe("a reschedule racing a cancel of the same incident", () => {
  it("20 rounds: the cancel always succeeds and the incident ends cancelled, holding no slot", async () => {
    const rounds = 20;
    const slots = take(2 * rounds);
    const tally = { rescheduledFirst: 0, cancelledFirst: 0 };
    for (let round = 0; round < rounds; round++) {
      const from = slots[2 * round]!;
      const to = slots[2 * round + 1]!;
      const { id } = await booked(orgA, from, `Racer ${round}`);
      // Which request leaves first alternates, and the other follows 0–8 ms later; the server decides the order.
      const lag = STAGGER_MS[Math.floor(round / 2) % STAGGER_MS.length]!;
      const later = <T>(send: () => Promise<T>) => sleep(lag).then(send);
      const [moved, cancelled] =
        round % 2 === 0
          ? await Promise.all([reschedule(orgA, id, to), later(() => cancel(orgA, id, { reason: `round ${round}` }))])
          : (
              await Promise.all([cancel(orgA, id, { reason: `round ${round}` }), later(() => reschedule(orgA, id, to))])
            ).reverse();
      expect(cancelled!.status, cancelled!.text).toBe(200);
      expect(cancelled!.body).toMatchObject({ id, status: "cancelled", cancelReason: `round ${round}` });
      if (moved!.status === 200) {
        tally.rescheduledFirst++;
        expect(moved!.body).toMatchObject({ id, status: "scheduled", dateTime: to });
        expect(cancelled!.body.dateTime).toBe(to);
      } else {
        tally.cancelledFirst++;
        expectNotChangeable(moved!, "cancelled");
        expect(cancelled!.body.dateTime).toBe(from);
      }
      expect(await incident(orgA, id)).toEqual(cancelled!.body);
      await Promise.all([expectFree(orgA, from), expectFree(orgA, to)]);
    }
    console.log(
      `reschedule vs cancel: ${rounds} rounds, reschedule ran first ${tally.rescheduledFirst}, cancel ran first ${tally.cancelledFirst}`,
    );
    expect(tally.rescheduledFirst + tally.cancelledFirst).toBe(rounds);
    // Nothing of these rounds holds a slot.
    const range = { status: "scheduled", from: slots[0]!, to: iso(Date.parse(slots.at(-1)!) + 1) };
    expect(await listAll(orgA, range)).toEqual([]);
  });
});

// biome-ignore lint/suspicious/noExplicitAny: tool results are arbitrary JSON
const toolJson = (result: object): any => JSON.parse((result as { content: { text: string }[] }).content[0]!.text);
/** A problem document without the requestId, which differs from call to call. */
const problemOf = ({ requestId: _, ...rest }: Json) => rest;

describe("the incident tools over MCP", () => {
  it("find_caller, get_incident, list_incidents, cancel_incident and reschedule_incident answer as HTTP does", async () => {
    const [first, second, target] = take(3);
    const contact = await call(orgA, "/api/v1/contacts", { body: { firstName: "Mia", mobilePhone: PHONE } });
    expect(contact.status, contact.text).toBe(200);
    const one = await booked(orgA, first!, "Mia Caller", { phone: PHONE, notes: "Gate code 4412" });
    const two = await booked(orgA, second!, "Mia Caller", { phone: "+1 917-555-0134" });
    expect([one.phone, two.phone]).toEqual([E164, E164]);

    const transport = new StreamableHTTPClientTransport(new URL(`${server!.baseUrl}/mcp`), {
      requestInit: { headers: credentialsOf(orgA) },
      fetch: mcpFetch,
    });
    const client = new Client({ name: "e2e-incidents", version: "1.0.0" });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      const byName = new Map(tools.map((tool) => [tool.name, tool]));
      for (const name of ["find_caller", "get_incident", "list_incidents"])
        expect(byName.get(name)?.annotations, name).toMatchObject({ readOnlyHint: true, openWorldHint: false });
      for (const name of ["cancel_incident", "reschedule_incident"]) {
        expect(byName.get(name)?.annotations, name).toMatchObject({
          readOnlyHint: false,
          destructiveHint: true,
          idempotentHint: true,
          openWorldHint: false,
        });
      }
      const tool = async (name: string, args: Record<string, unknown>) => {
        const result = await client.callTool({ name, arguments: args });
        return { isError: result.isError === true, body: toolJson(result) };
      };

      // Reads: the same JSON as HTTP.
      const caller = await tool("find_caller", { phone: "917.555.0134" });
      const callerHttp = await agent(orgA, "find-caller", { phone: "917.555.0134" });
      expect(callerHttp.status, callerHttp.text).toBe(200);
      expect(caller).toEqual({ isError: false, body: callerHttp.body });
      expect(caller.body.phone).toBe(E164);
      expect(caller.body.contacts.map((c: Json) => c.id)).toEqual([contact.body.id]);
      expect(caller.body.upcomingIncidents.map((i: Json) => i.id)).toEqual([one.id, two.id]);
      expect(caller.body.upcomingIncidents[0]).toEqual(one);

      expect(await tool("get_incident", { id: one.id })).toEqual({
        isError: false,
        body: await incident(orgA, one.id),
      });
      const page = await tool("list_incidents", { phone: PHONE, limit: 1 });
      const pageHttp = await call(orgA, `/api/v1/incidents?phone=${encodeURIComponent(PHONE)}&limit=1`);
      expect(pageHttp.status, pageHttp.text).toBe(200);
      expect(page).toEqual({ isError: false, body: pageHttp.body });
      // The past incident of the same phone comes first (start order); the tool's cursor pages on over HTTP.
      expect(page.body).toMatchObject({ data: [{ id: PAST_ID }], hasMore: true });
      const next = await call(
        orgA,
        `/api/v1/incidents?phone=${encodeURIComponent(E164)}&limit=5&cursor=${page.body.nextCursor}`,
      );
      expect(next.status, next.text).toBe(200);
      expect(next.body.data.map((i: Json) => i.id)).toEqual([one.id, two.id]);
      expect(await tool("list_incidents", { phone: E164, limit: 5, cursor: page.body.nextCursor })).toEqual({
        isError: false,
        body: next.body,
      });

      // Changes: the tool's answer is the incident as HTTP then shows it, and an HTTP retry answers the same.
      const moved = await tool("reschedule_incident", { id: one.id, dateTime: target });
      expect(moved.isError).toBe(false);
      expect(moved.body).toMatchObject({ id: one.id, status: "scheduled", dateTime: target, notes: "Gate code 4412" });
      expect(await incident(orgA, one.id)).toEqual(moved.body);
      const movedAgain = await reschedule(orgA, one.id, target!);
      expect([movedAgain.status, movedAgain.body]).toEqual([200, moved.body]);
      await expectFree(orgA, first!);

      const cancelled = await tool("cancel_incident", { id: two.id, reason: "Sold the house" });
      expect(cancelled.isError).toBe(false);
      expect(cancelled.body).toMatchObject({ id: two.id, status: "cancelled", cancelReason: "Sold the house" });
      expect(await incident(orgA, two.id)).toEqual(cancelled.body);
      const cancelledAgain = await cancel(orgA, two.id, { reason: "Sold the house" });
      expect([cancelledAgain.status, cancelledAgain.body]).toEqual([200, cancelled.body]);
      await expectFree(orgA, second!);

      // Failures: a tool result with isError carrying the very problem document HTTP answers with.
      const failures: [string, Record<string, unknown>, () => Promise<ApiResponse>, number, string][] = [
        [
          "get_incident",
          { id: "inc_0000000000000000000000nope" },
          () => getIncident(orgA, "inc_0000000000000000000000nope"),
          404,
          "incident_not_found",
        ],
        ["cancel_incident", { id: "nope" }, () => cancel(orgA, "nope"), 404, "incident_not_found"],
        [
          "reschedule_incident",
          { id: two.id, dateTime: first! },
          () => reschedule(orgA, two.id, first!),
          409,
          "incident_not_changeable",
        ],
        ["cancel_incident", { id: PAST_ID }, () => cancel(orgA, PAST_ID), 409, "incident_not_changeable"],
        ["find_caller", { phone: "12" }, () => agent(orgA, "find-caller", { phone: "12" }), 422, "validation_failed"],
        [
          "list_incidents",
          { phone: "not a phone" },
          () => call(orgA, "/api/v1/incidents?phone=not%20a%20phone"),
          422,
          "validation_failed",
        ],
      ];
      for (const [name, args, viaHttp, status, code] of failures) {
        const failed = await tool(name, args);
        expect(failed.isError, name).toBe(true);
        expect(failed.body, name).toMatchObject({
          type: `/problems/${code}`,
          status,
          code,
          requestId: expect.any(String),
        });
        const http = await viaHttp();
        expectProblem(http, status, code);
        expect(problemOf(failed.body), name).toEqual(problemOf(http.body));
      }
      const refused = await tool("reschedule_incident", { id: two.id, dateTime: first! });
      expect(refused.body.reason).toBe("cancelled");
      const phone = await tool("find_caller", { phone: "12" });
      expect(phone.body.errors).toEqual([{ path: "phone", code: "invalid_phone", message: expect.any(String) }]);
      // Nothing the failures touched changed.
      expect(await incident(orgA, two.id)).toEqual(cancelled.body);
      await expectFree(orgA, first!);
    } finally {
      await client.close();
    }
  });
});

describe("refused input over HTTP changes nothing", () => {
  it("a malformed phone on find-caller, create-incident and the list filter is 422 invalid_phone", async () => {
    const [free] = take(1);
    const before = await listAll(orgA);
    for (const phone of ["12", "not a phone", "+1 555"]) {
      expectInvalidPhone(await agent(orgA, "find-caller", { phone }));
      expectInvalidPhone(await book(orgA, free!, "Bad Phone", { phone }));
      expectInvalidPhone(await call(orgA, `/api/v1/incidents?${new URLSearchParams({ phone })}`));
    }
    // Every failing field is listed in one 422, the phone beside the others.
    const both = await agent(orgA, "create-incident", { dateTime: free, insectName: "ants", phone: "12" });
    expect(expectProblem(both, 422, "validation_failed").errors).toEqual(
      expect.arrayContaining([
        { path: "clientName", code: "required", message: expect.any(String) },
        { path: "phone", code: "invalid_phone", message: expect.any(String) },
      ]),
    );
    expect(both.body.errors).toHaveLength(2);
    expect(await listAll(orgA)).toEqual(before);
    await expectFree(orgA, free!);
  });

  it("an unknown, malformed or other org's id is 404 incident_not_found on get, cancel and reschedule", async () => {
    const [free] = take(1);
    const theirs = await booked(orgB, slotAt(4, 10, NOW), "Other Org Caller");
    const before = await listAll(orgA);
    const ids = [
      "inc_0000000000000000000000zzzz",
      "inc_",
      "not-an-id",
      "a/b",
      "inc_🦗",
      "x".repeat(2_000),
      `${PAST_ID}' OR '1'='1`,
      theirs.id,
      theirs.id.toUpperCase(),
    ];
    for (const id of ids) {
      expectProblem(await getIncident(orgA, id), 404, "incident_not_found");
      expectProblem(await cancel(orgA, id), 404, "incident_not_found");
      expectProblem(await cancel(orgA, id, { reason: "no" }), 404, "incident_not_found");
      expectProblem(await reschedule(orgA, id, free!), 404, "incident_not_found");
    }
    // The body is validated first (docs/api.md, "Errors"): an invalid body wins over an unknown id.
    const invalid = await call(orgA, "/api/v1/incidents/inc_0000000000000000000000zzzz/reschedule", { body: {} });
    expect(expectProblem(invalid, 422, "validation_failed").errors).toEqual([
      { path: "dateTime", code: "required", message: expect.any(String) },
    ]);
    expect(await listAll(orgA)).toEqual(before);
    expect(await incident(orgB, theirs.id)).toEqual(theirs);
    await expectFree(orgA, free!);
  });

  it("a cancelled incident cannot be moved and cancelling it again changes nothing", async () => {
    const [held, free] = take(2);
    const mine = await booked(orgA, held!, "Cancelled Caller");
    const { id } = mine;
    const first = await cancel(orgA, id, { reason: "No longer needed" });
    expect(first.status, first.text).toBe(200);
    expect(first.body).toEqual({
      ...mine,
      status: "cancelled",
      cancelReason: "No longer needed",
      cancelledAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      updatedAt: expect.any(String),
    });
    expect(first.body.updatedAt >= mine.updatedAt).toBe(true);
    await expectFree(orgA, held!);
    expectNotChangeable(await reschedule(orgA, id, free!), "cancelled");
    expectNotChangeable(await reschedule(orgA, id, held!), "cancelled");
    const again = await cancel(orgA, id, { reason: "Another reason" });
    expect([again.status, again.body]).toEqual([200, first.body]);
    expect(await incident(orgA, id)).toEqual(first.body);
    await Promise.all([expectFree(orgA, held!), expectFree(orgA, free!)]);
  });

  it("an appointment that has started cannot be cancelled or moved", async () => {
    const [free] = take(1);
    const before = await incident(orgA, PAST_ID);
    expect(before).toMatchObject({ status: "scheduled", dateTime: iso(PAST_START), cancelledAt: null });
    expectNotChangeable(await cancel(orgA, PAST_ID, { reason: "too late" }), "in_the_past");
    expectNotChangeable(await reschedule(orgA, PAST_ID, free!), "in_the_past");
    // Even to the slot it holds: that slot has started.
    expectNotChangeable(await reschedule(orgA, PAST_ID, iso(PAST_START)), "in_the_past");
    expect(await incident(orgA, PAST_ID)).toEqual(before);
    await expectFree(orgA, free!);
  });

  it("a reschedule to a slot that cannot be booked is 409 slot_unavailable and moves nothing", async () => {
    const [held, full] = take(2);
    const mine = await booked(orgA, held!, "Staying Caller");
    await booked(orgA, full!, "Other Caller");
    const before = await incident(orgA, mine.id);
    const cases: [string, string][] = [
      [full!, "fully_booked"],
      [iso(Date.parse(held!) + 30 * MINUTE), "not_a_slot_start"],
      [iso(PAST_START), "in_the_past"],
      [iso(Date.parse(held!) + 60 * DAY), "beyond_horizon"],
    ];
    for (const [dateTime, reason] of cases) expectSlotUnavailable(await reschedule(orgA, mine.id, dateTime), reason);
    expect(await incident(orgA, mine.id)).toEqual(before);
    expect(await check(orgA, held!)).toMatchObject({ available: false, reason: "fully_booked" });
  });
});
