// End-to-end proof that the service as it is run (a real `wrangler dev` over a
// real local D1, migrated by wrangler and provisioned only through the admin
// CLI) honours docs/api.md over real HTTP: uniform 401s that reveal
// nothing, request ids, problem+json errors, validation, cross-org isolation,
// and keyset pagination whose cursors are bound to one org and one filter.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUTH_CACHE_TTL_MS } from "../../src/middleware/auth";
import { expectProblem } from "../support/problem";
import {
  type ApiResponse,
  admin,
  applyMigrations,
  DevServer,
  freePort,
  jsonLine,
  type RequestOptions,
  request,
  type Tenant,
} from "./harness";

interface Org extends Tenant {
  keyId: string;
}
interface Imported {
  imported: number;
  accounts: { id: string; name: string }[];
}
interface KeyList {
  keys: { keyId: string; createdAt: string; revokedAt: string | null; lastUsedAt: string | null }[];
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const LEAD_FIELDS = [
  "firstName",
  "lastName",
  "title",
  "companyName",
  "email",
  "mobilePhone",
  "businessPhone",
  "leadSource",
  "accountType",
  "rating",
  "estimatedValue",
  "estimatedCloseDate",
  "buildingLocation",
  "street1",
  "street2",
  "city",
  "postalCode",
  "state",
  "country",
];

let stateDir: string | undefined;
let server: DevServer | undefined;
let orgA: Org;
let orgB: Org;
let importA: Imported;
let importB: Imported;

const orgAContactIds: string[] = [];
const bodiesSeenByB: string[] = [];
const responsesWithoutRequestId: string[] = [];

beforeAll(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-e2e-"));
  stateDir = dir;
  const jsonFile = path.join(dir, "accounts-a.json");
  fs.writeFileSync(
    jsonFile,
    JSON.stringify([
      { name: "Acme Apartments", city: "Boston" },
      { name: "Blue Bakery", accountType: 2 },
    ]),
  );
  const csvFile = path.join(dir, "accounts-b.csv");
  fs.writeFileSync(csvFile, 'name,accountType,city\n"Corner Cafe, Inc.",1,Springfield\n');

  await applyMigrations(dir);
  const dev = await DevServer.start(dir, await freePort());
  server = dev;
  const createOrg = async (name: string) =>
    jsonLine<Org>(await admin(dir, ["org", "create", "--name", name]), `org create ${name}`);
  // One CLI at a time: two processes writing the same SQLite file can meet SQLITE_BUSY.
  orgA = await createOrg("Org A");
  orgB = await createOrg("Org B");
  const a = await admin(dir, ["accounts", "import", "--org", orgA.orgId, "--file", jsonFile]);
  const b = await admin(dir, ["accounts", "import", "--org", orgB.orgId, "--file", csvFile]);
  importA = jsonLine(a, "accounts import (json)");
  importB = jsonLine(b, "accounts import (csv)");
});

afterAll(async () => {
  await server?.stop();
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

async function call(tenant: Tenant | null, urlPath: string, options: RequestOptions = {}): Promise<ApiResponse> {
  if (!server) throw new Error("the server did not start");
  const res = await request(server.baseUrl, tenant, urlPath, options);
  if (!res.headers.get("X-Request-Id")) responsesWithoutRequestId.push(`${urlPath} → ${res.status}`);
  if (tenant && tenant.orgId === orgB.orgId) bodiesSeenByB.push(res.text);
  return res;
}
const asA = (urlPath: string, options?: RequestOptions) => call(orgA, urlPath, options);
const asB = (urlPath: string, options?: RequestOptions) => call(orgB, urlPath, options);

function expectFieldError(res: ApiResponse, field: string, code: string) {
  expectProblem(res, 422, "validation_failed");
  expect(res.body.errors).toContainEqual({ path: field, code, message: expect.any(String) });
}

const withoutRequestId = ({ requestId: _ignored, ...rest }: Record<string, unknown>) => rest;

describe("admin CLI", () => {
  it("creates orgs with their first key", () => {
    for (const org of [orgA, orgB]) {
      expect(org).toEqual({
        orgId: expect.stringMatching(/^org_/),
        keyId: expect.stringMatching(/^key_/),
        apiKey: expect.stringMatching(/^fsk_/),
      });
    }
    expect(orgA.orgId).not.toBe(orgB.orgId);
  });

  it("imports accounts from JSON and from CSV with a quoted comma", () => {
    expect(importA.imported).toBe(2);
    expect(importA.accounts.map((x) => x.name)).toEqual(["Acme Apartments", "Blue Bakery"]);
    expect(importB).toEqual({
      imported: 1,
      accounts: [{ id: expect.stringMatching(/^acct_/), name: "Corner Cafe, Inc." }],
    });
    for (const account of importA.accounts) expect(account.id).toMatch(/^acct_/);
  });

  it("creates a key that works at once, revokes it under the running server (refused within the cache bound), and lists keys without secrets", async () => {
    const dir = stateDir!;
    const extra = jsonLine<{ keyId: string; apiKey: string; role: string }>(
      await admin(dir, ["key", "create", "--org", orgA.orgId]),
      "key create",
    );
    expect(extra).toEqual({
      keyId: expect.stringMatching(/^key_/),
      apiKey: expect.stringMatching(/^fsk_/),
      role: "office",
    });
    const asExtra = () => call({ orgId: orgA.orgId, apiKey: extra.apiKey }, "/api/v1/contacts?limit=1");
    expect((await asExtra()).status).toBe(200);

    const revoked = await admin(dir, ["key", "revoke", "--org", orgA.orgId, "--key", extra.keyId]);
    expect(jsonLine(revoked, "key revoke")).toEqual({ keyId: extra.keyId, revoked: true });
    // The server's isolate may trust the key it verified a moment ago for AUTH_CACHE_TTL_MS.
    const deadline = Date.now() + AUTH_CACHE_TTL_MS + 1_000;
    let after = await asExtra();
    while (after.status === 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      after = await asExtra();
    }
    const refused = expectProblem(after, 401, "unauthenticated");
    const unknownKey = expectProblem(
      await call({ orgId: orgA.orgId, apiKey: `fsk_${"Z".repeat(40)}` }, "/api/v1/contacts?limit=1"),
      401,
      "unauthenticated",
    );
    expect(withoutRequestId(refused)).toEqual(withoutRequestId(unknownKey));

    const listed = await admin(dir, ["key", "list", "--org", orgA.orgId]);
    const { keys } = jsonLine<KeyList>(listed, "key list");
    expect(listed.stdout).not.toContain(extra.apiKey);
    expect(listed.stdout).not.toContain(orgA.apiKey);
    for (const key of keys)
      expect(Object.keys(key).sort()).toEqual(["createdAt", "keyId", "lastUsedAt", "revokedAt", "role"]);
    expect(keys.map((k) => k.keyId).sort()).toEqual([orgA.keyId, extra.keyId].sort());
    expect(keys.find((k) => k.keyId === orgA.keyId)).toMatchObject({
      createdAt: expect.stringMatching(ISO),
      revokedAt: null,
    });
    expect(keys.find((k) => k.keyId === extra.keyId)).toMatchObject({
      createdAt: expect.stringMatching(ISO),
      revokedAt: expect.stringMatching(ISO),
    });
  });

  it("refuses an unknown org with an error on stderr and nothing on stdout", async () => {
    const run = await admin(stateDir!, ["key", "create", "--org", "org_nope"]);
    expect(run.code).not.toBe(0);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/error.*org_nope/i);
  });
});

describe("health and request ids", () => {
  it("GET /health answers without auth", async () => {
    const res = await call(null, "/health");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "ok" });
    expect(res.headers.get("X-Request-Id")).toBeTruthy();
  });

  it("echoes a client X-Request-Id in the header and in error bodies", async () => {
    const ok = await asA("/api/v1/contacts?limit=1", { headers: { "X-Request-Id": "abc-123" } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("X-Request-Id")).toBe("abc-123");
    const failed = await call(null, "/api/v1/contacts", { headers: { "X-Request-Id": "abc-123" } });
    expect(expectProblem(failed, 401, "unauthenticated").requestId).toBe("abc-123");
  });
});

describe("authentication", () => {
  const unknownKey = `fsk_${"Z".repeat(40)}`;

  it.each([
    ["no headers", {}],
    ["no X-API-KEY", { "X-ORG-ID": "org_x" }],
    ["an empty X-API-KEY", { "X-API-KEY": "", "X-ORG-ID": "org_x" }],
    ["no X-ORG-ID", { "X-API-KEY": unknownKey }],
    ["an empty X-ORG-ID", { "X-API-KEY": unknownKey, "X-ORG-ID": "" }],
  ])("refuses a request with %s", async (_label, headers: Record<string, string>) => {
    const body = expectProblem(await call(null, "/api/v1/contacts", { headers }), 401, "unauthenticated");
    expect(body.detail).toEqual(expect.any(String));
  });

  it("gives one identical 401 for an unknown key, another org's key and an unknown org", async () => {
    const attempts: Tenant[] = [
      { orgId: orgA.orgId, apiKey: unknownKey },
      { orgId: orgB.orgId, apiKey: orgA.apiKey },
      { orgId: "org_nope", apiKey: orgA.apiKey },
    ];
    const bodies = [];
    for (const tenant of attempts) {
      const body = expectProblem(await call(tenant, "/api/v1/contacts"), 401, "unauthenticated");
      expect(body.detail).toEqual(expect.any(String));
      bodies.push(withoutRequestId(body));
    }
    for (const body of bodies.slice(1)) expect(body).toEqual(bodies[0]);
  });
});

describe("leads", () => {
  it("creates an empty lead with every field null", async () => {
    const res = await asA("/api/v1/leads", { body: {} });
    expect(res.status, res.text).toBe(200);
    expect(res.body.id).toMatch(/^lead_/);
    expect(res.body.createdAt).toMatch(ISO);
    for (const field of LEAD_FIELDS) expect(res.body, field).toHaveProperty(field, null);
  });

  it("rejects a malformed email, a naive date-time and a misspelled field", async () => {
    expectFieldError(await asA("/api/v1/leads", { body: { email: "nope" } }), "email", "invalid_format");
    const naive = await asA("/api/v1/leads", { body: { estimatedCloseDate: "2026-11-23T14:00:00" } });
    expectProblem(naive, 422, "validation_failed");
    expect(naive.body.errors).toContainEqual(expect.objectContaining({ path: "estimatedCloseDate" }));
    const typo = await asA("/api/v1/leads", { body: { firstname: "x" } });
    expectFieldError(typo, "firstname", "unknown_field");
    expect(typo.body.errors.find((e: { path: string }) => e.path === "firstname").message).toContain(
      "did you mean 'firstName'",
    );
  });
});

describe("accounts and contacts across orgs", () => {
  it("reads an org's own imported accounts and nobody else's", async () => {
    const [acme, blue] = importA.accounts;
    const own = await asA(`/api/v1/accounts/${acme!.id}`);
    expect(own.status, own.text).toBe(200);
    expect(own.body).toMatchObject({
      id: acme!.id,
      name: "Acme Apartments",
      accountType: null,
      city: "Boston",
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    expect((await asA(`/api/v1/accounts/${blue!.id}`)).body).toMatchObject({
      name: "Blue Bakery",
      accountType: 2,
      city: null,
    });
    const csv = await asB(`/api/v1/accounts/${importB.accounts[0]!.id}`);
    expect(csv.body).toMatchObject({ name: "Corner Cafe, Inc.", accountType: 1, city: "Springfield" });

    expectProblem(await asB(`/api/v1/accounts/${acme!.id}`), 404, "account_not_found");
    expectProblem(await asA(`/api/v1/accounts/${importB.accounts[0]!.id}`), 404, "account_not_found");
    expectProblem(await asA("/api/v1/accounts/acct_doesnotexist"), 404, "account_not_found");
  });

  it("links a contact to the org's own account only, writing nothing otherwise", async () => {
    const accountId = importA.accounts[0]!.id;
    const res = await asA("/api/v1/contacts", { body: { firstName: "Ann", accountId } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^ct_/),
      firstName: "Ann",
      accountId,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    orgAContactIds.push(res.body.id);

    expectFieldError(
      await asB("/api/v1/contacts", { body: { firstName: "Ann", accountId } }),
      "accountId",
      "account_not_found",
    );
    const list = await asB("/api/v1/contacts");
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ data: [], hasMore: false, nextCursor: null });
  });
});

describe("contact pagination", () => {
  it("pages through every contact exactly once, in (createdAt, id) order", async () => {
    const names = Array.from({ length: 25 }, (_, i) => `P${String(i + 1).padStart(2, "0")}`);
    for (let i = 0; i < names.length; i += 5) {
      const created = await Promise.all(
        names.slice(i, i + 5).map((firstName) => asA("/api/v1/contacts", { body: { firstName } })),
      );
      for (const res of created) {
        expect(res.status, res.text).toBe(200);
        orgAContactIds.push(res.body.id);
      }
    }

    const seen: { id: string; createdAt: string; firstName: string }[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await asA(
        `/api/v1/contacts?limit=7${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`,
      );
      expect(res.status, res.text).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(["data", "hasMore", "nextCursor"]);
      if (res.body.hasMore) {
        expect(res.body.data).toHaveLength(7);
        expect(res.body.nextCursor).toEqual(expect.any(String));
      } else {
        expect(res.body.nextCursor).toBeNull();
      }
      seen.push(...res.body.data);
      cursor = res.body.nextCursor;
      pages++;
    } while (cursor !== null && pages < 20);

    expect(pages).toBe(Math.ceil(orgAContactIds.length / 7));
    const ids = seen.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual([...orgAContactIds].sort());
    expect(
      seen
        .filter((c) => /^P\d\d$/.test(c.firstName))
        .map((c) => c.firstName)
        .sort(),
    ).toEqual(names);
    for (let i = 1; i < seen.length; i++) {
      const [prev, next] = [seen[i - 1]!, seen[i]!];
      expect(
        prev.createdAt < next.createdAt || (prev.createdAt === next.createdAt && prev.id < next.id),
        `${prev.id} before ${next.id}`,
      ).toBe(true);
    }
  });

  it("refuses a cursor replayed by another org, with another filter, or made up", async () => {
    const first = await asA("/api/v1/contacts?limit=1");
    expect(first.body.hasMore).toBe(true);
    const cursor = encodeURIComponent(first.body.nextCursor);
    expectFieldError(await asB(`/api/v1/contacts?limit=1&cursor=${cursor}`), "cursor", "invalid_cursor");
    expectFieldError(await asA(`/api/v1/contacts?limit=1&cursor=${cursor}&email=x@y.com`), "cursor", "invalid_cursor");
    expectFieldError(await asA("/api/v1/contacts?cursor=%%%"), "cursor", "invalid_cursor");
  });

  it("validates limit and refuses unknown query parameters", async () => {
    expectFieldError(await asA("/api/v1/contacts?limit=0"), "limit", "out_of_range");
    expectFieldError(await asA("/api/v1/contacts?limit=201"), "limit", "out_of_range");
    expectFieldError(await asA("/api/v1/contacts?foo=1"), "foo", "unknown_field");
  });
});

describe("error responses", () => {
  it("404s an unknown path, but only after authentication", async () => {
    expectProblem(await asA("/api/v1/nope"), 404, "not_found");
    expectProblem(await call(null, "/api/v1/nope"), 401, "unauthenticated");
  });

  it("405s a method the path does not serve, with Allow", async () => {
    const res = await asA("/api/v1/leads", { method: "DELETE" });
    expectProblem(res, 405, "method_not_allowed");
    expect(res.headers.get("Allow")).toContain("POST");
  });

  it("checks media type, size and JSON syntax of bodies", async () => {
    const post = (rawBody: string, contentType = "application/json") =>
      asA("/api/v1/leads", { rawBody, headers: { "Content-Type": contentType } });
    expectProblem(await post('{"firstName":"x"}', "text/plain"), 415, "unsupported_media_type");
    expectProblem(await post(`{"firstName":"${"x".repeat(70_000)}"}`), 413, "payload_too_large");
    expectProblem(await post("{not json"), 400, "malformed_json");
    expectProblem(await post("[1,2]"), 400, "malformed_json");
  });
});

describe("tenant isolation and request ids, over everything above", () => {
  it("never showed org B any of org A's data", async () => {
    const list = await asB("/api/v1/contacts?limit=200");
    expect(list.body).toEqual({ data: [], hasMore: false, nextCursor: null });
    expect(orgAContactIds.length).toBeGreaterThan(0);
    expect(bodiesSeenByB.length).toBeGreaterThan(5);
    for (const text of bodiesSeenByB) {
      for (const secret of [...orgAContactIds, orgA.orgId, "Acme Apartments", "Blue Bakery"])
        expect(text).not.toContain(secret);
    }
  });

  it("sent X-Request-Id on every response", () => {
    expect(responsesWithoutRequestId).toEqual([]);
  });
});
