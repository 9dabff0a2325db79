// Cost budgets of every endpoint, measured on the real app over a recording
// D1 binding: at most 2 round trips per request including authentication (a
// key the isolate has not verified yet), 1 once the isolate has verified the
// key, and no statement that scans a tenant table instead of searching an index.
import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { apiKeys } from "../../../drizzle/schema";
import { createKey } from "../../../src/db/api-keys";
import { type Statement, type Trip, type WrappedD1, wrapD1 } from "../../support/d1";
import { call } from "../../support/request";
import { addAccount, db, openTenant, type Tenant } from "../../support/tenants";
import { slotAt } from "../../support/time";

const TENANT_TABLES = ["orgs", "api_keys", "accounts", "contacts", "leads", "incidents"];

let tenant: Tenant;
let accountId: string;
let cursor: string;
// A whole UTC hour two days ahead: open, far from notice and horizon edges.
const slot = slotAt(2, 15);

/** A GET, or a POST of `body`, as the tenant with `apiKey`, on the recording binding. */
const send = (recorder: WrappedD1, path: string, body?: unknown, apiKey = tenant.apiKey, idempotencyKey?: string) =>
  call({ ...tenant, apiKey }, path, {
    body,
    headers: idempotencyKey ? { "Idempotency-Key": idempotencyKey } : {},
    bindings: { DB: recorder.db },
  });

async function plan({ sql, params }: Statement): Promise<string[]> {
  const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .bind(...params)
    .all<{ detail: string }>();
  return results.map((row) => row.detail);
}

beforeAll(async () => {
  tenant = await openTenant(undefined, { capacity: 5 });
  accountId = (await addAccount(tenant, "Budget Account")).id;
  const warm = wrapD1(env.DB);
  // The first request of a key records its last use (off the response path).
  for (let i = 0; i < 3; i++) await send(warm, "/api/v1/contacts", { firstName: `c${i}` });
  cursor = (await send(warm, "/api/v1/contacts?limit=1")).body.nextCursor;
});

describe("D1 budget per request", () => {
  it.each([
    ["create a lead", "/api/v1/leads", {}],
    ["create a contact", "/api/v1/contacts", { firstName: "A" }],
    ["create a contact linked to an account", "/api/v1/contacts", () => ({ firstName: "B", accountId })],
    ["list contacts", "/api/v1/contacts?limit=2", undefined],
    ["list contacts after a cursor", () => `/api/v1/contacts?limit=2&cursor=${cursor}`, undefined],
    ["list contacts by account", () => `/api/v1/contacts?accountId=${accountId}`, undefined],
    ["list contacts by email", "/api/v1/contacts?email=a@b.co", undefined],
    ["list contacts updated since", "/api/v1/contacts?updatedSince=2026-01-01T00:00:00Z", undefined],
    ["read an account", () => `/api/v1/accounts/${accountId}`, undefined],
    ["find available appointments", "/api/v1/ai-agent/available-appointments", () => ({ dateTime: slot, limit: 20 })],
    ["check a booking", "/api/v1/ai-agent/is-booking-available", () => ({ dateTime: slot })],
    [
      "book an incident",
      "/api/v1/ai-agent/create-incident",
      () => ({ dateTime: slot, clientName: "Budget Account", insectName: "Ants" }),
    ],
  ] as const)("%s: 2 round trips cold, 1 warm, every statement on an index", async (_name, path, body) => {
    const request = () =>
      [typeof path === "function" ? path() : path, typeof body === "function" ? body() : body] as const;
    // A key this isolate has never verified, used within the minute (so its last-use hint is not due).
    const { apiKey, keyId } = (await createKey(db(), tenant.orgId))!;
    await db().update(apiKeys).set({ lastUsedAt: Date.now() }).where(eq(apiKeys.id, keyId));

    const cold = wrapD1(env.DB);
    expect((await send(cold, ...request(), apiKey)).status).toBe(200);
    // Authentication (with the org's schedule) is one, the operation the other.
    expect(cold.trips.length, JSON.stringify(cold.trips)).toBe(2);

    const warm = wrapD1(env.DB);
    expect((await send(warm, ...request(), apiKey)).status).toBe(200);
    // The isolate verified the key a moment ago: only the operation remains.
    expect(warm.trips.length, JSON.stringify(warm.trips)).toBe(1);
    const sqlOf = (trip?: Trip) => trip?.sql;
    expect(sqlOf(warm.trips[0])).toEqual(sqlOf(cold.trips[1]));

    for (const statement of cold.trips.flatMap((trip) => trip.statements)) {
      const details = await plan(statement);
      const scans = details.filter((d) => TENANT_TABLES.some((table) => new RegExp(`^SCAN ${table}\\b`).test(d)));
      expect(scans, `${statement.sql}\n${details.join("\n")}`).toEqual([]);
    }
  });

  it.each([
    ["create a lead", "/api/v1/leads", { firstName: "Idem" }],
    ["create a contact", "/api/v1/contacts", { firstName: "Idem" }],
    [
      "book an incident",
      "/api/v1/ai-agent/create-incident",
      { dateTime: slot, clientName: "Idem", insectName: "Ants" },
    ],
  ] as const)(
    "%s with an Idempotency-Key: 2 round trips warm (the claim; the write with its recorded outcome), 1 to replay",
    async (_name, path, body) => {
      const key = crypto.randomUUID();
      const first = wrapD1(env.DB);
      expect((await send(first, path, body, tenant.apiKey, key)).status).toBe(200);
      expect(first.trips.length, JSON.stringify(first.trips)).toBe(2);
      const replay = wrapD1(env.DB);
      const replayed = await send(replay, path, body, tenant.apiKey, key);
      expect(replayed.headers.get("Idempotent-Replayed")).toBe("true");
      expect(replay.trips.length, JSON.stringify(replay.trips)).toBeLessThanOrEqual(2);
    },
  );

  it("the plan check can fail: an unindexed filter is a SCAN", async () => {
    expect(await plan({ sql: "SELECT * FROM contacts WHERE city = ?", params: ["x"] })).toContainEqual(
      expect.stringMatching(/^SCAN contacts/),
    );
  });
});
