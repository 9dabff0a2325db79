import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { createKey, revokeKey } from "../../../src/db/api-keys";
import { AUTH_CACHE_TTL_MS } from "../../../src/middleware/auth";
import { isProblem } from "../../support/problem";
import { call } from "../../support/request";
import { db, newTenant, type Tenant } from "../../support/tenants";

/** Polls until `tenant`'s key is refused; fails if it is still honoured `bound` ms from now (plus scheduling slack). */
async function expectRefusedWithin(tenant: Tenant, bound: number) {
  const start = Date.now();
  for (;;) {
    const { status } = await call(tenant, "/api/v1/contacts");
    if (status === 401) return;
    expect(status).toBe(200);
    expect(Date.now() - start, "a revoked key is still honoured").toBeLessThan(bound + 250);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

let a: Tenant;
let b: Tenant;
beforeAll(async () => {
  a = await newTenant("Org A");
  b = await newTenant("Org B");
});

const as = (apiKey: string | undefined, orgId: string | undefined) => ({
  headers: {
    ...(apiKey === undefined ? {} : { "X-API-KEY": apiKey }),
    ...(orgId === undefined ? {} : { "X-ORG-ID": orgId }),
  },
});

describe("authentication", () => {
  it("accepts a key with its own org", async () => {
    expect((await call(a, "/api/v1/contacts")).status).toBe(200);
  });

  it.each([
    ["no headers", () => as(undefined, undefined)],
    ["no key", () => as(undefined, a.orgId)],
    ["no org", () => as(a.apiKey, undefined)],
    ["empty key", () => as("", a.orgId)],
    ["empty org", () => as(a.apiKey, "  ")],
    ["unknown key", () => as(`fsk_${"x".repeat(40)}`, a.orgId)],
    ["malformed key", () => as("not-a-key", a.orgId)],
    ["over-long key", () => as(`fsk_${"a".repeat(5000)}`, a.orgId)],
    ["unknown org", () => as(a.apiKey, "org_doesnotexist")],
    ["key of another org", () => as(b.apiKey, a.orgId)],
    ["org id with a different case", () => as(a.apiKey, a.orgId.toUpperCase())],
  ])("refuses %s with one uniform 401", async (_case, headers) => {
    const res = await call(null, "/api/v1/contacts", headers());
    expect(res.status).toBe(401);
    expect(res.headers.get("Content-Type")).toBe("application/problem+json");
    expect(isProblem(res.body)).toBe(true);
    expect(res.body.code).toBe("unauthenticated");
  });

  it("says the same for a wrong key as for a wrong org", async () => {
    const wrongKey = await call(null, "/api/v1/contacts", as(`fsk_${"x".repeat(40)}`, a.orgId));
    const wrongOrg = await call(null, "/api/v1/contacts", as(a.apiKey, b.orgId));
    const { requestId: _1, ...x } = wrongKey.body;
    const { requestId: _2, ...y } = wrongOrg.body;
    expect(x).toEqual(y);
  });

  it("authenticates before routing: an unknown path without credentials is 401, not 404", async () => {
    const res = await call(null, "/api/v1/no-such-thing");
    expect(res.status).toBe(401);
  });

  it("honours several keys per org and stops a revoked one within the isolate's cache bound", async () => {
    const second = (await createKey(db(), a.orgId))!;
    const withSecond = { ...a, apiKey: second.apiKey };
    expect((await call(withSecond, "/api/v1/contacts")).status).toBe(200);
    await revokeKey(db(), a.orgId, second.keyId);
    await expectRefusedWithin(withSecond, AUTH_CACHE_TTL_MS);
    expect((await call(a, "/api/v1/contacts")).status).toBe(200);
  });

  it("stores only a hash of each key", async () => {
    const { results } = await env.DB.prepare("SELECT * FROM api_keys").all();
    expect(JSON.stringify(results)).not.toContain(a.apiKey);
    expect(JSON.stringify(results)).not.toContain(a.apiKey.slice(4));
  });
});
