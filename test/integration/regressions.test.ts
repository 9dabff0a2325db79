// Regressions: the bugs the issue-6 suites found (fuzz, auth matrix, MCP mass assignment), one test each.
import { createExecutionContext, env, SELF } from "cloudflare:test";
import { beforeAll, expect, it } from "vitest";
import app from "../../src/app";
import { storeSchedule } from "../../src/db/orgs";
import { db, newTenant, type Tenant } from "../helpers";
import { OPEN_ALWAYS } from "../schedules";
import { credentialsOf, mcpCall, request, slotIn, toolAnswer } from "../security-helpers";

let t: Tenant;
beforeAll(async () => {
  t = await newTenant("Issue 6 bugs");
  await storeSchedule(db(), t.orgId, { timeZone: "UTC", minNoticeMinutes: 0, weeklyHours: OPEN_ALWAYS });
});

// Bug 1 (src/http/body.ts + Hono's c.req.json()): a number JSON cannot hold becomes null.
it.each([
  ["/api/v1/leads", '{"estimatedValue":1e999}', "estimatedValue"],
  ["/api/v1/leads", '{"rating":1e999}', "rating"],
  ["/api/v1/ai-agent/available-appointments", '{"dateTime":"DT","limit":-1e999}', "limit"],
])("POST %s %s → 422 naming %s, not a 200 with null", async (path, raw, field) => {
  const headers = { ...credentialsOf(t), "Content-Type": "application/json" };
  const res = await request(path, { headers, json: JSON.parse(raw.replace("DT", slotIn(3)).replace(/-?1e999/, "5")) });
  expect(res.status).toBe(200); // the same body with a finite number is fine
  const bad = await SELF.fetch(`https://api.test${path}`, {
    method: "POST",
    headers,
    body: raw.replace("DT", slotIn(3)),
  });
  const body = await bad.json<{ errors?: { path: string }[] }>();
  expect(bad.status, JSON.stringify(body)).toBe(422);
  expect(body.errors?.map((e) => e.path)).toContain(field);
});

// Bug 2 (src/middleware/database.ts with the auth cache): X-D1-Bookmark tells a live key from an unknown one.
it("a 401 has the same headers whether the key is unknown or live with another org's id", async () => {
  const other = await newTenant("Issue 6 other");
  await request("/api/v1/contacts", { headers: credentialsOf(t) }); // the key is now verified and cached
  const unknownKey = await request("/api/v1/contacts", {
    headers: { "X-API-KEY": `fsk_${"Z".repeat(40)}`, "X-ORG-ID": other.orgId },
  });
  const liveKeyWrongOrg = await request("/api/v1/contacts", {
    headers: { "X-API-KEY": t.apiKey, "X-ORG-ID": other.orgId },
  });
  expect([unknownKey.status, liveKeyWrongOrg.status]).toEqual([401, 401]);
  expect([...liveKeyWrongOrg.headers.keys()].sort()).toEqual([...unknownKey.headers.keys()].sort());
});

// Bug 3 (the MCP SDK's request parsing, under src/routes/mcp.ts): an argument named "__proto__" is dropped, not refused.
it("MCP create_lead with an argument named __proto__ → isError 422 unknown_field, nothing stored", async () => {
  const args = JSON.parse('{"firstName":"Proto","__proto__":{"orgId":"org_x"}}');
  const answer = toolAnswer(await mcpCall(credentialsOf(t), "create_lead", args));
  expect(answer).toMatchObject({
    isError: true,
    status: 422,
    body: { errors: [{ path: "__proto__", code: "unknown_field" }] },
  });
});

// Bug 4 (src/routes/mcp.ts operationRequest: String(value), encodeURIComponent): a protocol error, not a tool result.
it.each([
  ["list_contacts", { limit: { toString: [] } }],
  ["get_account", { id: "acct_x", orgId: { toString: null } }],
  ["get_account", { id: "\ud800" }],
])("MCP %s %j → an isError tool result with a problem document, not a JSON-RPC error", async (tool, args) => {
  const res = await mcpCall(credentialsOf(t), tool, args as Record<string, unknown>);
  expect(res.body.error, res.text).toBeUndefined();
  const answer = toolAnswer(res);
  expect(answer.isError).toBe(true);
  expect([404, 422]).toContain(answer.status);
});

// The /mcp route reads the body itself (for the arguments as sent): a body that
// is not JSON must still reach the transport, which answers its parse error.
it("MCP with a body that is not JSON → the transport's JSON-RPC parse error, not a 500", async () => {
  const headers = {
    ...credentialsOf(t),
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
  };
  const res = await app.fetch(
    new Request("https://api.test/mcp", { method: "POST", headers, body: "{not json" }),
    env,
    createExecutionContext(),
  );
  const body = await res.json<{ error?: { code: number } }>();
  expect(res.status).toBe(400);
  expect(body.error?.code).toBe(-32700);
});
