// The voice platforms' shapes (docs/voice-agents.md) through the real worker:
// the tool definitions served for each platform, Vapi's tool-calls message
// and Retell's custom-function call, each dispatched as /mcp dispatches (the
// same answers, validation and idempotency as HTTP), and the idempotencyKey
// argument of write tools. Requests are built from the platforms' own SDK
// types.

import { env } from "cloudflare:test";
import type { Vapi } from "@vapi-ai/server-sdk";
import type { PhoneCallResponse } from "retell-sdk/resources/call";
import { describe, expect, it, vi } from "vitest";
import { d1Error, everyMatching, wrapD1 } from "../../support/d1";
import { mcpCall, mcpList, toolAnswer } from "../../support/mcp";
import { call } from "../../support/request";
import { openTenant, type Tenant } from "../../support/tenants";
import { daysAhead, iso } from "../../support/time";

const TOOLS = (platform: string) => `/api/v1/integrations/${platform}/tools`;
const VAPI = "/api/v1/integrations/vapi/tool-calls";
const RETELL = (tool: string) => `/api/v1/integrations/retell/${tool}`;

let callIds = 0;
/** Vapi's server message for function tool calls, as its SDK types it (arguments as JSON text). */
function vapiMessage(calls: { name: string; args: Record<string, unknown> | string }[]): {
  message: Vapi.ServerMessageToolCalls;
} {
  const toolCallList: Vapi.ToolCall[] = calls.map(({ name, args }) => ({
    id: `call_${++callIds}`,
    type: "function",
    function: { name, arguments: typeof args === "string" ? args : JSON.stringify(args) },
  }));
  return { message: { type: "tool-calls", toolCallList, toolWithToolCallList: [], timestamp: Date.now() } };
}

/** Retell's custom-function request: the function's name, the call, its arguments. */
function retellBody(name: string, args: unknown) {
  const retellCall: PhoneCallResponse = {
    agent_id: "agent_test",
    agent_version: 1,
    call_id: "call_retell_test",
    call_status: "ongoing",
    call_type: "phone_call",
    direction: "inbound",
    from_number: "+19175550199",
    to_number: "+12125550100",
  };
  return { name, call: retellCall, args };
}

type VapiResult = { toolCallId: string; name: string; result?: string; error?: string };
const results = (res: { body: { results: VapiResult[] } }) => res.body.results;

const book = (_t: Tenant, at: number, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  dateTime: iso(at),
  clientName: "Pat Caller",
  insectName: "ants",
  ...extra,
});

describe("GET /api/v1/integrations/{platform}/tools", () => {
  it("serves each platform's definitions for the caller's org at the origin called, with the key placeholder", async () => {
    const t = await openTenant();
    for (const platform of ["vapi", "retell", "elevenlabs", "openai"]) {
      const res = await call(t, TOOLS(platform));
      expect(res.status, res.text).toBe(200);
      expect(res.body).toHaveLength(17);
      if (platform !== "openai") {
        expect(res.text).toContain(`"X-ORG-ID":"${t.orgId}"`);
        expect(res.text).toContain("{{FIELD_SERVICE_API_KEY}}");
        expect(res.text).toContain("https://api.test/api/v1/");
      }
      expect(res.text).not.toContain(t.apiKey);
    }
    expect((await call(t, TOOLS("bland"))).status).toBe(404);
    expect((await call(t, `${TOOLS("vapi")}?x=1`)).status).toBe(422);
    expect((await call(null, TOOLS("vapi"))).status).toBe(401);
  });
});

describe("Vapi tool-calls", () => {
  it("runs each call in order as MCP does: results by toolCallId, failures and unknown tools as errors", async () => {
    const t = await openTenant(undefined, { capacity: 1 });
    const at = daysAhead(2, 10);
    const res = await call(t, VAPI, {
      body: vapiMessage([
        { name: "check_booking_availability", args: { dateTime: iso(at) } },
        { name: "create_incident", args: book(t, at) },
        { name: "create_incident", args: book(t, at) },
        { name: "no_such_tool", args: {} },
        { name: "find_caller", args: "not json" },
      ]),
    });
    expect(res.status, res.text).toBe(200);
    const [checked, booked, refused, unknown, broken] = results(res);
    expect(JSON.parse(checked!.result!)).toMatchObject({ available: true });
    const incident = JSON.parse(booked!.result!);
    expect(incident).toMatchObject({ status: "scheduled", dateTime: iso(at) });
    expect(JSON.parse(refused!.error!)).toMatchObject({
      status: 409,
      code: "slot_unavailable",
      reason: "fully_booked",
    });
    expect(JSON.parse(unknown!.error!)).toMatchObject({ status: 404, code: "not_found" });
    expect(JSON.parse(broken!.error!)).toMatchObject({ status: 422, code: "validation_failed" });
    expect(results(res).map((r) => r.name)).toEqual([
      "check_booking_availability",
      "create_incident",
      "create_incident",
      "no_such_tool",
      "find_caller",
    ]);
    // The same answer as HTTP gives for the same incident.
    expect((await call(t, `/api/v1/incidents/${incident.id}`)).body).toEqual(
      (({ appointment: { remaining: _, ...appointment }, ...rest }) => ({ ...rest, appointment }))(incident),
    );
  });

  it("a message that is not Vapi's tool-calls is 422; not JSON is 400; no key is 401", async () => {
    const t = await openTenant();
    expect((await call(t, VAPI, { body: { message: { type: "status-update" } } })).status).toBe(422);
    expect((await call(t, VAPI, { rawBody: "{", headers: { "Content-Type": "application/json" } })).status).toBe(400);
    expect((await call(null, VAPI, { body: vapiMessage([]) })).status).toBe(401);
  });

  it("a retried booking with the same idempotencyKey over a 1-place slot replays the first answer, not fully_booked", async () => {
    const t = await openTenant(undefined, { capacity: 1 });
    const at = daysAhead(2, 11);
    const args = book(t, at, { idempotencyKey: "vapi-call-123-booking" });
    const first = results(await call(t, VAPI, { body: vapiMessage([{ name: "create_incident", args }]) }))[0]!;
    const retry = results(await call(t, VAPI, { body: vapiMessage([{ name: "create_incident", args }]) }))[0]!;
    expect(retry.error, retry.error).toBeUndefined();
    expect(retry.result).toBe(first.result);
    // Without the key, the same booking is refused: the slot is taken.
    const { idempotencyKey: _, ...plain } = args;
    const other = results(await call(t, VAPI, { body: vapiMessage([{ name: "create_incident", args: plain }]) }))[0]!;
    expect(JSON.parse(other.error!)).toMatchObject({ code: "slot_unavailable" });
    expect((await call(t, "/api/v1/incidents")).body.data).toHaveLength(1);
    // A malformed key is refused for that call, naming the argument.
    const bad = results(
      await call(t, VAPI, { body: vapiMessage([{ name: "create_incident", args: { ...args, idempotencyKey: 7 } }]) }),
    )[0]!;
    expect(JSON.parse(bad.error!).errors).toEqual([
      { path: "idempotencyKey", code: "invalid_format", message: expect.any(String) },
    ]);
  });
});

describe("Retell custom functions", () => {
  it("answers with the operation's own status and body; unknown tool 404; a name that differs 422; strict arguments", async () => {
    const t = await openTenant(undefined, { capacity: 1 });
    const at = daysAhead(2, 12);
    const held = await call(t, RETELL("hold_slot"), { body: retellBody("hold_slot", { dateTime: iso(at) }) });
    expect(held.status, held.text).toBe(200);
    expect(held.body).toMatchObject({ holdId: expect.stringMatching(/^hold_/), slot: { remaining: 0 } });
    const booked = await call(t, RETELL("create_incident"), {
      body: retellBody("create_incident", book(t, at, { holdId: held.body.holdId })),
    });
    expect(booked.status, booked.text).toBe(200);
    expect(booked.body.holdExpired).toBe(false);
    const again = await call(t, RETELL("create_incident"), { body: retellBody("create_incident", book(t, at)) });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("slot_unavailable");
    expect((await call(t, RETELL("drop_tables"), { body: retellBody("drop_tables", {}) })).status).toBe(404);
    expect(
      (await call(t, RETELL("find_caller"), { body: retellBody("hold_slot", { phone: "+19175550199" }) })).status,
    ).toBe(422);
    const unknownField = await call(t, RETELL("find_caller"), {
      body: retellBody("find_caller", { phone: "1", x: 1 }),
    });
    expect(unknownField.status).toBe(422);
    expect(unknownField.body.errors[0]).toMatchObject({ path: "x", code: "unknown_field" });
    // GET tools take their arguments as the query.
    const incident = await call(t, RETELL("get_incident"), {
      body: retellBody("get_incident", { id: booked.body.id }),
    });
    expect(incident.body.id).toBe(booked.body.id);
  });
});

describe("idempotencyKey over MCP", () => {
  it("is that tool call's Idempotency-Key: a retried booking replays the first answer", async () => {
    const t = await openTenant(undefined, { capacity: 1 });
    const at = daysAhead(2, 13);
    const args = book(t, at, { idempotencyKey: "mcp-call-7" });
    const first = toolAnswer(await mcpCall(t, "create_incident", args));
    const retry = toolAnswer(await mcpCall(t, "create_incident", args));
    expect(first.isError).toBe(false);
    expect(retry.isError, retry.text).toBe(false);
    expect(retry.body).toEqual(first.body);
    // A read tool takes no idempotencyKey: the route refuses it as an unknown field.
    const read = toolAnswer(await mcpCall(t, "check_booking_availability", { dateTime: iso(at), idempotencyKey: "k" }));
    expect(read.status).toBe(422);
  });
});

describe("rate limit: one request, bounded work", () => {
  /** A RATE_LIMITER that allows the first `allowed` calls, refuses the rest, and counts them all. */
  const limiter = (allowed: number) => {
    const calls: unknown[] = [];
    const binding: RateLimit = {
      limit: async (options) => {
        calls.push(options);
        return { success: calls.length <= allowed };
      },
    };
    return { calls, binding };
  };

  it("every tool call counts once, not the request that carries them", async () => {
    const t = await openTenant(undefined, { capacity: 3 });
    const at = daysAhead(2, 14);
    const all = limiter(Number.POSITIVE_INFINITY);
    const message = vapiMessage([
      { name: "create_incident", args: book(t, at) },
      { name: "no_such_tool", args: {} },
      { name: "check_booking_availability", args: { dateTime: iso(at) } },
    ]);
    const res = await call(t, VAPI, { body: message, bindings: { RATE_LIMITER: all.binding } });
    expect(results(res).map((r) => r.error === undefined)).toEqual([true, false, true]);
    // Valid or not, each call counted once: three.
    expect(all.calls).toEqual([{ key: t.orgId }, { key: t.orgId }, { key: t.orgId }]);
    const retell = await call(t, RETELL("find_caller"), {
      body: retellBody("find_caller", { phone: "+19175550199" }),
      bindings: { RATE_LIMITER: all.binding },
    });
    expect(retell.status).toBe(200);
    expect(all.calls).toHaveLength(4);
    const batch = ["get_call_context", "list_services"].map((name, id) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name, arguments: {} },
    }));
    const mcp = await call(t, "/mcp", {
      body: batch,
      headers: { Accept: "application/json, text/event-stream" },
      bindings: { RATE_LIMITER: all.binding },
    });
    expect(mcp.status, mcp.text).toBe(200);
    expect(all.calls).toHaveLength(6);
    // A request with no tool call (tools/list) counts once.
    expect((await mcpList(t, { bindings: { RATE_LIMITER: all.binding } })).status).toBe(200);
    expect(all.calls).toHaveLength(7);
  });

  it("Vapi: the call over the limit and every later one are errors, not run; those before it ran", async () => {
    const t = await openTenant(undefined, { capacity: 3 });
    const at = daysAhead(2, 15);
    const two = limiter(2);
    const message = vapiMessage([
      { name: "create_incident", args: book(t, at) },
      { name: "create_incident", args: book(t, at) },
      { name: "create_incident", args: book(t, at) },
      { name: "check_booking_availability", args: { dateTime: iso(at) } },
    ]);
    const res = await call(t, VAPI, { body: message, bindings: { RATE_LIMITER: two.binding } });
    expect(res.status, res.text).toBe(200);
    const errors = results(res).map((r) => (r.error === undefined ? null : JSON.parse(r.error).code));
    expect(errors).toEqual([null, null, "rate_limited", "rate_limited"]);
    // The third was counted and refused; the fourth was not run, so not counted.
    expect(two.calls).toHaveLength(3);
    expect((await call(t, "/api/v1/incidents")).body.data).toHaveLength(2);
  });

  it("MCP and Retell: a call over the limit is the request's 429, and nothing runs", async () => {
    const t = await openTenant(undefined, { capacity: 3 });
    const at = daysAhead(2, 16);
    const none = limiter(0);
    const mcp = await mcpCall(t, "create_incident", book(t, at), { bindings: { RATE_LIMITER: none.binding } });
    expect(mcp.status).toBe(429);
    expect(mcp.headers.get("Retry-After")).toBe("60");
    const retell = await call(t, RETELL("create_incident"), {
      body: retellBody("create_incident", book(t, at)),
      bindings: { RATE_LIMITER: none.binding },
    });
    expect(retell.status).toBe(429);
    expect((await call(t, "/api/v1/incidents")).body.data).toHaveLength(0);
    const tools = await call(t, TOOLS("vapi"), { bindings: { RATE_LIMITER: none.binding } });
    expect(tools.status).toBe(429);
  });

  it("a Vapi message of more than 10 tool calls is 422 and runs none; of 10, all run", async () => {
    const t = await openTenant(undefined, { capacity: 20 });
    const at = daysAhead(2, 17);
    const all = limiter(Number.POSITIVE_INFINITY);
    const eleven = vapiMessage(Array.from({ length: 11 }, () => ({ name: "create_incident", args: book(t, at) })));
    const res = await call(t, VAPI, { body: eleven, bindings: { RATE_LIMITER: all.binding } });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([
      { path: "message.toolCallList", code: "too_big", message: expect.stringContaining("10") },
    ]);
    expect((await call(t, "/api/v1/incidents")).body.data).toHaveLength(0);
    // Counted once, as a request that carries no call it can run.
    expect(all.calls).toHaveLength(1);
    const ten = vapiMessage(Array.from({ length: 10 }, () => ({ name: "create_incident", args: book(t, at) })));
    const ok = await call(t, VAPI, { body: ten, bindings: { RATE_LIMITER: all.binding } });
    expect(results(ok).filter((r) => r.error === undefined)).toHaveLength(10);
    expect(all.calls).toHaveLength(11);
  });
});

describe("the log of a tool call", () => {
  it.each([
    ["mcp", "/mcp", { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "create_lead", arguments: {} } }],
    ["vapi", VAPI, vapiMessage([{ name: "create_lead", args: {} }])],
    ["retell", RETELL("create_lead"), retellBody("create_lead", {})],
  ])("%s: one line for the request, naming the cause of its call's 500", async (_platform, path, body) => {
    const t = await openTenant();
    const failing = wrapD1(env.DB, { fail: everyMatching(/^insert into "leads"/i), error: d1Error("D1_ERROR: a bug") });
    const logged = vi.spyOn(console, "log").mockImplementation(() => {});
    const res = await call(t, path, {
      body,
      headers: { Accept: "application/json, text/event-stream" },
      bindings: { DB: failing.db },
    });
    const lines = logged.mock.calls.map(([line]) => JSON.parse(String(line)));
    logged.mockRestore();
    expect(res.text).toMatch(/internal_error/);
    expect(lines).toEqual([expect.objectContaining({ requestId: expect.any(String), error: "Error: a bug" })]);
  });
});
