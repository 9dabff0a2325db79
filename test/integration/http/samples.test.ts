// The operation samples (test/support/operations.ts) against the declared
// operations, and the one write path every write goes through (src/db/write.ts):
// each write commits its change, its event and the record of its answer for
// the Idempotency-Key together, and a fault at any statement of its batch
// leaves none of them. A hold is a write without an event (docs/api.md,
// "Holding a slot"): hold-slot commits its row and the record together; a
// release is one UPDATE whose answer the idempotency middleware records
// afterwards (as a read's), so its record is never there without the release.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { OPERATIONS as DECLARED } from "../../../src/routes";
import { type Trip, wrapD1 } from "../../support/d1";
import { type Fixture, fixture, OPERATIONS, type Operation, send } from "../../support/operations";

const WRITES = OPERATIONS.filter((op) => op.writes || op.changes);

const count = async (sql: string, ...params: unknown[]) =>
  (await env.DB.prepare(sql)
    .bind(...params)
    .first<{ n: number }>())!.n;

const events = (f: Fixture) => count("SELECT count(*) AS n FROM events WHERE org_id = ?", f.tenant.orgId);

/** The statement that writes the change: its event's INSERT; without an event, its row's INSERT or the release's UPDATE. */
const changeStatement = (op: Operation): RegExp =>
  !op.noEvent ? /insert into "events"/i : op.writes ? new RegExp(`insert into "${op.writes}"`, "i") : /update "holds"/i;

/** The events one change of the operation records (create-plan: its plan's and its first visit's). */
const eventsPer = (op: Operation) => (op.noEvent ? 0 : (op.events ?? 1));

/** How many changes of the operation D1 holds: its events (per change); without an event, its rows, or the fixture's hold ended (no longer live). */
const changesIn = async (op: Operation, f: Fixture) =>
  !op.noEvent
    ? (await events(f)) / eventsPer(op)
    : op.writes
      ? count(`SELECT count(*) AS n FROM ${op.writes} WHERE org_id = ?`, f.tenant.orgId)
      : count(
          "SELECT count(*) AS n FROM holds WHERE org_id = ? AND id = ? AND expires_at <= ? AND ended_at IS NOT NULL",
          f.tenant.orgId,
          f.holdId,
          Date.now(),
        );

describe("the operation samples", () => {
  it("holds exactly one sample of every declared operation, with its method and effect", () => {
    expect(OPERATIONS.map((op) => op.tool).sort()).toEqual(DECLARED.map((op) => op.tool).sort());
    for (const op of OPERATIONS) {
      const declared = DECLARED.find((d) => d.tool === op.tool)!;
      expect(op.method, op.tool).toBe(declared.method.toUpperCase());
      expect(op.writes !== undefined || op.changes !== undefined, op.tool).toBe(declared.effect !== "read");
    }
  });

  it.each(OPERATIONS.map((op) => [op.name, op] as const))(
    "%s: its sample succeeds over HTTP and MCP",
    async (_, op) => {
      for (const transport of ["http", "mcp"] as const) {
        const f = await fixture(op);
        const res = await send(env.DB, transport, op, f);
        expect(res.status, res.text).toBe(200);
        if (transport === "mcp") expect(res.body.result.isError, res.text).toBeFalsy();
      }
    },
  );
});

describe("the write path", () => {
  it.each(WRITES.map((op) => [op.name, op] as const))(
    "%s records its change, its event and its key's answer together",
    async (_, op) => {
      const f = await fixture(op);
      const key = crypto.randomUUID();
      const res = await send(env.DB, "http", op, f, key);
      expect(res.status, res.text).toBe(200);
      expect(await changesIn(op, f)).toBe(1);
      expect(await events(f)).toBe(eventsPer(op));
      const body = await env.DB.prepare("SELECT body FROM idempotency_keys WHERE org_id = ? AND key = ?")
        .bind(f.tenant.orgId, key)
        .first<{ body: string }>();
      expect(body?.body).toBe(res.text);
    },
  );

  it.each(WRITES.map((op) => [op.name, op] as const))(
    "%s: after a fault at any statement of its batch, the change (its event) and the key's record are both there or both absent",
    async (_, op) => {
      const probe = wrapD1(env.DB);
      await send(probe.db, "http", op, await fixture(op), crypto.randomUUID());
      const isWrite = (trip: Trip) => trip.sql.some((sql) => changeStatement(op).test(sql));
      // A release is its one UPDATE: a batch of one statement, its key recorded in a round trip after it.
      const size = probe.trips.find(isWrite)!.statements.length;
      expect(size, JSON.stringify(probe.trips)).toBeGreaterThan(op.changes === "release" ? 0 : 1);
      // 0: the batch fails before reaching D1; n: D1 fails it after its statement n ran and wrote.
      for (let after = 0; after < size; after++) {
        const f = await fixture(op);
        const key = crypto.randomUUID();
        const faulty = wrapD1(env.DB, after === 0 ? { fail: isWrite } : { midBatch: { match: isWrite, after } });
        const res = await send(faulty.db, "http", op, f, key);
        const failed = faulty.trips.some((trip) => trip.failed);
        const changes = await changesIn(op, f);
        expect(await events(f)).toBe(eventsPer(op) * changes);
        const records = await count(
          "SELECT count(*) AS n FROM idempotency_keys WHERE org_id = ? AND key = ? AND status IS NOT NULL",
          f.tenant.orgId,
          key,
        );
        expect([failed ? 503 : 200, changes, records], `after statement ${after}: ${res.text}`).toEqual(
          failed ? [res.status, 0, 0] : [res.status, 1, 1],
        );
      }
    },
  );
});
