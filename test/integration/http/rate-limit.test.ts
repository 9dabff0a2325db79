// Per-org rate limiting (docs/api.md, "Rate limits"), through the app with the
// RATE_LIMITER binding replaced by one that records its calls and allows or
// refuses: the 429 shape and Retry-After, the order of checks (401, 404 and
// 405 before 429; 429 before 415, 413, 400 and 422), /health never limited,
// and one count per request keyed by the org: every sampled operation
// (test/support/operations.ts), over HTTP and as an MCP tool.
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { mcpCall } from "../../support/mcp";
import {
  type Fixture,
  fixture,
  httpRequest,
  OPERATIONS,
  type Operation,
  type Transport,
  toolArguments,
} from "../../support/operations";
import { expectProblem } from "../../support/problem";
import { type CallOptions, call } from "../../support/request";
import { newTenant, type Tenant } from "../../support/tenants";

interface Limiter {
  binding: RateLimit;
  calls: unknown[];
}

/** A RATE_LIMITER that answers `success` to every call and records the options it was called with. */
function limiter(success: boolean): Limiter {
  const calls: unknown[] = [];
  return {
    calls,
    binding: {
      limit: async (options: RateLimitOptions) => {
        calls.push(options);
        return { success };
      },
    },
  };
}

type SendOptions = Omit<CallOptions, "bindings">;
const JSON_TYPE = { "Content-Type": "application/json" };

/** One request with `rateLimiter` as RATE_LIMITER, as `tenant` (no credentials when null). */
const send = (rateLimiter: Limiter, tenant: Tenant | null, path: string, options: SendOptions = {}) =>
  call(tenant, path, { ...options, bindings: { RATE_LIMITER: rateLimiter.binding } });

const countLeads = async (tenant: Tenant) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM leads WHERE org_id = ?").bind(tenant.orgId).first<{ n: number }>())
    ?.n;

let tenant: Tenant;

beforeAll(async () => {
  tenant = await newTenant("Rate Org");
});

/** Every sampled operation, over HTTP and as an MCP tool (an /mcp request counts once, whatever it calls). */
const SAMPLES = (["http", "mcp"] as const).flatMap((transport) =>
  OPERATIONS.map((op) => [transport, op.name, op] as const),
);

/** The operation's sample as the fixture's org, with `rateLimiter` as RATE_LIMITER. */
function sendSample(rateLimiter: Limiter, transport: Transport, op: Operation, f: Fixture) {
  const bindings = { RATE_LIMITER: rateLimiter.binding };
  if (transport === "mcp") return mcpCall(f.tenant, op.tool, toolArguments(op, f), { bindings });
  const { path, body } = httpRequest(op, f);
  return call(f.tenant, path, { body, bindings });
}

describe("a refused request", () => {
  it.each(SAMPLES)("%s %s → 429 rate_limited with Retry-After: 60", async (transport, _name, op) => {
    const f = await fixture(op);
    const refuse = limiter(false);
    const res = await sendSample(refuse, transport, op, f);
    expectProblem(res, 429, "rate_limited");
    expect(res.headers.get("Retry-After")).toBe("60");
    expect(refuse.calls).toEqual([{ key: f.tenant.orgId }]);
  });

  it("creates nothing", async () => {
    const org = await newTenant();
    expectProblem(
      await send(limiter(false), org, "/api/v1/leads", { body: { firstName: "Ann" } }),
      429,
      "rate_limited",
    );
    expect(await countLeads(org)).toBe(0);
  });

  it("the real binding (limit 1200 a minute) lets an ordinary request through", async () => {
    const org = await newTenant();
    const response = await call(org, "/api/v1/contacts");
    expect(response.status, response.text).toBe(200);
  });
});

describe("the order of checks", () => {
  const wrongKey = (): Tenant => ({
    ...tenant,
    apiKey: `${tenant.apiKey.slice(0, -1)}${tenant.apiKey.endsWith("a") ? "b" : "a"}`,
  });

  it.each([
    ["no credentials", (): Tenant | null => null, "/api/v1/leads", { body: {} }],
    ["a wrong API key", wrongKey, "/api/v1/leads", { body: {} }],
    ["a wrong API key on an unknown path", wrongKey, "/api/v1/nope", {}],
    [
      "an org id that is not the key's",
      (): Tenant => ({ ...tenant, orgId: "org_someoneelse" }),
      "/api/v1/contacts",
      {},
    ],
  ] as const)("bad credentials (%s) → 401, before the limiter is asked", async (_case, who, path, options) => {
    const refuse = limiter(false);
    const res = await send(refuse, who(), path, options);
    expectProblem(res, 401, "unauthenticated");
    expect(refuse.calls).toEqual([]);
  });

  it.each([
    ["an unknown path under /api/v1", 404, "not_found", "/api/v1/nope", {}],
    ["an unknown sub-path of an operation", 404, "not_found", "/api/v1/leads/x", { body: {} }],
    ["an unknown ai-agent operation", 404, "not_found", "/api/v1/ai-agent/cancel-incident", { body: {} }],
    ["a path outside the API", 404, "not_found", "/nope", {}],
    ["GET on create-lead", 405, "method_not_allowed", "/api/v1/leads", {}],
    ["DELETE on contacts", 405, "method_not_allowed", "/api/v1/contacts", { method: "DELETE" }],
    ["PUT on an account", 405, "method_not_allowed", "/api/v1/accounts/acct_x", { method: "PUT", body: {} }],
    ["GET on create-incident", 405, "method_not_allowed", "/api/v1/ai-agent/create-incident", {}],
  ] as const)("%s → %i %s, not rate limited and not counted", async (_case, status, code, path, options) => {
    const refuse = limiter(false);
    const res = await send(refuse, tenant, path, options);
    expectProblem(res, status, code);
    expect(refuse.calls).toEqual([]);
  });

  it.each([
    ["an unsupported media type (415)", "/api/v1/leads", { rawBody: "{}", headers: { "Content-Type": "text/plain" } }],
    ["a body over 64 KiB (413)", "/api/v1/leads", { body: { firstName: "x".repeat(70_000) } }],
    ["malformed JSON (400)", "/api/v1/leads", { rawBody: "{not json", headers: JSON_TYPE }],
    ["a failing field (422)", "/api/v1/contacts", { body: { email: "not-an-email" } }],
    ["an invalid Idempotency-Key (422)", "/api/v1/leads", { body: {}, headers: { "Idempotency-Key": "" } }],
    ["an invalid query (422)", "/api/v1/contacts?limit=0", {}],
    ["an unknown account (404 of the operation)", "/api/v1/accounts/acct_nope", {}],
  ] as const)("429 comes before %s", async (_case, path, options) => {
    const refuse = limiter(false);
    expectProblem(await send(refuse, tenant, path, options), 429, "rate_limited");
    expect(refuse.calls).toEqual([{ key: tenant.orgId }]);
  });

  it("the same requests with an allowing limiter get their own errors (so the 429s above are the limiter's)", async () => {
    const allow = limiter(true);
    expectProblem(
      await send(allow, tenant, "/api/v1/leads", { rawBody: "{}", headers: { "Content-Type": "text/plain" } }),
      415,
      "unsupported_media_type",
    );
    expectProblem(
      await send(allow, tenant, "/api/v1/leads", { rawBody: "{not json", headers: JSON_TYPE }),
      400,
      "malformed_json",
    );
    expectProblem(
      await send(allow, tenant, "/api/v1/contacts", { body: { email: "not-an-email" } }),
      422,
      "validation_failed",
    );
    expectProblem(await send(allow, tenant, "/api/v1/accounts/acct_nope", {}), 404, "account_not_found");
    expect(allow.calls).toHaveLength(4);
  });

  it("/health is never limited", async () => {
    const refuse = limiter(false);
    for (const who of [null, tenant]) {
      const res = await send(refuse, who, "/health");
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({ status: "ok" });
    }
    expect(refuse.calls).toEqual([]);
  });
});

describe("what is counted", () => {
  it.each(SAMPLES)("%s %s counts once, keyed by the org id", async (transport, _name, op) => {
    const f = await fixture(op);
    const allow = limiter(true);
    const res = await sendSample(allow, transport, op, f);
    expect(res.status, res.text).toBe(200);
    if (transport === "mcp") expect(res.body.result.isError, res.text).toBeFalsy();
    expect(allow.calls).toEqual([{ key: f.tenant.orgId }]);
  });

  it("each org is counted under its own id", async () => {
    const other = await newTenant("Other Rate Org");
    const allow = limiter(true);
    await send(allow, tenant, "/api/v1/contacts");
    await send(allow, other, "/api/v1/contacts");
    await send(allow, tenant, "/api/v1/leads", { body: {} });
    expect(allow.calls).toEqual([{ key: tenant.orgId }, { key: other.orgId }, { key: tenant.orgId }]);
  });

  it("a replayed Idempotency-Key request counts once too", async () => {
    const allow = limiter(true);
    const headers = { "Idempotency-Key": `count-${crypto.randomUUID()}` };
    const first = await send(allow, tenant, "/api/v1/leads", { body: { firstName: "Once" }, headers });
    const replay = await send(allow, tenant, "/api/v1/leads", { body: { firstName: "Once" }, headers });
    expect(first.status).toBe(200);
    expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
    expect(allow.calls).toEqual([{ key: tenant.orgId }, { key: tenant.orgId }]);
  });

  it("a refused org does not hold up another org", async () => {
    const other = await newTenant("Unlimited Org");
    const perOrg: Limiter = {
      calls: [],
      binding: { limit: async ({ key }) => ({ success: key !== tenant.orgId }) },
    };
    expectProblem(await send(perOrg, tenant, "/api/v1/contacts"), 429, "rate_limited");
    expect((await send(perOrg, other, "/api/v1/contacts")).status).toBe(200);
  });
});
