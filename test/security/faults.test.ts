// D1 failures, injected round trip by round trip into the real app over a real
// local D1 (test/support/d1.ts): for every operation, over HTTP and as an MCP
// tool, and for every place a request can meet D1 — authentication of a cold
// key, the Idempotency-Key claim, the operation itself, the stored outcome,
// or all of them — a retryable D1 failure answers 503 `unavailable` with
// Retry-After and nothing internal; nothing of the failed request is left in
// D1 (no row, no claim that blocks the retry); and the retry on a healthy D1
// succeeds and is stored exactly once. Other failures are a bare 500. For a
// change (cancel, reschedule of an incident; release of a hold) "nothing left"
// means the incident or hold is byte for byte as before the failed request,
// also when the change's batch fails after its UPDATE ran; and when D1
// committed the change but its answer was lost, the row is wholly changed
// (never half), the key holds the answer of that change, and the retry answers
// what happened without changing anything twice. The outbox
// (docs/webhooks.md, "Events"): a change and its event are in D1 together or
// not at all, whichever round trip fails (each one in turn, and each statement
// of a batch), and the retry leaves exactly one event, the change as it was
// answered. Holds (docs/api.md, "Holding a slot") are writes without an event:
// hold-slot's row, or a release of the hold, goes in one batch with the claim
// of the Idempotency-Key and the record of its answer, so the change and its
// key's record are in D1 together or not at all, whichever round trip fails.
import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { apiKeys, type EventType } from "../../drizzle/schema";
import { OPERATIONS as DECLARED } from "../../src/routes";
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
import { toolAnswer } from "../support/mcp";
import {
  CHANGES,
  type Fixture,
  fixture,
  HOLD_MS,
  NEW_SLOT,
  OPERATIONS,
  type Operation,
  SLOT,
  send,
  type Transport,
  WRITE_TABLES,
  type WriteTable,
} from "../support/operations";
import { expectProblem } from "../support/problem";
import { db } from "../support/tenants";
import { HOUR } from "../support/time";

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

const COUNTED = [...WRITE_TABLES, "events"] as const;

async function rows(f: Fixture): Promise<
  Record<WriteTable | "events", number> & {
    idempotencyKeys: { key: string; status: number | null }[];
    incidentRows: Record<string, unknown>[];
    holdRows: Record<string, unknown>[];
    planRows: Record<string, unknown>[];
  }
> {
  // One round trip: the counts, then the keys and the rows of the changes.
  const orgRows = (sql: string) => env.DB.prepare(sql).bind(f.tenant.orgId);
  const [counts, keys, incidentRows, holdRows, planRows] = await env.DB.batch([
    orgRows(
      `SELECT ${COUNTED.map((table) => `(SELECT count(*) FROM ${table} WHERE org_id = ?1) AS ${table}`).join(", ")}`,
    ),
    orgRows("SELECT key, status FROM idempotency_keys WHERE org_id = ?"),
    orgRows("SELECT * FROM incidents WHERE org_id = ? ORDER BY id"),
    orgRows("SELECT * FROM holds WHERE org_id = ? ORDER BY id"),
    orgRows("SELECT * FROM plans WHERE org_id = ? ORDER BY id"),
  ]);
  return {
    ...(counts!.results[0] as Record<WriteTable | "events", number>),
    idempotencyKeys: keys!.results as { key: string; status: number | null }[],
    incidentRows: incidentRows!.results as Record<string, unknown>[],
    holdRows: holdRows!.results as Record<string, unknown>[],
    planRows: planRows!.results as Record<string, unknown>[],
  };
}

/** The event of a created row (docs/webhooks.md, "Events"): holds are not events (docs/api.md, "Holding a slot"). */
const CREATED: Record<WriteTable, EventType | undefined> = {
  leads: "lead.created",
  contacts: "contact.created",
  incidents: "incident.created",
  holds: undefined,
  plans: "plan.created",
};

/** The event a write or change records: none for a hold or its release. */
const eventTypeOf = (op: Operation): EventType | undefined =>
  op.changes === "cancel"
    ? "incident.cancelled"
    : op.changes === "reschedule"
      ? "incident.rescheduled"
      : op.changes === "close"
        ? "incident.completed"
        : op.changes === "cancel-plan"
          ? "plan.cancelled"
          : op.writes === undefined
            ? undefined
            : CREATED[op.writes];

/** The events one change of the operation records (create-plan: its first visit's, then its plan's). */
const eventsPer = (op: Operation) => (eventTypeOf(op) ? (op.events ?? 1) : 0);

/** The org's one event: of the operation's type, carrying the resource as `body` answered it (an incident without `remaining`); create-plan's two. */
async function expectOneEvent(op: Operation, f: Fixture, body: Record<string, unknown>) {
  const stored = await env.DB.prepare("SELECT type, body FROM events WHERE org_id = ? ORDER BY seq")
    .bind(f.tenant.orgId)
    .all<{ type: string; body: string }>();
  const withoutRemaining = (view: Record<string, unknown>) => {
    const { remaining: _, ...appointment } = (view.appointment ?? {}) as Record<string, unknown>;
    return view.appointment === undefined ? view : { ...view, appointment };
  };
  if (op.writes === "plans") {
    expect(stored.results.map((row) => row.type)).toEqual(["incident.created", "plan.created"]);
    const [visit, plan] = stored.results.map((row) => JSON.parse(row.body).data);
    expect(visit).toEqual(withoutRemaining(body.incident as Record<string, unknown>));
    expect(plan).toEqual(body.plan);
    return;
  }
  expect(stored.results.map((row) => row.type)).toEqual([eventTypeOf(op)]);
  expect(JSON.parse(stored.results[0]!.body).data).toEqual(withoutRemaining(body));
}

/** The id of the row the operation wrote, as its answer gives it. */
const writtenIdOf = (op: Operation, body: Record<string, unknown>) =>
  op.writtenId === "plan" ? (body.plan as { id: string }).id : body[op.writtenId ?? "id"];

/** After the retry: exactly the one row the operation writes, and for an incident, its booking and account link; for a hold, its place and expiry; a change applied once, wholly; and its one event (none for a hold or a release). */
async function expectStoredOnce(op: Operation, f: Fixture, body: Record<string, unknown>) {
  const { idempotencyKeys: _keys, incidentRows, holdRows, planRows, ...counts } = await rows(f);
  expect(counts).toEqual({
    leads: 0,
    contacts: 0,
    incidents: op.incident || op.alsoWrites?.includes("incidents") ? 1 : 0,
    holds: op.hold ? 1 : 0,
    plans: op.plan ? 1 : 0,
    ...(op.writes ? { [op.writes]: 1 } : {}),
    events: eventsPer(op),
  });
  if (eventTypeOf(op)) await expectOneEvent(op, f, body);
  if (op.changes === "release") expectReleased(f, holdRows[0]!, body);
  else if (op.changes === "cancel-plan") expectPlanCancelled(f, planRows[0]!, body);
  else if (op.changes) expectChanged(op, f, incidentRows[0]!, body);
  else if (op.incident) expect(incidentRows[0]).toMatchObject({ status: "scheduled", starts_at: Date.parse(SLOT) });
  if (op.writes === "plans") {
    // The plan and its first visit, at SLOT, together.
    const plan = await env.DB.prepare("SELECT id, status, visits_made, account_id FROM plans WHERE org_id = ?")
      .bind(f.tenant.orgId)
      .first();
    expect(plan).toEqual({ id: writtenIdOf(op, body), status: "active", visits_made: 1, account_id: f.accountId });
    const visit = await env.DB.prepare("SELECT plan_id, starts_at FROM incidents WHERE org_id = ?")
      .bind(f.tenant.orgId)
      .first();
    expect(visit).toEqual({ plan_id: writtenIdOf(op, body), starts_at: Date.parse(SLOT) });
  } else if (op.writes === "incidents") {
    const incident = await env.DB.prepare("SELECT id, starts_at, ends_at, account_id FROM incidents WHERE org_id = ?")
      .bind(f.tenant.orgId)
      .first();
    expect(incident).toEqual({
      id: body.id,
      starts_at: Date.parse(SLOT),
      ends_at: Date.parse(SLOT) + HOUR,
      account_id: f.accountId,
    });
  } else if (op.writes === "holds") {
    // The hold answered: the default visit at SLOT, live until the expiresAt it answered (5 minutes), neither ended nor used.
    const hold = await env.DB.prepare(
      "SELECT id, starts_at, ends_at, expires_at - created_at AS kept, expires_at, ended_at, incident_id FROM holds WHERE org_id = ?",
    )
      .bind(f.tenant.orgId)
      .first();
    expect(hold).toEqual({
      id: body[op.writtenId ?? "id"],
      starts_at: Date.parse(SLOT),
      ends_at: Date.parse(SLOT) + HOUR,
      kept: HOLD_MS,
      expires_at: Date.parse(body.expiresAt as string),
      ended_at: null,
      incident_id: null,
    });
    expect(body).toMatchObject({ slot: { start: SLOT, remaining: 0 }, technicianId: null });
  } else if (op.writes) {
    const row = await env.DB.prepare(`SELECT id FROM ${op.writes} WHERE org_id = ?`).bind(f.tenant.orgId).first();
    expect(row).toEqual({ id: writtenIdOf(op, body) });
  }
}

/** The fixture's plan after its cancel: all of it (status, reason, times), as the 200 answered it. */
function expectPlanCancelled(f: Fixture, row: Record<string, unknown>, body: Record<string, unknown>) {
  expect(row).toMatchObject({
    id: f.planId,
    status: "cancelled",
    cancel_reason: "Moved away",
    cancelled_at: row.updated_at,
    next_due_date: null,
    decide_at: null,
  });
  expect(row.updated_at as number).toBeGreaterThan(row.created_at as number);
  expect(body).toMatchObject(viewOfPlanCancel(f, row));
}

/** The plan row's cancel as its answer shows it. */
const viewOfPlanCancel = (f: Fixture, row: Record<string, unknown>) => ({
  id: f.planId,
  status: "cancelled",
  cancelReason: "Moved away",
  nextDueDate: null,
  updatedAt: new Date(row.updated_at as number).toISOString(),
});

/** The fixture's hold after its release, as the 200 answered it. */
function expectReleased(f: Fixture, row: Record<string, unknown>, body: Record<string, unknown>) {
  expect(body).toEqual({ holdId: f.holdId, released: true });
  expectReleasedRow(f, row);
}

/** The fixture's hold released, wholly: ended before it would have expired, no longer live, used by no incident. */
function expectReleasedRow(f: Fixture, row: Record<string, unknown>) {
  expect(row).toMatchObject({ id: f.holdId, starts_at: Date.parse(SLOT), incident_id: null });
  expect(row.expires_at as number, "the released hold is still live").toBeLessThanOrEqual(Date.now());
  expect(row.ended_at as number, "the release ended the hold before it expired").toBeLessThan(
    (row.created_at as number) + HOLD_MS,
  );
}

/** The incident row after its change: all of the change (status, times, reason together), as the 200 answered it. */
function expectChanged(op: Operation, f: Fixture, row: Record<string, unknown>, body: Record<string, unknown>) {
  expect(body).toMatchObject({ id: f.incidentId, updatedAt: new Date(row.updated_at as number).toISOString() });
  if (op.changes === "close") {
    expect(row).toMatchObject({
      id: f.incidentId,
      status: "completed",
      closed_at: row.updated_at,
      outcome_note: "Treated the garage",
      cancelled_at: null,
    });
    expect(body).toMatchObject({
      status: "completed",
      outcomeNote: "Treated the garage",
      closedAt: new Date(row.closed_at as number).toISOString(),
    });
  } else if (op.changes === "cancel") {
    expect(row).toMatchObject({
      id: f.incidentId,
      status: "cancelled",
      cancel_reason: "Moved away",
      cancelled_at: row.updated_at,
      starts_at: Date.parse(SLOT),
      ends_at: Date.parse(SLOT) + HOUR,
    });
    expect(body).toMatchObject({ status: "cancelled", cancelReason: "Moved away", dateTime: SLOT });
  } else {
    expect(row).toMatchObject({
      id: f.incidentId,
      status: "scheduled",
      cancelled_at: null,
      starts_at: Date.parse(NEW_SLOT),
      ends_at: Date.parse(NEW_SLOT) + HOUR,
    });
    expect(body).toMatchObject({ status: "scheduled", dateTime: NEW_SLOT });
  }
  expect(row.updated_at as number).toBeGreaterThan(row.created_at as number);
}

/** The incident row's change as its answer would show it (the statuses, times and reason of the operation). */
const viewOfChange = (op: Operation, f: Fixture, row: Record<string, unknown>) =>
  op.changes === "close"
    ? {
        id: f.incidentId,
        updatedAt: new Date(row.updated_at as number).toISOString(),
        status: "completed",
        outcomeNote: "Treated the garage",
        closedAt: new Date(row.closed_at as number).toISOString(),
      }
    : {
        id: f.incidentId,
        updatedAt: new Date(row.updated_at as number).toISOString(),
        status: op.changes === "cancel" ? "cancelled" : "scheduled",
        cancelReason: op.changes === "cancel" ? "Moved away" : null,
        dateTime: op.changes === "cancel" ? SLOT : NEW_SLOT,
      };

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
/** The record of a write's answer under its key, in the write's own batch. */
const RECORD = /^\s*update "?idempotency_keys"?/i;
const OPERATION = /\b(leads|contacts|accounts|incidents|events|holds|plans)\b/;
const isOperation = (sql: string) => OPERATION.test(sql) && !AUTH.test(sql) && !/idempotency_keys/.test(sql);
const firstOperation = (): TripMatcher => {
  let seen = false;
  return (trip) => {
    if (seen || !trip.sql.some(isOperation)) return false;
    seen = true;
    return true;
  };
};

/** A change's UPDATE: of the incident (cancel, reschedule, close), of the hold (release) or of the plan (cancel-plan). */
const CHANGE = /^\s*update "?(incidents|holds|plans)"?/i;
/** Where only a change meets D1: its one batch (the claim of a key, the UPDATE, the read of the row in its state, the record of the answer). */
const CHANGE_POSITIONS: Position[] = [
  { name: "the change's batch", fail: () => firstMatching(CHANGE), hits: CHANGE, idempotent: false },
  {
    name: "the change's batch, with an Idempotency-Key",
    fail: () => firstMatching(CHANGE),
    hits: CHANGE,
    idempotent: true,
  },
];

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

const positionsOf = (op: Operation) =>
  [...POSITIONS, ...(op.changes ? CHANGE_POSITIONS : [])].filter(
    (position) => (!position.idempotent || op.method === "POST") && !(op.noTripOfItsOwn && position.hits === OPERATION),
  );

const CASES: Case[] = TRANSPORTS.flatMap((transport) =>
  OPERATIONS.flatMap((op) =>
    positionsOf(op).flatMap((position) => MESSAGES.map((message) => ({ transport, op, position, message }))),
  ),
);

/** Runs `op` on a faulty D1, checks the failure left nothing, then retries on the real D1 and checks it is stored once. */
async function failThenRecover(
  c: Case,
  plan: FaultPlan,
  expectFailure: (res: ReadResponse, transport: Transport) => void,
  hits: RegExp,
) {
  const f = await fixture(c.op);
  const key = c.position.idempotent ? `fault-${c.op.tool}` : undefined;
  const before = await rows(f);
  expect(before.idempotencyKeys).toEqual([]);
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
  // Nothing of the failed request is left: no row, no claim, no incident or hold changed by a byte.
  expect(await rows(f)).toEqual(before);

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

describe("the cases cover every declared operation (src/routes OPERATIONS)", () => {
  it("over HTTP and as an MCP tool, with every change's own batch among the positions", () => {
    expect(OPERATIONS.map((op) => op.tool).sort()).toEqual(DECLARED.map((op) => op.tool).sort());
    for (const op of OPERATIONS) {
      const declared = DECLARED.find((d) => d.tool === op.tool)!;
      expect(op.method).toBe(declared.method.toUpperCase());
      expect(op.changes !== undefined).toBe(declared.effect === "change");
      // A write records an event unless its sample says it records none (a hold, a release).
      expect(op.noEvent === true, op.tool).toBe(declared.effect !== "read" && eventTypeOf(op) === undefined);
    }
    for (const op of CHANGES)
      expect(
        positionsOf(op).some((position) => position.hits === CHANGE),
        op.tool,
      ).toBe(true);
    const covered = new Set(CASES.map((c) => `${c.transport} ${c.op.tool}`));
    expect(covered.size).toBe(TRANSPORTS.length * DECLARED.length);
  });
});

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

describe("a failure in the middle of a change's batch leaves the incident or the hold exactly as it was", () => {
  // The batch runs on the real D1: its UPDATE changes the row (the incident, or
  // the hold released), then a statement after it fails, and D1 must roll the
  // UPDATE (and any claim and record of the answer under the Idempotency-Key) back.
  const cases = TRANSPORTS.flatMap((transport) =>
    CHANGES.flatMap((op) =>
      [false, true].flatMap((idempotent) =>
        [D1_RETRYABLE.overloaded, D1_RETRYABLE.networkLost, "boom"].map((message) => ({
          transport,
          op,
          position: { name: "change batch", fail: () => () => false, hits: CHANGE, idempotent },
          message,
        })),
      ),
    ),
  );
  it.each(
    cases.map((c) => [c.transport, c.op.name, c.position.idempotent ? "with" : "without", c.message, c] as const),
  )("%s %s, %s an Idempotency-Key: the batch fails after its UPDATE ran, with %j", async (_t, _o, _i, message, c) => {
    const retryable = message !== "boom";
    await failThenRecover(
      c,
      {
        midBatch: { match: firstMatching(CHANGE), after: CHANGE },
        error: retryable ? d1Error(message) : () => new Error(message),
      },
      retryable ? expectUnavailable : expectInternalError,
      CHANGE,
    );
  });
});

/**
 * D1 as the app sees it when a batch that changed rows committed but its
 * answer never came back (the connection dropped on the way): the batch's
 * effects are in D1 and the call throws D1's "Network connection lost".
 */
function losingTheAnswer(real: D1Database): { db: D1Database; lost: () => boolean } {
  let lost = false;
  const lose =
    (target: Pick<D1Database, "batch">) =>
    async <T>(statements: D1PreparedStatement[]) => {
      const results = await target.batch<T>(statements);
      if (!lost && results.some((result) => result.meta.changes > 0)) {
        lost = true;
        throw d1Error(D1_RETRYABLE.networkLost)();
      }
      return results;
    };
  const db = {
    prepare: (sql: string) => real.prepare(sql),
    batch: lose(real),
    exec: (sql: string) => real.exec(sql),
    dump: () => real.dump(),
    withSession: (start?: string) => {
      const session = real.withSession(start);
      return {
        prepare: (sql: string) => session.prepare(sql),
        batch: lose(session),
        getBookmark: () => session.getBookmark(),
      };
    },
  } as unknown as D1Database;
  return { db, lost: () => lost };
}

describe("a change committed whose answer was lost: 503, the row wholly changed, the retry answers what happened", () => {
  const cases = TRANSPORTS.flatMap((transport) =>
    CHANGES.flatMap((op) => [false, true].map((idempotent) => ({ transport, op, idempotent }))),
  );
  it.each(cases.map((c) => [c.transport, c.op.name, c.idempotent ? "with" : "without", c] as const))(
    "%s %s, %s an Idempotency-Key",
    async (_t, _o, _i, c) => {
      const f = await fixture(c.op);
      const key = c.idempotent ? `lost-${c.op.tool}` : undefined;
      const losing = losingTheAnswer(env.DB);
      expectUnavailable(await send(losing.db, c.transport, c.op, f, key), c.transport);
      expect(losing.lost()).toBe(true);
      // Never half a change: the incident holds all of it (status, times, reason, updatedAt together)
      // and its event; the hold is released (no longer live, ended), with no event.
      const lost = await rows(f);
      expect(lost.events).toBe(eventTypeOf(c.op) ? 1 : 0);
      const view =
        c.op.changes === "release"
          ? { holdId: f.holdId, released: true }
          : c.op.changes === "cancel-plan"
            ? viewOfPlanCancel(f, lost.planRows[0]!)
            : viewOfChange(c.op, f, lost.incidentRows[0]!);
      if (c.op.changes === "release") expectReleasedRow(f, lost.holdRows[0]!);
      else if (c.op.changes === "cancel-plan") expectPlanCancelled(f, lost.planRows[0]!, view);
      else expectChanged(c.op, f, lost.incidentRows[0]!, view);
      // The key holds the answer of the change that happened, recorded in its batch, or nothing.
      expect(lost.idempotencyKeys).toEqual(key === undefined ? [] : [{ key, status: 200 }]);
      // The retry: the replay of that answer under the key, else the change found done (cancel and
      // reschedule to the slot held are 200 with the incident unchanged, and releasing a released hold
      // is the same 200 and frees nothing: docs/api.md, "Cancel", "Reschedule", "Release").
      const retry = await send(env.DB, c.transport, c.op, f, key);
      const answer = outcome(retry, c.transport);
      expect(answer.status, retry.text).toBe(200);
      if (c.transport === "http") expect(retry.headers.get("Idempotent-Replayed")).toBe(key ? "true" : null);
      expect(answer.body).toMatchObject(view);
      // Nothing done twice: every row as the lost change left it (the hold ended when the lost release
      // ran, not when the retry did), no second event, the key's record as it was.
      expect(await rows(f)).toEqual(lost);
      await expectStoredOnce(c.op, f, answer.body);
    },
  );
});

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
          midBatch: { match: firstMatching(BOOK), after: BOOK },
          error: retryable ? d1Error(message) : () => new Error(message),
        },
        retryable ? expectUnavailable : expectInternalError,
        BOOK,
      );
    },
  );
});

const HOLD = /INSERT INTO "?holds"?/i;
const holdSlot = OPERATIONS.find((op) => op.writes === "holds")!;

describe("a failure in the middle of the hold's batch leaves neither the hold nor its key's record", () => {
  // The batch runs on the real D1: its conditional INSERT of the hold executes, then a statement
  // after it fails, and D1 must roll the INSERT (and the record of the answer under the key) back.
  const cases = TRANSPORTS.flatMap((transport) =>
    [false, true].flatMap((idempotent) =>
      [...MESSAGES, "boom"].map((message) => ({
        transport,
        op: holdSlot,
        position: { name: "hold batch", fail: () => () => false, hits: HOLD, idempotent },
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
          midBatch: { match: firstMatching(HOLD), after: HOLD },
          error: retryable ? d1Error(message) : () => new Error(message),
        },
        retryable ? expectUnavailable : expectInternalError,
        HOLD,
      );
    },
  );
});

describe("an unexpected error → 500 internal_error with nothing internal, nothing written", () => {
  const positions = POSITIONS.filter((p) => !p.name.startsWith("every"));
  const cases = TRANSPORTS.flatMap((transport) =>
    OPERATIONS.flatMap((op) =>
      positions
        .filter((p) => (!p.idempotent || op.method === "POST") && !(op.noTripOfItsOwn && p.hits === OPERATION))
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

describe("an outage from the operation on leaves no claim: the retry runs at once, and once", () => {
  // The key is claimed in the operation's own batch (or with its outcome,
  // when nothing is written), so D1 failing from the operation on leaves
  // nothing behind, not even a claim (a 5xx is not stored). The
  // retry runs at once and is stored once; its replay answers the same.
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
      const f = await fixture(c.op);
      const before = await rows(f);
      const key = `outage-${c.op.tool}`;
      const faulty = wrapD1(env.DB, { fail: fromFirstOperation(), error: d1Error(message) });
      expectUnavailable(await send(faulty.db, c.transport, c.op, f, key), c.transport);
      expect(faulty.failed()[0]?.sql.some(isOperation), JSON.stringify(faulty.trips)).toBe(true);
      expect(await rows(f)).toEqual(before);

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
      const f = await fixture(op);
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

const EVENT_INSERT = /^\s*insert into "?events"?/i;
const WRITE = /^\s*(insert into "?(leads|contacts|incidents)"?|update "?(incidents|plans)"?)/i;

describe("the outbox: a fault at any round trip of a change leaves the change and its event both in D1 or neither", () => {
  // A healthy run of the request lists its round trips; then, each on a fresh
  // org, every one of them fails in turn (before reaching D1), and every batch
  // fails after each of its statements (on the real D1, which must roll back
  // what ran). After each: as many events as changes applied (0 or 1); a 200
  // only with the change in place; and the retry on a healthy D1 (or the 200
  // itself) leaves the change once and exactly one event, as it was answered.
  // Over HTTP: a tool runs the same route and makes the same round trips (the
  // cases above check every tool's failures, and its one event, at the named positions).
  const OUTBOX = OPERATIONS.filter((op) => eventTypeOf(op));
  const cases = OUTBOX.flatMap((op) =>
    [false, true].map((idempotent) => ({ transport: "http" as Transport, op, idempotent })),
  );

  it("covers every change that records an event", () => {
    expect(OUTBOX.map((op) => eventTypeOf(op)).sort()).toEqual(
      [
        "contact.created",
        "incident.cancelled",
        "incident.created",
        "incident.rescheduled",
        "incident.completed",
        "lead.created",
        "plan.created",
        "plan.cancelled",
      ].sort(),
    );
  });

  it.each(cases.map((c) => [c.transport, c.op.name, c.idempotent ? "with" : "without", c] as const))(
    "%s %s, %s an Idempotency-Key: each round trip and each batch statement in turn",
    async (_t, _o, _i, c) => {
      const key = c.idempotent ? `outbox-${c.op.tool}` : undefined;
      const probe = wrapD1(env.DB);
      const pf = await fixture(c.op);
      const healthy = outcome(await send(probe.db, c.transport, c.op, pf, key), c.transport);
      expect(healthy.status, healthy.text).toBe(200);
      await expectStoredOnce(c.op, pf, healthy.body);
      // The event is written in the change's own batch.
      const batch = probe.trips.filter((trip) => trip.sql.some((sql) => EVENT_INSERT.test(sql)));
      expect(batch, JSON.stringify(probe.trips)).toHaveLength(1);
      expect(
        batch[0]!.sql.some((sql) => WRITE.test(sql)),
        JSON.stringify(batch[0]!.sql),
      ).toBe(true);

      const plans: [string, () => FaultPlan][] = [
        ...probe.trips.map((trip): [string, () => FaultPlan] => [
          `round trip ${trip.index} (${trip.sql[0]!.slice(0, 40)})`,
          () => ({ fail: nthTrip(trip.index) }),
        ]),
        ...probe.trips.flatMap((trip) =>
          trip.statements
            .slice(1)
            .map((_, i): [string, () => FaultPlan] => [
              `round trip ${trip.index} after its statement ${i + 1}`,
              () => ({ midBatch: { match: nthTrip(trip.index), after: i + 1 } }),
            ]),
        ),
      ];
      let faulted = 0;
      for (const [position, plan] of plans) {
        const f = await fixture(c.op);
        const before = await rows(f);
        const faulty = wrapD1(env.DB, { ...plan(), error: d1Error(D1_RETRYABLE.overloaded) });
        const res = await send(faulty.db, c.transport, c.op, f, key);
        const first = outcome(res, c.transport);
        const after = await rows(f);
        const changed =
          c.op.changes === "cancel-plan"
            ? JSON.stringify(after.planRows) !== JSON.stringify(before.planRows)
            : c.op.changes
              ? JSON.stringify(after.incidentRows) !== JSON.stringify(before.incidentRows)
              : after[c.op.writes!] !== before[c.op.writes!];
        const applied = changed ? 1 : 0;
        expect(after.events - before.events, `${position}: events beside ${applied} change(s)`).toBe(
          applied * eventsPer(c.op),
        );
        if (changed && c.op.changes === "cancel-plan")
          expectPlanCancelled(f, after.planRows[0]!, viewOfPlanCancel(f, after.planRows[0]!));
        else if (changed && c.op.changes)
          expectChanged(c.op, f, after.incidentRows[0]!, viewOfChange(c.op, f, after.incidentRows[0]!));
        if (faulty.failed().length === 0) {
          // The poison met a statement that changed nothing: no fault, the request went through.
          expect(first.status, `${position}: ${first.text}`).toBe(200);
        } else {
          faulted++;
          expectUnavailable(res, c.transport);
        }
        if (first.status === 200) {
          expect(applied, position).toBe(1);
          await expectStoredOnce(c.op, f, first.body);
          continue;
        }
        const retry = outcome(await send(env.DB, c.transport, c.op, f, key), c.transport);
        expect(retry.status, `${position}: ${retry.text}`).toBe(200);
        await expectStoredOnce(c.op, f, retry.body);
      }
      expect(faulted).toBeGreaterThan(0);
    },
  );
});

describe("a hold and its release record no event: a fault at any round trip leaves the change and its key's record both in D1 or neither", () => {
  // As the outbox above, for the writes without an event (docs/api.md, "Holding a slot": holds are
  // not events): hold-slot's INSERT, or a release's UPDATE, goes in one batch with the claim of the
  // key and the record of its answer. A healthy run lists the round trips; then each fails in turn,
  // and every batch after each of its statements. After each: no event; the hold written, or
  // released, wholly or not at all; no claim left; the key's record exactly beside the change (both
  // or neither); a 200 only with the change; and the retry on a healthy D1 (or the 200 itself)
  // leaves the change once.
  const SILENT = OPERATIONS.filter((op) => op.noEvent);
  const cases = SILENT.flatMap((op) =>
    [false, true].map((idempotent) => ({ transport: "http" as Transport, op, idempotent })),
  );

  it("covers the hold and its release", () => {
    expect(SILENT.map((op) => op.tool).sort()).toEqual(["hold_slot", "release_hold"]);
  });

  it.each(cases.map((c) => [c.transport, c.op.name, c.idempotent ? "with" : "without", c] as const))(
    "%s %s, %s an Idempotency-Key: each round trip and each batch statement in turn",
    async (_t, _o, _i, c) => {
      const key = c.idempotent ? `silent-${c.op.tool}` : undefined;
      const change = c.op.writes === "holds" ? HOLD : CHANGE;
      const probe = wrapD1(env.DB);
      const pf = await fixture(c.op);
      const healthy = outcome(await send(probe.db, c.transport, c.op, pf, key), c.transport);
      expect(healthy.status, healthy.text).toBe(200);
      await expectStoredOnce(c.op, pf, healthy.body);
      // The change is one round trip; with a key, its batch claims the key before the change and
      // records the answer after it, and without one it touches no key.
      const own = probe.trips.filter((trip) => trip.sql.some((sql) => change.test(sql)));
      expect(own, JSON.stringify(probe.trips)).toHaveLength(1);
      const batch = own[0]!.sql;
      const order = [CLAIM, change, RECORD].map((statement) => batch.findIndex((sql) => statement.test(sql)));
      if (key === undefined)
        expect(
          batch.some((sql) => /idempotency_keys/.test(sql)),
          JSON.stringify(batch),
        ).toBe(false);
      else expect(order[0]! >= 0 && order[0]! < order[1]! && order[1]! < order[2]!, JSON.stringify(batch)).toBe(true);

      const plans: [string, () => FaultPlan][] = [
        ...probe.trips.map((trip): [string, () => FaultPlan] => [
          `round trip ${trip.index} (${trip.sql[0]!.slice(0, 40)})`,
          () => ({ fail: nthTrip(trip.index) }),
        ]),
        ...probe.trips.flatMap((trip) =>
          trip.statements
            .slice(1)
            .map((_, i): [string, () => FaultPlan] => [
              `round trip ${trip.index} after its statement ${i + 1}`,
              () => ({ midBatch: { match: nthTrip(trip.index), after: i + 1 } }),
            ]),
        ),
      ];
      let faulted = 0;
      for (const [position, plan] of plans) {
        const f = await fixture(c.op);
        const before = await rows(f);
        const faulty = wrapD1(env.DB, { ...plan(), error: d1Error(D1_RETRYABLE.overloaded) });
        const res = await send(faulty.db, c.transport, c.op, f, key);
        const first = outcome(res, c.transport);
        const after = await rows(f);
        expect(after.events, `${position}: events`).toBe(0);
        const changed =
          c.op.writes === "holds"
            ? after.holds - before.holds
            : JSON.stringify(after.holdRows) === JSON.stringify(before.holdRows)
              ? 0
              : 1;
        expect(changed, position).toBeLessThanOrEqual(1);
        if (changed && c.op.changes === "release") expectReleasedRow(f, after.holdRows[0]!);
        expect(
          after.idempotencyKeys.filter((k) => k.status === null),
          `${position}: a claim left`,
        ).toEqual([]);
        expect(after.idempotencyKeys.length, `${position}: the key's records beside ${changed} change(s)`).toBe(
          key === undefined ? 0 : changed,
        );
        if (faulty.failed().length === 0) {
          // The poison met a statement that changed nothing: no fault, the request went through.
          expect(first.status, `${position}: ${first.text}`).toBe(200);
        } else {
          faulted++;
          expectUnavailable(res, c.transport);
        }
        if (first.status === 200) {
          expect(changed, position).toBe(1);
          await expectStoredOnce(c.op, f, first.body);
          continue;
        }
        const retry = outcome(await send(env.DB, c.transport, c.op, f, key), c.transport);
        expect(retry.status, `${position}: ${retry.text}`).toBe(200);
        await expectStoredOnce(c.op, f, retry.body);
      }
      expect(faulted).toBeGreaterThan(0);
    },
  );
});
