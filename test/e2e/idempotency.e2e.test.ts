// End-to-end proof of retries and rate limits (docs/api.md) against a real
// `wrangler dev` over a real local D1, provisioned only through the admin CLI:
// - Idempotency-Key: a retry over HTTP gets the first response back byte for
//   byte, marked `Idempotent-Replayed: true`; 20 simultaneous identical
//   bookings under one key book one place; keys of two orgs never collide.
// - Rate limits: a second `wrangler dev` runs with a copy of wrangler.toml
//   whose RATE_LIMITER allows 5 requests a minute, so the real Workers Rate
//   Limiting binding can be exhausted: the 6th counted request of an org is a
//   429 with Retry-After: 60, while another org and /health carry on.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectProblem } from "../support/problem";
import { OPEN_ALWAYS } from "../support/schedules";
import { slotAt } from "../support/time";
import {
  type ApiResponse,
  admin,
  applyMigrations,
  configWithRateLimit,
  DevServer,
  freePort,
  jsonLine,
  type RequestOptions,
  request,
  type Tenant,
} from "./harness";

const RACERS = 20;
const CAPACITY = 3;
const LIMIT = 5;

const NOW = Date.now();
/** `hour`:00 UTC, `days` days after today (as the suite started): open, far from notice and horizon edges. */
const at = (days: number, hour: number) => slotAt(days, hour, NOW);

const utcSchedule = (capacity: number) => ({
  timeZone: "UTC",
  slotMinutes: 60,
  capacity,
  minNoticeMinutes: 0,
  horizonDays: 30,
  weeklyHours: OPEN_ALWAYS,
});

const databaseNames = (toml: string) => [...toml.matchAll(/^\s*database_name\s*=\s*"([^"]+)"/gm)].map((m) => m[1]);

let idemDir: string | undefined;
let limitDir: string | undefined;
let idemServer: DevServer | undefined;
let limitServer: DevServer | undefined;
let limitConfig: { text: string; original: string };
let orgI: Tenant; // idempotency server, capacity 3
let orgJ: Tenant; // idempotency server, another org
let orgA: Tenant; // rate-limit server
let orgB: Tenant; // rate-limit server

// CLI runs are sequential: parallel ones on one local database can fail with SQLITE_BUSY.
const createOrg = async (dir: string, name: string) =>
  jsonLine<Tenant>(await admin(dir, ["org", "create", "--name", name]), `org create ${name}`);

beforeAll(async () => {
  idemDir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-e2e-idem-"));
  limitDir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-e2e-ratelimit-"));
  limitConfig = configWithRateLimit(LIMIT);
  const configFile = path.join(limitDir, "wrangler.ratelimit.toml");
  fs.writeFileSync(configFile, limitConfig.text);

  await applyMigrations(idemDir);
  await applyMigrations(limitDir, configFile); // the low-limit config's database and migrations

  // The servers boot side by side (separate state folders), then the CLI provisions the orgs.
  [idemServer, limitServer] = await Promise.all([
    DevServer.start(idemDir, await freePort(), [], 90_000),
    DevServer.start(limitDir, await freePort(), ["--config", configFile], 90_000),
  ]);

  orgI = await createOrg(idemDir, "Idem I");
  orgJ = await createOrg(idemDir, "Idem J");
  const scheduleFile = path.join(idemDir, "schedule.json");
  fs.writeFileSync(scheduleFile, JSON.stringify(utcSchedule(CAPACITY)));
  jsonLine(await admin(idemDir, ["schedule", "set", "--org", orgI.orgId, "--file", scheduleFile]), "schedule set");
  // The admin CLI reads the project's wrangler.toml; the low-limit config
  // names the same D1 database, so both see the same local database.
  orgA = await createOrg(limitDir, "Limited A");
  orgB = await createOrg(limitDir, "Limited B");
}, 240_000);

afterAll(async () => {
  await Promise.all([idemServer?.stop(), limitServer?.stop()]);
  for (const dir of [idemDir, limitDir]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

function idem(tenant: Tenant | null, urlPath: string, options: RequestOptions = {}): Promise<ApiResponse> {
  if (!idemServer) throw new Error("the server did not start");
  return request(idemServer.baseUrl, tenant, urlPath, options);
}

const withKey = (key: string, json: unknown): RequestOptions => ({ body: json, headers: { "Idempotency-Key": key } });
const replayedHeader = (res: ApiResponse) => res.headers.get("Idempotent-Replayed");

function expectReplayOf(res: ApiResponse, first: ApiResponse) {
  expect(res.status, res.text).toBe(first.status);
  expect(res.text).toBe(first.text);
  expect(res.headers.get("Content-Type")).toBe(first.headers.get("Content-Type"));
  expect(replayedHeader(res)).toBe("true");
}

async function remainingAt(tenant: Tenant, dateTime: string): Promise<number> {
  const res = await idem(tenant, "/api/v1/ai-agent/is-booking-available", { body: { dateTime } });
  expect(res.status, res.text).toBe(200);
  return res.body.slot.remaining;
}

describe("Idempotency-Key over HTTP", () => {
  it("replays a created lead byte for byte with Idempotent-Replayed: true; the first response has no such header", async () => {
    const lead = { firstName: "Dana", lastName: "Ruiz", companyName: "Ruiz Deli" };
    const first = await idem(orgI, "/api/v1/leads", withKey("e2e-lead", lead));
    expect(first.status, first.text).toBe(200);
    expect(first.body.id).toMatch(/^lead_/);
    expect(replayedHeader(first)).toBeNull();

    const second = await idem(orgI, "/api/v1/leads", withKey("e2e-lead", lead));
    expectReplayOf(second, first);
    expect(second.headers.get("X-Request-Id")).not.toBe(first.headers.get("X-Request-Id"));

    const reused = await idem(orgI, "/api/v1/leads", withKey("e2e-lead", { ...lead, firstName: "Other" }));
    expectProblem(reused, 422, "idempotency_key_reused");
    expect(replayedHeader(reused)).toBeNull();
  });

  it("replays a booking without booking again", async () => {
    const dateTime = at(2, 10);
    const incident = { dateTime, clientName: "Ivy", insectName: "ants" };
    const first = await idem(orgI, "/api/v1/ai-agent/create-incident", withKey("e2e-incident", incident));
    expect(first.status, first.text).toBe(200);
    expect(replayedHeader(first)).toBeNull();
    expect(first.body.appointment.remaining).toBe(CAPACITY - 1);
    for (let i = 0; i < 2; i++)
      expectReplayOf(await idem(orgI, "/api/v1/ai-agent/create-incident", withKey("e2e-incident", incident)), first);
    expect(await remainingAt(orgI, dateTime)).toBe(CAPACITY - 1);
  });

  it(`books one place out of ${RACERS} simultaneous identical create-incident requests under one key`, async () => {
    const dateTime = at(2, 15);
    expect(await remainingAt(orgI, dateTime)).toBe(CAPACITY);
    const incident = { dateTime, clientName: "Racer", insectName: "termites" };
    const responses = await Promise.all(
      Array.from({ length: RACERS }, () =>
        idem(orgI, "/api/v1/ai-agent/create-incident", withKey("e2e-race", incident)),
      ),
    );

    const ok = responses.filter((res) => res.status === 200);
    const busy = responses.filter((res) => res.status !== 200);
    console.log(
      `idempotent race: ${RACERS} requests, ${ok.length} 200 (${ok.filter((r) => replayedHeader(r) === "true").length} replayed), ${busy.length} other`,
    );
    for (const res of busy) expectProblem(res, 409, "idempotency_in_progress");
    const fresh = ok.filter((res) => replayedHeader(res) === null);
    expect(fresh).toHaveLength(1);
    const booked = fresh[0]!;
    expect(booked.body.id).toMatch(/^inc_/);
    for (const res of ok) expect(res.text).toBe(booked.text);
    expect(new Set(ok.map((res) => res.body.id))).toEqual(new Set([booked.body.id]));

    expect(await remainingAt(orgI, dateTime)).toBe(CAPACITY - 1);
    // Settled: every retry now gets the one booking.
    expectReplayOf(await idem(orgI, "/api/v1/ai-agent/create-incident", withKey("e2e-race", incident)), booked);
    expect(await remainingAt(orgI, dateTime)).toBe(CAPACITY - 1);
  });

  it("keys of two orgs never collide", async () => {
    const contact = { firstName: "Same", email: "same@example.com" };
    const inI = await idem(orgI, "/api/v1/contacts", withKey("e2e-shared", contact));
    const inJ = await idem(orgJ, "/api/v1/contacts", withKey("e2e-shared", contact));
    for (const res of [inI, inJ]) {
      expect(res.status, res.text).toBe(200);
      expect(replayedHeader(res)).toBeNull();
    }
    expect(inI.body.id).not.toBe(inJ.body.id);
    expectReplayOf(await idem(orgJ, "/api/v1/contacts", withKey("e2e-shared", contact)), inJ);
  });
});

describe(`the real RATE_LIMITER binding (${LIMIT} requests a minute per org)`, () => {
  function limited(tenant: Tenant | null, urlPath: string, options: RequestOptions = {}): Promise<ApiResponse> {
    if (!limitServer) throw new Error("the server did not start");
    return request(limitServer.baseUrl, tenant, urlPath, options);
  }

  it("runs with the project's configuration except for the limit, on the same D1 database", () => {
    const original = limitConfig.original.split("\n");
    const derived = limitConfig.text.split("\n");
    expect(derived).toHaveLength(original.length);
    const differing = original.map((line, i) => [line, derived[i]!] as const).filter(([a, b]) => a !== b);
    const keys = differing.map(([a]) => a.split("=")[0]!.trim());
    // Besides the limit, only paths differ, made absolute: main, migrations, the assets and the [alias] files.
    expect(new Set(keys.filter((key) => !key.startsWith('"')))).toEqual(
      new Set(["main", "migrations_dir", "directory", "simple"]),
    );
    for (const [, line] of differing.filter(([a]) => a.trim().startsWith('"'))) expect(line).toMatch(/= "\/.+\.ts"$/);
    expect(keys.filter((key) => key === "main" || key === "simple")).toHaveLength(2);
    expect(differing.find(([a]) => a.trim().startsWith("simple"))?.[1]).toMatch(
      new RegExp(`limit = ${LIMIT}, period = 60 }`),
    );
    expect(databaseNames(limitConfig.text)).toEqual(databaseNames(limitConfig.original));
    expect(databaseNames(limitConfig.text).length).toBeGreaterThan(0);
  });

  it(`allows ${LIMIT} counted requests of an org, then 429 with Retry-After: 60; other orgs and /health carry on`, async () => {
    // The local limiter counts in fixed windows aligned to the minute: start
    // early in one so that every request below falls into it.
    const intoWindow = Date.now() % 60_000;
    if (intoWindow > 50_000) await sleep(60_000 - intoWindow + 250);
    const windowOf = () => Math.floor(Date.now() / 60_000);
    const window = windowOf();

    // Not counted: bad credentials (401), unknown paths (404), wrong methods (405), /health.
    const badKey = { ...orgA, apiKey: `${orgA.apiKey.slice(0, -1)}${orgA.apiKey.endsWith("a") ? "b" : "a"}` };
    for (let i = 0; i < 3; i++) {
      expectProblem(await limited(badKey, "/api/v1/contacts"), 401, "unauthenticated");
      expectProblem(await limited(orgA, "/api/v1/nope"), 404, "not_found");
      expectProblem(await limited(orgA, "/api/v1/leads"), 405, "method_not_allowed");
      expect((await limited(null, "/health")).status).toBe(200);
    }

    const allowed: [string, RequestOptions][] = [
      ["/api/v1/contacts", {}],
      ["/api/v1/leads", { body: { firstName: "One" } }],
      ["/api/v1/contacts", { body: { firstName: "Two" } }],
      ["/api/v1/contacts?limit=1", {}],
      ["/api/v1/leads", { body: {} }],
    ];
    expect(allowed).toHaveLength(LIMIT);
    for (const [urlPath, options] of allowed) {
      const res = await limited(orgA, urlPath, options);
      expect(res.status, `${urlPath}: ${res.text}`).toBe(200);
    }

    const refused = await limited(orgA, "/api/v1/leads", { body: { firstName: "Six" } });
    expectProblem(refused, 429, "rate_limited");
    expect(refused.headers.get("Retry-After")).toBe("60");
    // Still refused, whatever the operation, while the window lasts; the
    // checks that come before the limit still answer first.
    expectProblem(await limited(orgA, "/api/v1/contacts"), 429, "rate_limited");
    expectProblem(
      await limited(orgA, "/api/v1/leads", { rawBody: "x", headers: { "Content-Type": "text/plain" } }),
      429,
      "rate_limited",
    );
    expectProblem(await limited(orgA, "/api/v1/nope"), 404, "not_found");
    expectProblem(await limited(orgA, "/api/v1/leads"), 405, "method_not_allowed");
    expectProblem(await limited(badKey, "/api/v1/contacts"), 401, "unauthenticated");

    // Counted per org: B is untouched by A's exhaustion; /health is never limited.
    const inB = await limited(orgB, "/api/v1/contacts");
    expect(inB.status, inB.text).toBe(200);
    const health = await limited(null, "/health");
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: "ok" });

    expect(windowOf(), "the requests spilled into the next rate-limit window").toBe(window);
  });
});
