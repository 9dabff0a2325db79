// Idempotency-Key (docs/api.md, "Retries"), driven over fetch against the real app
// and a real local D1: key format, replay of the first response byte for byte,
// reuse of a key for another request, in-flight and abandoned claims, the 24 h
// lifetime, which outcomes are stored, org isolation, concurrent retries of one
// booking, and the purge of expired records (directly and by the Cron Trigger).
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { purgeExpiredKeys } from "../../../src/db/idempotency";
import { storeSchedule } from "../../../src/db/orgs";
import type { Bindings as WorkerBindings } from "../../../src/env";
import worker from "../../../src/index";
import { everyMatching, wrapD1 } from "../../support/d1";
import type { ReadResponse } from "../../support/http";
import { expectProblem } from "../../support/problem";
import { type Bindings, call } from "../../support/request";
import { addAccount, db, newTenant, openTenant, type Tenant } from "../../support/tenants";
import { DAY, HOUR, MINUTE, slotAt } from "../../support/time";

const LEADS = "/api/v1/leads";
const CONTACTS = "/api/v1/contacts";
const CHECK = "/api/v1/ai-agent/is-booking-available";
const CREATE = "/api/v1/ai-agent/create-incident";

type Sent = ReadResponse;

interface PostOptions {
  key?: string;
  /** Sent verbatim instead of JSON.stringify(body). */
  raw?: string;
  headers?: Record<string, string>;
}

/** A JSON POST as `tenant` (with `key` as its Idempotency-Key), with some bindings replaced. */
const postWith = (bindings: Bindings, tenant: Tenant, path: string, body: unknown, options: PostOptions = {}) =>
  call(tenant, path, {
    method: "POST",
    ...(options.raw === undefined ? { body } : { rawBody: options.raw }),
    headers: {
      "Content-Type": "application/json",
      ...(options.key === undefined ? {} : { "Idempotency-Key": options.key }),
      ...options.headers,
    },
    bindings,
  });

/** A JSON POST as `tenant` with the real bindings. */
const post = (tenant: Tenant, path: string, body: unknown, options: PostOptions = {}) =>
  postWith({}, tenant, path, body, options);

const replayed = (res: Sent) => res.headers.get("Idempotent-Replayed");

async function count(table: "leads" | "contacts" | "incidents", tenant: Tenant) {
  const row = await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE org_id = ?`)
    .bind(tenant.orgId)
    .first<{ n: number }>();
  return row?.n;
}

async function incidentsAt(tenant: Tenant, dateTime: string) {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM incidents WHERE org_id = ? AND starts_at = ?")
    .bind(tenant.orgId, Date.parse(dateTime))
    .first<{ n: number }>();
  return row?.n;
}

interface KeyRow {
  status: number | null;
  created_at: number;
  claimed_at: number;
}
const keyRows = async (tenant: Tenant, key: string) =>
  (
    await env.DB.prepare("SELECT status, created_at, claimed_at FROM idempotency_keys WHERE org_id = ? AND key = ?")
      .bind(tenant.orgId, key)
      .all<KeyRow>()
  ).results;

/** Turns the stored record of `key` back into a claim still held (status NULL) since `claimedAt`. */
const makeClaim = (tenant: Tenant, key: string, claimedAt: number) =>
  env.DB.prepare(
    "UPDATE idempotency_keys SET status = NULL, content_type = NULL, body = NULL, created_at = ?1, claimed_at = ?1 WHERE org_id = ?2 AND key = ?3",
  )
    .bind(claimedAt, tenant.orgId, key)
    .run();

/** Moves the record of `key` back in time to `createdAt`. */
const backdate = (tenant: Tenant, key: string, createdAt: number) =>
  env.DB.prepare("UPDATE idempotency_keys SET created_at = ?1, claimed_at = ?1 WHERE org_id = ?2 AND key = ?3")
    .bind(createdAt, tenant.orgId, key)
    .run();

const tenantWithSchedule = (capacity: number) => openTenant("Idempotency Org", { capacity });

/** A fresh (not replayed) 200. */
function expectFresh(res: Sent) {
  expect(res.status, res.text).toBe(200);
  expect(replayed(res)).toBeNull();
}

/** A replay of `first`: same status, byte-identical body and Content-Type, marked as replayed. */
function expectReplayOf(res: Sent, first: Sent) {
  expect(res.status, res.text).toBe(first.status);
  expect(res.text).toBe(first.text);
  expect(res.headers.get("Content-Type")).toBe(first.headers.get("Content-Type"));
  // Nothing of the attempt that met the record (its batch rolled back with a 409) leaks into the replay.
  expect(res.headers.get("Retry-After")).toBe(first.headers.get("Retry-After"));
  expect(replayed(res)).toBe("true");
}

describe("the Idempotency-Key header", () => {
  it.each([
    ["empty", ""],
    ["256 characters", "k".repeat(256)],
    ["a tab inside", "a\tb"],
    ["DEL inside", "a\x7fb"],
    ["a non-ASCII character", "caf\u00e9"],
  ])(
    "refuses a key that is %s: 422 validation_failed naming Idempotency-Key, and creates nothing",
    async (_case, key) => {
      const tenant = await newTenant();
      const res = await post(tenant, LEADS, { firstName: "Ann" }, { key });
      expectProblem(res, 422, "validation_failed");
      expect(res.body.errors).toEqual([expect.objectContaining({ path: "Idempotency-Key", code: "invalid_format" })]);
      expect(await count("leads", tenant)).toBe(0);
    },
  );

  it.each([
    ["1 character", "k"],
    ["255 characters", "k".repeat(255)],
    [
      "every printable ASCII character",
      Array.from({ length: 95 }, (_, i) => String.fromCharCode(0x20 + i))
        .join("")
        .trim(),
    ],
  ])("accepts a key of %s and replays with it", async (_case, key) => {
    const tenant = await newTenant();
    const first = await post(tenant, LEADS, { firstName: "Ann" }, { key });
    expectFresh(first);
    expectReplayOf(await post(tenant, LEADS, { firstName: "Ann" }, { key }), first);
    expect(await count("leads", tenant)).toBe(1);
  });

  it("without a key, two identical requests create two records", async () => {
    const tenant = await newTenant();
    const a = await post(tenant, LEADS, { firstName: "Ann" });
    const b = await post(tenant, LEADS, { firstName: "Ann" });
    expectFresh(a);
    expectFresh(b);
    expect(a.body.id).not.toBe(b.body.id);
    expect(await count("leads", tenant)).toBe(2);
  });
});

describe("replay of an identical request", () => {
  it("create lead: the first response is replayed byte for byte, and no second lead is created", async () => {
    const tenant = await newTenant();
    const lead = { firstName: "Dana", lastName: "Ruiz", email: "dana@example.com" };
    const first = await post(tenant, LEADS, lead, { key: "lead-1" });
    expectFresh(first);
    expect(first.body.id).toMatch(/^lead_/);
    const second = await post(tenant, LEADS, lead, { key: "lead-1" });
    const third = await post(tenant, LEADS, lead, { key: "lead-1" });
    expectReplayOf(second, first);
    expectReplayOf(third, first);
    expect(await count("leads", tenant)).toBe(1);
  });

  it("create contact: replayed, one contact", async () => {
    const tenant = await newTenant();
    const account = await addAccount(tenant, "Acme");
    const contact = { firstName: "Cal", accountId: account.id };
    const first = await post(tenant, CONTACTS, contact, { key: "contact-1" });
    expectFresh(first);
    expect(first.body.accountId).toBe(account.id);
    expectReplayOf(await post(tenant, CONTACTS, contact, { key: "contact-1" }), first);
    expect(await count("contacts", tenant)).toBe(1);
  });

  it("create incident: replayed with the same id, one booking, the slot's remaining places unchanged by the replay", async () => {
    const tenant = await tenantWithSchedule(3);
    const dateTime = slotAt();
    const incident = { dateTime, clientName: "Ivy", insectName: "Ants" };
    const first = await post(tenant, CREATE, incident, { key: "incident-1" });
    expectFresh(first);
    expect(first.body.appointment.remaining).toBe(2);
    const second = await post(tenant, CREATE, incident, { key: "incident-1" });
    expectReplayOf(second, first);
    expect(second.body.id).toBe(first.body.id);
    expect(await count("incidents", tenant)).toBe(1);
    const checked = await post(tenant, CHECK, { dateTime });
    expect(checked.body).toMatchObject({ available: true, slot: { remaining: 2 } });
  });

  it("the request is the same whatever other headers differ (request id, Content-Type parameters)", async () => {
    const tenant = await newTenant();
    const first = await post(
      tenant,
      LEADS,
      { firstName: "Ann" },
      { key: "headers", headers: { "X-Request-Id": "req-one" } },
    );
    expectFresh(first);
    const second = await post(
      tenant,
      LEADS,
      { firstName: "Ann" },
      { key: "headers", headers: { "X-Request-Id": "req-two", "Content-Type": "application/json; charset=utf-8" } },
    );
    expectReplayOf(second, first);
    expect(await count("leads", tenant)).toBe(1);
  });
});

describe("reuse of a key for a different request", () => {
  it.each([
    ["a different body", LEADS, { raw: '{"firstName":"Bob"}' }],
    ["the same JSON spelled differently (the raw body counts)", LEADS, { raw: '{ "firstName": "Ann" }' }],
    ["a different path", CONTACTS, { raw: '{"firstName":"Ann"}' }],
  ])(
    "%s → 422 idempotency_key_reused, nothing created, and the original is still replayed",
    async (_case, path, options) => {
      const tenant = await newTenant();
      const first = await post(tenant, LEADS, null, { key: "reused", raw: '{"firstName":"Ann"}' });
      expectFresh(first);
      const other = await post(tenant, path, null, { key: "reused", ...options });
      expectProblem(other, 422, "idempotency_key_reused");
      expect(other.headers.get("Retry-After")).toBeNull();
      expect(replayed(other)).toBeNull();
      expect(await count("leads", tenant)).toBe(1);
      expect(await count("contacts", tenant)).toBe(0);
      expectReplayOf(await post(tenant, LEADS, null, { key: "reused", raw: '{"firstName":"Ann"}' }), first);
    },
  );
});

it("a query string on a POST is refused (422 unknown_field) before its key is looked at; the original is still replayed", async () => {
  const tenant = await newTenant();
  const first = await post(tenant, LEADS, null, { key: "reused", raw: '{"firstName":"Ann"}' });
  const other = await post(tenant, `${LEADS}?source=retry`, null, { key: "reused", raw: '{"firstName":"Ann"}' });
  expectProblem(other, 422, "validation_failed");
  expect(other.body.errors).toEqual([{ path: "source", code: "unknown_field", message: expect.any(String) }]);
  expect(replayed(other)).toBeNull();
  expect(await count("leads", tenant)).toBe(1);
  expectReplayOf(await post(tenant, LEADS, null, { key: "reused", raw: '{"firstName":"Ann"}' }), first);
});

describe("claims of requests still running or abandoned", () => {
  it("a claim held for less than 60 s → 409 idempotency_in_progress, and the operation does not run", async () => {
    const tenant = await newTenant();
    expectFresh(await post(tenant, LEADS, { firstName: "Ann" }, { key: "running" }));
    for (const age of [0, 59_000]) {
      await makeClaim(tenant, "running", Date.now() - age);
      const res = await post(tenant, LEADS, { firstName: "Ann" }, { key: "running" });
      expectProblem(res, 409, "idempotency_in_progress");
      expect(replayed(res)).toBeNull();
    }
    expect(await count("leads", tenant)).toBe(1);
  });

  it("a claim abandoned more than 60 s ago is taken over: the request runs afresh and is then replayed", async () => {
    const tenant = await newTenant();
    const before = await post(tenant, LEADS, { firstName: "Ann" }, { key: "abandoned" });
    expectFresh(before);
    await makeClaim(tenant, "abandoned", Date.now() - 61_000);
    const taken = await post(tenant, LEADS, { firstName: "Ann" }, { key: "abandoned" });
    expectFresh(taken);
    expect(taken.body.id).not.toBe(before.body.id);
    expect(await count("leads", tenant)).toBe(2);
    expectReplayOf(await post(tenant, LEADS, { firstName: "Ann" }, { key: "abandoned" }), taken);
    expect(await count("leads", tenant)).toBe(2);
  });

  it("a lapsed claim frees the key for a different request too", async () => {
    const tenant = await newTenant();
    expectFresh(await post(tenant, LEADS, { firstName: "Ann" }, { key: "lapsed" }));
    await makeClaim(tenant, "lapsed", Date.now() - 61_000);
    const res = await post(tenant, LEADS, { firstName: "Someone else" }, { key: "lapsed" });
    expectFresh(res);
    expect(res.body.firstName).toBe("Someone else");
    expect(await count("leads", tenant)).toBe(2);
  });

  // Sent a few milliseconds apart, most racers arrive once the first has settled
  // and are replayed; sent all at once, they overlap and meet its claim.
  it.each([
    [
      "sent 5 ms apart, mostly after the first has settled",
      async (tenant: Tenant, body: unknown, i: number) => {
        await new Promise((resolve) => setTimeout(resolve, 5 * i));
        return post(tenant, CREATE, body, { key: "race" });
      },
    ],
    [
      "overlapping in one isolate",
      (tenant: Tenant, body: unknown, _i: number) => post(tenant, CREATE, body, { key: "race" }),
    ],
  ] as const)(
    "20 concurrent identical create-incident requests with one key book exactly one place (%s)",
    async (_how, send) => {
      const tenant = await tenantWithSchedule(3);
      const dateTime = slotAt(3, 9);
      const incident = { dateTime, clientName: "Racer", insectName: "Wasps" };
      const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => send(tenant, incident, i)));
      const ok = responses.filter((res) => res.status === 200);
      const busy = responses.filter((res) => res.status !== 200);
      for (const res of busy) expectProblem(res, 409, "idempotency_in_progress");
      const fresh = ok.filter((res) => replayed(res) === null);
      console.log(
        `idempotent race: ${responses.length} requests, ${ok.length} 200 (${ok.length - fresh.length} replayed), ${busy.length} other`,
      );
      expect(fresh).toHaveLength(1);
      for (const res of ok) expect(res.text).toBe(fresh[0]!.text);
      expect(await incidentsAt(tenant, dateTime)).toBe(1);
      expect(await count("incidents", tenant)).toBe(1);
      // Once settled, a retry gets the one booking.
      const retry = await post(tenant, CREATE, incident, { key: "race" });
      expectReplayOf(retry, fresh[0]!);
      const checked = await post(tenant, CHECK, { dateTime });
      expect(checked.body).toMatchObject({ available: true, slot: { remaining: 2 } });
    },
  );
});

describe("the 24-hour lifetime of a record", () => {
  it("a record 23 h 59 min old is still replayed", async () => {
    const tenant = await newTenant();
    const first = await post(tenant, LEADS, { firstName: "Ann" }, { key: "young" });
    expectFresh(first);
    await backdate(tenant, "young", Date.now() - DAY + MINUTE);
    expectReplayOf(await post(tenant, LEADS, { firstName: "Ann" }, { key: "young" }), first);
    expect(await count("leads", tenant)).toBe(1);
  });

  it("a record older than 24 h is treated as absent: the same request runs afresh", async () => {
    const tenant = await newTenant();
    const first = await post(tenant, LEADS, { firstName: "Ann" }, { key: "old" });
    expectFresh(first);
    await backdate(tenant, "old", Date.now() - DAY - MINUTE);
    const again = await post(tenant, LEADS, { firstName: "Ann" }, { key: "old" });
    expectFresh(again);
    expect(again.body.id).not.toBe(first.body.id);
    expect(await count("leads", tenant)).toBe(2);
    expectReplayOf(await post(tenant, LEADS, { firstName: "Ann" }, { key: "old" }), again);
  });

  it("a record older than 24 h does not make a different request a reuse", async () => {
    const tenant = await newTenant();
    expectFresh(await post(tenant, LEADS, { firstName: "Ann" }, { key: "old-other" }));
    await backdate(tenant, "old-other", Date.now() - DAY - MINUTE);
    const other = await post(tenant, CONTACTS, { firstName: "Cal" }, { key: "old-other" });
    expectFresh(other);
    expect(await count("contacts", tenant)).toBe(1);
  });
});

describe("which outcomes are stored", () => {
  it("409 slot_unavailable is stored and replayed, even once the slot has become free", async () => {
    const tenant = await tenantWithSchedule(1);
    const dateTime = slotAt(2, 11);
    expectFresh(await post(tenant, CREATE, { dateTime, clientName: "Early", insectName: "Ants" }));
    const incident = { dateTime, clientName: "Late", insectName: "Ants" };
    const first = await post(tenant, CREATE, incident, { key: "full" });
    expectProblem(first, 409, "slot_unavailable");
    expect(first.body.reason).toBe("fully_booked");
    expect(replayed(first)).toBeNull();

    const second = await post(tenant, CREATE, incident, { key: "full" });
    expectReplayOf(second, first);
    expect(second.body.requestId).toBe(first.body.requestId);

    // The slot frees up: the stored outcome is still what the key answers,
    // while the same request under another key books it.
    await env.DB.prepare("DELETE FROM incidents WHERE org_id = ?").bind(tenant.orgId).run();
    expectReplayOf(await post(tenant, CREATE, incident, { key: "full" }), first);
    expect(await count("incidents", tenant)).toBe(0);
    expectFresh(await post(tenant, CREATE, incident, { key: "full-2" }));
    expect(await count("incidents", tenant)).toBe(1);
  });

  it("409 slot_unavailable on a closed hour is replayed too", async () => {
    const tenant = await newTenant();
    await storeSchedule(db(), tenant.orgId, { timeZone: "UTC", minNoticeMinutes: 0, capacity: 2, weeklyHours: {} });
    const incident = { dateTime: slotAt(2, 12), clientName: "Closed", insectName: "Ants" };
    const first = await post(tenant, CREATE, incident, { key: "closed" });
    expectProblem(first, 409, "slot_unavailable");
    expect(first.body.reason).toBe("closed");
    expectReplayOf(await post(tenant, CREATE, incident, { key: "closed" }), first);
    expect(await count("incidents", tenant)).toBe(0);
  });

  it("a 200 of a read-only POST is stored and replayed", async () => {
    const tenant = await tenantWithSchedule(2);
    const dateTime = slotAt(4, 10);
    const first = await post(tenant, CHECK, { dateTime }, { key: "check" });
    expectFresh(first);
    expect(first.body.slot.remaining).toBe(2);
    expectFresh(await post(tenant, CREATE, { dateTime, clientName: "Ivy", insectName: "Ants" }));
    // The replay answers what was true then.
    const replay = await post(tenant, CHECK, { dateTime }, { key: "check" });
    expectReplayOf(replay, first);
    expect(replay.body.slot.remaining).toBe(2);
  });

  it.each([
    ["400 malformed JSON", 400, "malformed_json", { raw: "{not json" }],
    ["413 payload too large", 413, "payload_too_large", { raw: JSON.stringify({ firstName: "x".repeat(70_000) }) }],
    [
      "415 unsupported media type",
      415,
      "unsupported_media_type",
      { raw: '{"firstName":"Ann"}', headers: { "Content-Type": "text/plain" } },
    ],
    ["422 validation_failed (schema)", 422, "validation_failed", { raw: '{"firstName":"Ann","unknownField":1}' }],
    [
      "422 validation_failed (unknown accountId)",
      422,
      "validation_failed",
      { raw: '{"firstName":"Ann","accountId":"acct_nope"}' },
    ],
  ] as const)(
    "%s is not stored: the same key then runs a valid request afresh",
    async (_case, status, code, options) => {
      const tenant = await newTenant();
      const refused = await post(tenant, CONTACTS, null, { key: "K", ...options });
      expectProblem(refused, status, code);
      expect(await keyRows(tenant, "K")).toEqual([]);
      const valid = await post(tenant, CONTACTS, { firstName: "Ann" }, { key: "K" });
      expectFresh(valid);
      expect(await count("contacts", tenant)).toBe(1);
      expectReplayOf(await post(tenant, CONTACTS, { firstName: "Ann" }, { key: "K" }), valid);
    },
  );

  it("an unknown accountId (422) and then the very same body under the same key, once the account exists, runs afresh", async () => {
    const tenant = await newTenant();
    const accountId = "acct_01HZZZZZZZZZZZZZZZZZZZZZZZ";
    const refused = await post(tenant, CONTACTS, { firstName: "Ann", accountId }, { key: "K" });
    expectProblem(refused, 422, "validation_failed");
    expect(refused.body.errors).toEqual([expect.objectContaining({ path: "accountId" })]);
    await addAccount(tenant, "Late Account", { id: accountId });
    const valid = await post(tenant, CONTACTS, { firstName: "Ann", accountId }, { key: "K" });
    expectFresh(valid);
    expect(valid.body.accountId).toBe(accountId);
  });

  it("401 is not stored: the key is still free for the authenticated request", async () => {
    const tenant = await newTenant();
    const res = await post(
      { ...tenant, apiKey: `${tenant.apiKey.slice(0, -1)}${tenant.apiKey.endsWith("a") ? "b" : "a"}` },
      LEADS,
      { firstName: "Ann" },
      { key: "K" },
    );
    expectProblem(res, 401, "unauthenticated");
    expectFresh(await post(tenant, LEADS, { firstName: "Ann" }, { key: "K" }));
  });

  it("429 is not stored: the key is still free once the limiter allows", async () => {
    const tenant = await newTenant();
    const refuse = { limit: async () => ({ success: false }) };
    expectProblem(
      await postWith({ RATE_LIMITER: refuse }, tenant, LEADS, { firstName: "Ann" }, { key: "K" }),
      429,
      "rate_limited",
    );
    expect(await keyRows(tenant, "K")).toEqual([]);
    const valid = await post(tenant, LEADS, { firstName: "Ann" }, { key: "K" });
    expectFresh(valid);
    expect(await count("leads", tenant)).toBe(1);
  });

  it.each([
    ["500 (an unexpected error)", 500, "internal_error", "boom"],
    ["503 (D1 overloaded)", 503, "unavailable", "D1_ERROR: D1 DB is overloaded. Too many requests queued."],
  ] as const)("%s is not stored: the key is released and a retry runs afresh", async (_case, status, code, message) => {
    const tenant = await newTenant();
    const res = await postWith(
      { DB: wrapD1(env.DB, { fail: everyMatching(/insert into "leads"/i), error: () => new Error(message) }).db },
      tenant,
      LEADS,
      { firstName: "Ann" },
      { key: "K" },
    );
    expectProblem(res, status, code);
    expect(await keyRows(tenant, "K")).toEqual([]);
    expect(await count("leads", tenant)).toBe(0);
    const retry = await post(tenant, LEADS, { firstName: "Ann" }, { key: "K" });
    expectFresh(retry);
    expect(await count("leads", tenant)).toBe(1);
    expectReplayOf(await post(tenant, LEADS, { firstName: "Ann" }, { key: "K" }), retry);
  });
});

describe("a write and the record of its outcome commit together", () => {
  it.each([
    ["lead", LEADS, "leads", () => ({ firstName: "Ann" })],
    ["contact", CONTACTS, "contacts", () => ({ firstName: "Ann" })],
    ["incident", CREATE, "incidents", () => ({ dateTime: slotAt(), clientName: "Ann", insectName: "Ants" })],
  ] as const)(
    "%s: when recording the outcome fails, nothing is written, and the retry writes once",
    async (_name, path, table, body) => {
      const tenant = await tenantWithSchedule(3);
      const request = body();
      const failing = wrapD1(env.DB, {
        fail: everyMatching(/^\s*update "?idempotency_keys"?/i),
        error: () => new Error("D1_ERROR: Network connection lost."),
      });
      expectProblem(await postWith({ DB: failing.db }, tenant, path, request, { key: "K" }), 503, "unavailable");
      expect(failing.failed().length).toBeGreaterThan(0);
      // Before, the write committed and a retry after the claim lapsed wrote it a second time.
      expect(await count(table, tenant)).toBe(0);
      expect(await keyRows(tenant, "K")).toEqual([]);
      const retry = await post(tenant, path, request, { key: "K" });
      expectFresh(retry);
      expect(await count(table, tenant)).toBe(1);
      expectReplayOf(await post(tenant, path, request, { key: "K" }), retry);
      expect(await count(table, tenant)).toBe(1);
    },
  );
});

describe("keys of different orgs", () => {
  it("never collide: the same key and body in two orgs run twice, each replayed within its own org", async () => {
    const a = await newTenant("Org A");
    const b = await newTenant("Org B");
    const lead = { firstName: "Shared" };
    const inA = await post(a, LEADS, lead, { key: "shared-key" });
    const inB = await post(b, LEADS, lead, { key: "shared-key" });
    expectFresh(inA);
    expectFresh(inB);
    expect(inA.body.id).not.toBe(inB.body.id);
    expect(await count("leads", a)).toBe(1);
    expect(await count("leads", b)).toBe(1);
    expectReplayOf(await post(a, LEADS, lead, { key: "shared-key" }), inA);
    expectReplayOf(await post(b, LEADS, lead, { key: "shared-key" }), inB);
  });

  it("a different request under another org's key is not a reuse", async () => {
    const a = await newTenant("Org A");
    const b = await newTenant("Org B");
    expectFresh(await post(a, LEADS, { firstName: "A" }, { key: "k" }));
    expectFresh(await post(b, CONTACTS, { firstName: "B" }, { key: "k" }));
  });
});

describe("the purge of expired records", () => {
  async function seed(tenant: Tenant, now: number) {
    const ages = { "25h": DAY + HOUR, "24h+1ms": DAY + 1, "23h59": DAY - MINUTE, "1h": HOUR, now: 0 };
    for (const [key, age] of Object.entries(ages)) {
      await env.DB.prepare(
        "INSERT INTO idempotency_keys (org_id, key, request_hash, created_at, claimed_at, status, content_type, body) VALUES (?1, ?2, 'h', ?3, ?3, 200, 'application/json', '{}')",
      )
        .bind(tenant.orgId, key, now - age)
        .run();
    }
  }
  const keysOf = async (tenant: Tenant) =>
    (
      await env.DB.prepare("SELECT key FROM idempotency_keys WHERE org_id = ? ORDER BY created_at")
        .bind(tenant.orgId)
        .all<{ key: string }>()
    ).results.map((r) => r.key);

  it("purgeExpiredKeys deletes the records older than 24 h and keeps the rest", async () => {
    const tenant = await newTenant();
    const now = Date.now();
    await seed(tenant, now);
    await purgeExpiredKeys(db(), now);
    expect(await keysOf(tenant)).toEqual(["23h59", "1h", "now"]);
  });

  it("the worker's scheduled handler (the hourly Cron Trigger) purges the same way", async () => {
    const tenant = await newTenant();
    const now = Date.now();
    await seed(tenant, now);
    const ctx = createExecutionContext();
    worker.scheduled(
      { scheduledTime: now, cron: "23 * * * *", noRetry() {} } as ScheduledController,
      env as unknown as WorkerBindings,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(await keysOf(tenant)).toEqual(["23h59", "1h", "now"]);
  });

  it("a purged key is free again", async () => {
    const tenant = await newTenant();
    const first = await post(tenant, LEADS, { firstName: "Ann" }, { key: "purged" });
    expectFresh(first);
    await backdate(tenant, "purged", Date.now() - DAY - MINUTE);
    await purgeExpiredKeys(db(), Date.now());
    expect(await keyRows(tenant, "purged")).toEqual([]);
    const again = await post(tenant, CONTACTS, { firstName: "Cal" }, { key: "purged" });
    expectFresh(again);
  });
});
