// D1 failures, injected round trip by round trip into the real app over a real
// local D1 (test/support/d1.ts): for every operation, over HTTP and as an MCP
// tool, and for every place a request can meet D1 — authentication of a cold
// key, the Idempotency-Key claim, the operation itself, the stored outcome,
// or all of them — a retryable D1 failure answers 503 `unavailable` with
// Retry-After and nothing internal; nothing of the failed request is left in
// D1 (no row, no claim that blocks the retry); and the retry on a healthy D1
// succeeds and is stored exactly once. Other failures are a bare 500.
import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { apiKeys } from "../../drizzle/schema";
import { ABANDONED_CLAIM_MS } from "../../src/db/idempotency";
import {
  D1_RETRYABLE,
  d1Error,
  everyTrip,
  type FaultPlan,
  firstMatching,
  nthTrip,
  type TripMatcher,
  wrapD1,
} from "../support/d1";
import type { ReadResponse } from "../support/http";
import { mcpCall, toolAnswer } from "../support/mcp";
import { expectProblem } from "../support/problem";
import { call } from "../support/request";
import { addAccount, db, newTenant, openAlways, type Tenant } from "../support/tenants";
import { HOUR, slotAt } from "../support/time";

// A whole UTC hour two days ahead: open, bookable, far from notice and horizon edges.
const SLOT = slotAt(2, 15);
const ACCOUNT_NAME = "Fault Tolerant Ltd";
const WRITE_TABLES = ["leads", "contacts", "incidents"] as const;
type WriteTable = (typeof WRITE_TABLES)[number];

/** A fresh org (so a cold key), its schedule, one account. */
interface Fixture {
  tenant: Tenant;
  accountId: string;
}

async function fixture(): Promise<Fixture> {
  const tenant = await newTenant("Faults");
  // Used within the minute: the key's last-use hint is not due, so no write runs beside the request.
  await db().update(apiKeys).set({ lastUsedAt: Date.now() }).where(eq(apiKeys.id, tenant.keyId));
  await openAlways(tenant, { capacity: 1 });
  const { id } = await addAccount(tenant, ACCOUNT_NAME);
  return { tenant, accountId: id };
}

interface Operation {
  name: string;
  tool: string;
  method: "GET" | "POST";
  path: (f: Fixture) => string;
  /** The body of a POST, or the tool's arguments of a GET. */
  args: (f: Fixture) => Record<string, unknown>;
  writes?: WriteTable;
}

const OPERATIONS: Operation[] = [
  {
    name: "create lead",
    tool: "create_lead",
    method: "POST",
    path: () => "/api/v1/leads",
    args: () => ({ firstName: "Fay", email: "fay@example.com" }),
    writes: "leads",
  },
  {
    name: "create contact",
    tool: "create_contact",
    method: "POST",
    path: () => "/api/v1/contacts",
    args: (f) => ({ firstName: "Col", accountId: f.accountId }),
    writes: "contacts",
  },
  {
    name: "list contacts",
    tool: "list_contacts",
    method: "GET",
    path: () => "/api/v1/contacts?limit=10",
    args: () => ({ limit: 10 }),
  },
  {
    name: "get account",
    tool: "get_account",
    method: "GET",
    path: (f) => `/api/v1/accounts/${f.accountId}`,
    args: (f) => ({ id: f.accountId }),
  },
  {
    name: "available appointments",
    tool: "find_available_appointments",
    method: "POST",
    path: () => "/api/v1/ai-agent/available-appointments",
    args: () => ({ dateTime: SLOT, limit: 5 }),
  },
  {
    name: "is booking available",
    tool: "check_booking_availability",
    method: "POST",
    path: () => "/api/v1/ai-agent/is-booking-available",
    args: () => ({ dateTime: SLOT }),
  },
  {
    name: "create incident",
    tool: "create_incident",
    method: "POST",
    path: () => "/api/v1/ai-agent/create-incident",
    args: () => ({ dateTime: SLOT, clientName: ACCOUNT_NAME, insectName: "Termites" }),
    writes: "incidents",
  },
];

type Transport = "http" | "mcp";

/** One request to the app with `binding` as its D1, over HTTP or as an MCP tool call. */
async function send(
  binding: D1Database,
  transport: Transport,
  op: Operation,
  f: Fixture,
  idempotencyKey?: string,
): Promise<ReadResponse> {
  const headers: Record<string, string> = idempotencyKey === undefined ? {} : { "Idempotency-Key": idempotencyKey };
  const bindings = { DB: binding };
  if (transport === "mcp") return mcpCall(f.tenant, op.tool, op.args(f), { headers, bindings });
  return call(f.tenant, op.path(f), { body: op.method === "POST" ? op.args(f) : undefined, headers, bindings });
}

/** The operation's own answer: the HTTP response, or the problem/result inside an MCP tool result. */
function outcome(
  res: ReadResponse,
  transport: Transport,
): { status: number; body: Record<string, unknown>; text: string } {
  if (transport === "http" || res.status !== 200) return { status: res.status, body: res.body, text: res.text };
  const { status, body, text } = toolAnswer(res);
  return { status, body, text };
}

// Words of D1's messages, SQL and stack frames: none may reach a client.
const INTERNALS =
  /D1_ERROR|overloaded|connection lost|reset|boom|sqlite|select |insert |update |delete |from "|idempotency_keys|api_keys|stack|\bat .+\(|\.ts:\d/i;

function expectUnavailable(res: ReadResponse, transport: Transport) {
  expect(res.text).not.toMatch(INTERNALS);
  const { status, body } = outcome(res, transport);
  expect(status, res.text).toBe(503);
  expect(body).toMatchObject({
    type: "/problems/unavailable",
    title: "Service unavailable",
    status: 503,
    code: "unavailable",
  });
  expect(Object.keys(body).sort()).toEqual(["code", "detail", "requestId", "status", "title", "type"]);
  // A tool result has no headers; over HTTP (and a /mcp request that failed before its tool ran) Retry-After is set.
  if (transport === "http" || res.status === 503) {
    expectProblem(res, 503, "unavailable");
    expect(res.headers.get("Retry-After")).toBe("1");
  }
}

function expectInternalError(res: ReadResponse, transport: Transport) {
  expect(res.text).not.toMatch(INTERNALS);
  const { status, body } = outcome(res, transport);
  expect(status, res.text).toBe(500);
  expect(body).toEqual({
    type: "/problems/internal_error",
    title: "Internal server error",
    status: 500,
    code: "internal_error",
    requestId: expect.any(String),
  });
  if (transport === "http" || res.status === 500) expectProblem(res, 500, "internal_error");
}

async function rows(
  f: Fixture,
): Promise<Record<WriteTable, number> & { idempotencyKeys: { key: string; status: number | null }[] }> {
  const counts = await env.DB.batch(
    WRITE_TABLES.map((table) =>
      env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE org_id = ?`).bind(f.tenant.orgId),
    ),
  );
  const keys = await env.DB.prepare("SELECT key, status FROM idempotency_keys WHERE org_id = ?")
    .bind(f.tenant.orgId)
    .all<{ key: string; status: number | null }>();
  return {
    ...(Object.fromEntries(
      WRITE_TABLES.map((table, i) => [table, (counts[i]!.results[0] as { n: number }).n]),
    ) as Record<WriteTable, number>),
    idempotencyKeys: keys.results,
  };
}

const NOTHING = { leads: 0, contacts: 0, incidents: 0, idempotencyKeys: [] };

/** After the retry: exactly the one row the operation writes, and for an incident, its booking and account link. */
async function expectStoredOnce(op: Operation, f: Fixture, body: Record<string, unknown>) {
  const { idempotencyKeys: _keys, ...counts } = await rows(f);
  expect(counts).toEqual({ leads: 0, contacts: 0, incidents: 0, ...(op.writes ? { [op.writes]: 1 } : {}) });
  if (op.writes === "incidents") {
    const incident = await env.DB.prepare("SELECT id, starts_at, ends_at, account_id FROM incidents WHERE org_id = ?")
      .bind(f.tenant.orgId)
      .first();
    expect(incident).toEqual({
      id: body.id,
      starts_at: Date.parse(SLOT),
      ends_at: Date.parse(SLOT) + HOUR,
      account_id: f.accountId,
    });
  } else if (op.writes) {
    const row = await env.DB.prepare(`SELECT id FROM ${op.writes} WHERE org_id = ?`).bind(f.tenant.orgId).first();
    expect(row).toEqual({ id: body.id });
  }
}

interface Position {
  name: string;
  /** Builds a fresh matcher per request (some remember what they matched). */
  fail: () => TripMatcher;
  /** What the failed round trip's SQL must be, so that the fault hit the place it names. */
  hits: RegExp;
  idempotent: boolean;
}

const AUTH = /\bapi_keys\b/;
const CLAIM = /^\s*INSERT INTO "?idempotency_keys"?/i;
const OPERATION = /\b(leads|contacts|accounts|incidents)\b/;
const isOperation = (sql: string) => OPERATION.test(sql) && !AUTH.test(sql) && !/idempotency_keys/.test(sql);
const firstOperation = (): TripMatcher => {
  let seen = false;
  return (trip) => {
    if (seen || !trip.sql.some(isOperation)) return false;
    seen = true;
    return true;
  };
};

const POSITIONS: Position[] = [
  { name: "the 1st round trip (authentication of a cold key)", fail: () => nthTrip(1), hits: AUTH, idempotent: false },
  { name: "the operation's round trip", fail: firstOperation, hits: OPERATION, idempotent: false },
  { name: "every round trip", fail: () => everyTrip, hits: AUTH, idempotent: false },
  { name: "the Idempotency-Key claim", fail: () => firstMatching(CLAIM), hits: CLAIM, idempotent: true },
  {
    name: "the operation's round trip, with an Idempotency-Key",
    fail: firstOperation,
    hits: OPERATION,
    idempotent: true,
  },
  { name: "every round trip, with an Idempotency-Key", fail: () => everyTrip, hits: AUTH, idempotent: true },
];

const MESSAGES = Object.values(D1_RETRYABLE);
const TRANSPORTS: Transport[] = ["http", "mcp"];

interface Case {
  transport: Transport;
  op: Operation;
  position: Position;
  message: string;
}

const CASES: Case[] = TRANSPORTS.flatMap((transport) =>
  OPERATIONS.flatMap((op) =>
    POSITIONS.filter((position) => !position.idempotent || op.method === "POST").flatMap((position) =>
      MESSAGES.map((message) => ({ transport, op, position, message })),
    ),
  ),
);

/** Runs `op` on a faulty D1, checks the failure left nothing, then retries on the real D1 and checks it is stored once. */
async function failThenRecover(
  c: Case,
  plan: FaultPlan,
  expectFailure: (res: ReadResponse, transport: Transport) => void,
  hits: RegExp,
) {
  const f = await fixture();
  const key = c.position.idempotent ? `fault-${c.op.tool}` : undefined;
  const faulty = wrapD1(env.DB, plan);
  const failed = await send(faulty.db, c.transport, c.op, f, key);
  const trips = JSON.stringify(faulty.trips);
  expectFailure(failed, c.transport);
  // The fault hit the round trip the case names.
  expect(faulty.failed().length, trips).toBeGreaterThan(0);
  expect(
    faulty.failed()[0]!.sql.some((sql) => hits.test(sql)),
    trips,
  ).toBe(true);
  // Nothing of the failed request is left: no row, no claim.
  expect(await rows(f)).toEqual(NOTHING);

  const retry = await send(env.DB, c.transport, c.op, f, key);
  const answer = outcome(retry, c.transport);
  expect(answer.status, retry.text).toBe(200);
  if (c.transport === "http") expect(retry.headers.get("Idempotent-Replayed")).toBeNull();
  await expectStoredOnce(c.op, f, answer.body);
  if (key !== undefined) {
    const again = await send(env.DB, c.transport, c.op, f, key);
    expect(outcome(again, c.transport).text).toBe(answer.text);
    if (c.transport === "http") expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    await expectStoredOnce(c.op, f, answer.body);
  }
}

describe("a retryable D1 failure → 503 unavailable, nothing partial written, the retry stored once", () => {
  it.each(CASES.map((c) => [c.transport, c.op.name, c.position.name, c.message, c] as const))(
    "%s %s: %s fails with %j",
    async (_t, _o, _p, _m, c) => {
      await failThenRecover(
        c,
        { fail: c.position.fail(), error: d1Error(c.message) },
        expectUnavailable,
        c.position.hits,
      );
    },
  );
});

const BOOK = /INSERT INTO "?incidents"?/i;
const createIncident = OPERATIONS.find((op) => op.writes === "incidents")!;

describe("a failure in the middle of the booking batch leaves neither incident nor booking", () => {
  // The batch runs on the real D1: its INSERT executes, then a statement after it fails, and D1 must roll the INSERT back.
  const cases = TRANSPORTS.flatMap((transport) =>
    [false, true].flatMap((idempotent) =>
      [...MESSAGES, "boom"].map((message) => ({
        transport,
        op: createIncident,
        position: { name: "booking batch", fail: () => () => false, hits: BOOK, idempotent },
        message,
      })),
    ),
  );
  it.each(cases.map((c) => [c.transport, c.position.idempotent ? "with" : "without", c.message, c] as const))(
    "%s, %s an Idempotency-Key: the batch fails after its INSERT ran, with %j",
    async (_t, _i, message, c) => {
      const retryable = message !== "boom";
      await failThenRecover(
        c,
        {
          midBatch: { match: firstMatching(BOOK), after: 1 },
          error: retryable ? d1Error(message) : () => new Error(message),
        },
        retryable ? expectUnavailable : expectInternalError,
        BOOK,
      );
    },
  );
});

describe("an unexpected error → 500 internal_error with nothing internal, nothing written", () => {
  const positions = POSITIONS.filter((p) => !p.name.startsWith("every"));
  const cases = TRANSPORTS.flatMap((transport) =>
    OPERATIONS.flatMap((op) =>
      positions
        .filter((p) => !p.idempotent || op.method === "POST")
        .map((position) => ({ transport, op, position, message: "boom" })),
    ),
  );
  it.each(cases.map((c) => [c.transport, c.op.name, c.position.name, c] as const))(
    "%s %s: %s throws Error('boom')",
    async (_t, _o, _p, c) => {
      await failThenRecover(
        c,
        { fail: c.position.fail(), error: () => new Error("boom") },
        expectInternalError,
        c.position.hits,
      );
    },
  );
});

describe("an outage from the operation on: the claim cannot be released, and lapses", () => {
  // D1 fails the operation and then the release of the key: the claim stays
  // (nothing can remove it while D1 is down). Contract 7: the same key is 409
  // idempotency_in_progress until the claim lapses after 60 s, then the retry
  // runs once — never a second write.
  const fromFirstOperation = (): TripMatcher => {
    let on = false;
    return (trip) => {
      on ||= trip.sql.some(isOperation);
      return on;
    };
  };
  const cases = TRANSPORTS.flatMap((transport) =>
    OPERATIONS.filter((op) => op.method === "POST").map((op, i) => ({
      transport,
      op,
      message: MESSAGES[i % MESSAGES.length]!,
    })),
  );
  it.each(cases.map((c) => [c.transport, c.op.name, c.message, c] as const))(
    "%s %s (%j)",
    async (_t, _o, message, c) => {
      const f = await fixture();
      const key = `outage-${c.op.tool}`;
      const faulty = wrapD1(env.DB, { fail: fromFirstOperation(), error: d1Error(message) });
      expectUnavailable(await send(faulty.db, c.transport, c.op, f, key), c.transport);
      expect(
        faulty
          .failed()
          .map(
            (trip) =>
              trip.sql.some(isOperation) || trip.sql.some((sql) => /^delete from "idempotency_keys"/i.test(sql)),
          ),
      ).toEqual([true, true]);
      expect(await rows(f)).toEqual({ ...NOTHING, idempotencyKeys: [{ key, status: null }] });

      const early = outcome(await send(env.DB, c.transport, c.op, f, key), c.transport);
      expect(early.status, early.text).toBe(409);
      expect(early.body.code).toBe("idempotency_in_progress");
      expect((await rows(f)).idempotencyKeys).toEqual([{ key, status: null }]);

      const lapsed = Date.now() - ABANDONED_CLAIM_MS - 1_000;
      await env.DB.prepare("UPDATE idempotency_keys SET created_at = ?1, claimed_at = ?1 WHERE org_id = ?2")
        .bind(lapsed, f.tenant.orgId)
        .run();
      const retry = outcome(await send(env.DB, c.transport, c.op, f, key), c.transport);
      expect(retry.status, retry.text).toBe(200);
      await expectStoredOnce(c.op, f, retry.body);
      expect(outcome(await send(env.DB, c.transport, c.op, f, key), c.transport).text).toBe(retry.text);
      await expectStoredOnce(c.op, f, retry.body);
    },
  );
});

describe("the last-use hint of a key is written off the response path", () => {
  it.each(OPERATIONS.map((op) => [op.name, op] as const))(
    "%s: a failed hint write does not fail the request",
    async (_o, op) => {
      const f = await fixture();
      await db().update(apiKeys).set({ lastUsedAt: null }).where(eq(apiKeys.id, f.tenant.keyId));
      const faulty = wrapD1(env.DB, {
        fail: firstMatching(/^update "api_keys"/i),
        error: d1Error(D1_RETRYABLE.overloaded),
      });
      const res = await send(faulty.db, "http", op, f);
      expect(res.status, res.text).toBe(200);
      expect(faulty.failed().length, JSON.stringify(faulty.trips)).toBe(1);
      await expectStoredOnce(op, f, res.body);
    },
  );
});
