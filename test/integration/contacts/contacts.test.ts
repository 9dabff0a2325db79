import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../../support/request";
import { addAccount, newTenant, type Tenant } from "../../support/tenants";

let a: Tenant;
let b: Tenant;
beforeAll(async () => {
  a = await newTenant("Org A");
  b = await newTenant("Org B");
});

const countContacts = async (tenant: Tenant) =>
  (
    await env.DB.prepare("SELECT count(*) AS n FROM contacts WHERE org_id = ?")
      .bind(tenant.orgId)
      .first<{ n: number }>()
  )?.n;

async function pageThrough(tenant: Tenant, query: string, limit: number) {
  const seen: { id: string; createdAt: string; updatedAt: string }[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 100; pages++) {
    const res = await call(tenant, `/api/v1/contacts?limit=${limit}${query}${cursor ? `&cursor=${cursor}` : ""}`);
    expect(res.status).toBe(200);
    expect(res.body.data.length).toBeLessThanOrEqual(limit);
    seen.push(...res.body.data);
    cursor = res.body.nextCursor;
    expect(res.body.hasMore).toBe(cursor !== null);
    if (!cursor) return seen;
  }
  throw new Error("pagination did not end");
}

describe("POST /api/v1/contacts", () => {
  it("stores a contact linked to an account of the org", async () => {
    const account = await addAccount(a, "Acme");
    const res = await call(a, "/api/v1/contacts", {
      body: { firstName: "Ann", email: "Ann@Example.com", accountId: account.id },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      firstName: "Ann",
      lastName: null,
      email: "Ann@Example.com",
      accountId: account.id,
    });
    expect(res.body.id).toMatch(/^ct_/);
    expect(res.body.updatedAt).toBe(res.body.createdAt);
    const listed = await call(a, `/api/v1/contacts?email=ann@example.com`);
    expect(listed.body.data).toEqual([res.body]);
  });

  it("refuses another org's account and writes nothing", async () => {
    const foreign = await addAccount(a, "Not yours");
    const before = await countContacts(b);
    for (const accountId of [foreign.id, "acct_00000000000000000000000000"]) {
      const res = await call(b, "/api/v1/contacts", { body: { firstName: "Eve", accountId } });
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([{ path: "accountId", code: "account_not_found", message: expect.any(String) }]);
    }
    expect(await countContacts(b)).toBe(before);
  });

  it("needs a name or a way to reach the contact", async () => {
    const res = await call(a, "/api/v1/contacts", { body: { city: "Boston", firstName: "   " } });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([
      { path: "", code: "required_one_of", message: expect.stringContaining("firstName") },
    ]);
  });
});

describe("GET /api/v1/contacts", () => {
  it("pages through every contact exactly once, oldest first, while contacts are added", async () => {
    const tenant = await newTenant();
    const created: string[] = [];
    for (let i = 0; i < 23; i++) {
      created.push((await call(tenant, "/api/v1/contacts", { body: { lastName: `P${i}` } })).body.id);
    }
    const first = await call(tenant, "/api/v1/contacts?limit=5");
    // A contact added mid-way lands after the cursor, so it is still seen.
    created.push((await call(tenant, "/api/v1/contacts", { body: { lastName: "late" } })).body.id);
    expect((await pageThrough(tenant, "", 4)).map((c) => c.id)).toEqual(created);
    const all = [...first.body.data];
    let cursor = first.body.nextCursor;
    while (cursor) {
      const res = await call(tenant, `/api/v1/contacts?limit=6&cursor=${cursor}`);
      all.push(...res.body.data);
      cursor = res.body.nextCursor;
    }
    expect(all.map((c) => c.id)).toEqual(created);
    const keys = all.map((c) => `${c.createdAt}|${c.id}`);
    expect(keys).toEqual([...keys].sort());
  });

  it("filters by account, email (case-insensitively) and updatedSince", async () => {
    const tenant = await newTenant();
    const account = await addAccount(tenant, "Filtered");
    const linked = (await call(tenant, "/api/v1/contacts", { body: { firstName: "L", accountId: account.id } })).body;
    // Backdate the linked contact so that updatedSince must leave it out.
    await env.DB.prepare("UPDATE contacts SET updated_at = updated_at - 60000 WHERE id = ?").bind(linked.id).run();
    const emailed = (await call(tenant, "/api/v1/contacts", { body: { email: "ÉMILE@Example.com" } })).body;
    const accountPage = await pageThrough(tenant, `&accountId=${account.id}`, 10);
    expect(accountPage.map((c) => c.id)).toEqual([linked.id]);
    const emailPage = await pageThrough(tenant, `&email=${encodeURIComponent("émile@example.COM")}`, 10);
    expect(emailPage.map((c) => c.id)).toEqual([emailed.id]);
    const since = await pageThrough(tenant, `&updatedSince=${encodeURIComponent(emailed.updatedAt)}`, 10);
    expect(since.map((c) => c.id)).toContain(emailed.id);
    expect(since.map((c) => c.id)).not.toContain(linked.id);
    expect(since.every((c) => c.updatedAt >= emailed.updatedAt)).toBe(true);
    const future = await call(tenant, "/api/v1/contacts?updatedSince=2999-01-01T00:00:00Z");
    expect(future.body).toEqual({ data: [], hasMore: false, nextCursor: null });
  });

  it("never lists another org's contacts", async () => {
    const tenant = await newTenant();
    await call(a, "/api/v1/contacts", { body: { firstName: "A-only" } });
    const res = await call(tenant, "/api/v1/contacts");
    expect(res.body).toEqual({ data: [], hasMore: false, nextCursor: null });
  });

  it.each([
    ["limit=0", "limit", "out_of_range"],
    ["limit=201", "limit", "out_of_range"],
    ["limit=ten", "limit", "invalid_format"],
    ["limit=1&limit=2", "limit", "invalid_type"], // "must be given once"
    ["foo=1", "foo", "unknown_field"],
    ["updatedSince=2026-11-23T14:00:00", "updatedSince", "invalid_format"],
    ["cursor=%25%25%25", "cursor", "invalid_cursor"],
    ["cursor=eyJ0IjoxfQ", "cursor", "invalid_cursor"],
  ])("refuses ?%s with 422 naming %s", async (query, path, code) => {
    const res = await call(a, `/api/v1/contacts?${query}`);
    expect(res.status).toBe(422);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ path, code }));
  });

  it("refuses a cursor issued for another org or other filters", async () => {
    for (let i = 0; i < 3; i++) await call(a, "/api/v1/contacts", { body: { firstName: `c${i}` } });
    const page = await call(a, "/api/v1/contacts?limit=1");
    const cursor = page.body.nextCursor;
    expect(cursor).toEqual(expect.any(String));
    expect((await call(a, `/api/v1/contacts?limit=2&cursor=${cursor}`)).status).toBe(200);
    for (const [tenant, query] of [
      [b, ""],
      [a, "&email=x@y.com"],
      [a, "&accountId=acct_x"],
    ] as const) {
      const res = await call(tenant, `/api/v1/contacts?cursor=${cursor}${query}`);
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([expect.objectContaining({ path: "cursor", code: "invalid_cursor" })]);
    }
  });
});
