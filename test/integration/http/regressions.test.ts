// Regressions: the bugs the security suites found (fuzz, auth matrix, MCP mass assignment), one test each.
import { beforeAll, expect, it } from "vitest";
import { mcpCall, toolAnswer } from "../../support/mcp";
import { call } from "../../support/request";
import { newTenant, openTenant, type Tenant } from "../../support/tenants";
import { slotIn } from "../../support/time";

let t: Tenant;
beforeAll(async () => {
  t = await openTenant("Regression bugs");
});

// Bug 1 (src/http/body.ts + Hono's c.req.json()): a number JSON cannot hold becomes null.
it.each([
  ["/api/v1/leads", '{"estimatedValue":1e999}', "estimatedValue"],
  ["/api/v1/leads", '{"rating":1e999}', "rating"],
  ["/api/v1/ai-agent/available-appointments", '{"dateTime":"DT","limit":-1e999}', "limit"],
])("POST %s %s → 422 naming %s, not a 200 with null", async (path, raw, field) => {
  const res = await call(t, path, { body: JSON.parse(raw.replace("DT", slotIn(3)).replace(/-?1e999/, "5")) });
  expect(res.status).toBe(200); // the same body with a finite number is fine
  const bad = await call(t, path, {
    rawBody: raw.replace("DT", slotIn(3)),
    headers: { "Content-Type": "application/json" },
  });
  const body: { errors?: { path: string }[] } = bad.body;
  expect(bad.status, bad.text).toBe(422);
  expect(body.errors?.map((e) => e.path)).toContain(field);
});

// Bug 2 (src/middleware/database.ts with the auth cache): X-D1-Bookmark tells a live key from an unknown one.
it("a 401 has the same headers whether the key is unknown or live with another org's id", async () => {
  const other = await newTenant("Regression other");
  await call(t, "/api/v1/contacts"); // the key is now verified and cached
  const unknownKey = await call({ apiKey: `fsk_${"Z".repeat(40)}`, orgId: other.orgId }, "/api/v1/contacts");
  const liveKeyWrongOrg = await call({ apiKey: t.apiKey, orgId: other.orgId }, "/api/v1/contacts");
  expect([unknownKey.status, liveKeyWrongOrg.status]).toEqual([401, 401]);
  expect([...liveKeyWrongOrg.headers.keys()].sort()).toEqual([...unknownKey.headers.keys()].sort());
});

// Bug 3 (the MCP SDK's request parsing, under src/routes/mcp.ts): an argument named "__proto__" is dropped, not refused.
it("MCP create_lead with an argument named __proto__ → isError 422 unknown_field, nothing stored", async () => {
  const args = JSON.parse('{"firstName":"Proto","__proto__":{"orgId":"org_x"}}');
  const answer = toolAnswer(await mcpCall(t, "create_lead", args));
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
  const res = await mcpCall(t, tool, args);
  expect(res.body.error, res.text).toBeUndefined();
  const answer = toolAnswer(res);
  expect(answer.isError).toBe(true);
  expect([404, 422]).toContain(answer.status);
});

// The /mcp route reads the body itself (for the arguments as sent): a body that
// is not JSON must still reach the transport, which answers its parse error.
it("MCP with a body that is not JSON → the transport's JSON-RPC parse error, not a 500", async () => {
  const res = await call(t, "/mcp", {
    rawBody: "{not json",
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
  });
  const body: { error?: { code: number } } = res.body;
  expect(res.status).toBe(400);
  expect(body.error?.code).toBe(-32700);
});
