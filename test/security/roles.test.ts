// Key roles (docs/api.md, "Key roles"): the role table, written
// here from docs/api.md and independently of src/routes, checked against the
// operation samples (test/support/operations.ts) and against the roles each
// operation declares — a new operation fails here until it is given a row and
// declares its roles. Then every operation × every role × every transport
// (HTTP, an MCP tools/call, a Vapi tool call, a Retell custom function)
// answers the operation's own 200 or the 403 `forbidden` naming the key's
// role, and a forbidden write changes nothing. MCP's tools/list and the voice
// platforms' tool definitions show each role only what it may call. The 403
// comes after 401 and 404/405, before 429 and everything about the body, and
// says nothing about any record.
import { env } from "cloudflare:test";
import type { Vapi } from "@vapi-ai/server-sdk";
import type { PhoneCallResponse } from "retell-sdk/resources/call";
import { describe, expect, it } from "vitest";
import type { KeyRole } from "../../drizzle/schema";
import { OPERATIONS as DECLARED } from "../../src/routes";
import type { ReadResponse } from "../support/http";
import { mcpCall, mcpList, toolAnswer } from "../support/mcp";
import {
  type Fixture,
  fixture,
  httpRequest,
  OPERATIONS,
  type Operation,
  PHONE,
  TOOLS,
  toolArguments,
} from "../support/operations";
import { expectProblem, isProblem } from "../support/problem";
import { call } from "../support/request";
import { newTenant, type Tenant, withRole } from "../support/tenants";

const ROLES = ["office", "agent", "read"] as const satisfies readonly KeyRole[];
type Role = (typeof ROLES)[number];
const ALL: readonly Role[] = ["office", "agent", "read"];
const OFFICE_AGENT: readonly Role[] = ["office", "agent"];
const OFFICE_READ: readonly Role[] = ["office", "read"];
const OFFICE: readonly Role[] = ["office"];

/**
 * The role table of docs/api.md ("Key roles"), by MCP tool: `office` calls everything;
 * `agent` the voice agent's operations; `read` every operation that changes
 * nothing (the GETs and the three reads sent as POST).
 */
const TABLE: Record<string, readonly Role[]> = {
  create_lead: OFFICE_AGENT,
  create_contact: OFFICE,
  list_contacts: OFFICE_READ,
  get_account: OFFICE_READ,
  get_call_context: ALL,
  find_available_appointments: ALL,
  check_booking_availability: ALL,
  create_incident: OFFICE_AGENT,
  hold_slot: OFFICE_AGENT,
  release_hold: OFFICE_AGENT,
  list_services: ALL,
  find_caller: ALL,
  get_incident: ALL,
  list_incidents: ALL,
  cancel_incident: OFFICE_AGENT,
  reschedule_incident: OFFICE_AGENT,
  close_incident: OFFICE,
  create_plan: OFFICE_AGENT,
  get_plan: ALL,
  list_plans: ALL,
  cancel_plan: OFFICE_AGENT,
  list_events: OFFICE_READ,
  get_board: OFFICE_READ,
};

const may = (role: Role, tool: string) => TABLE[tool]!.includes(role);
const toolsOf = (role: Role) =>
  Object.keys(TABLE)
    .filter((tool) => may(role, tool))
    .sort();
/** The agent's tools a key of `role` may call: what the voice platforms' definitions list for it. */
const agentToolsOf = (role: Role) => toolsOf("agent").filter((tool) => may(role, tool));

const VAPI = "/api/v1/integrations/vapi/tool-calls";
const RETELL = (tool: string) => `/api/v1/integrations/retell/${tool}`;
const DEFINITIONS = (platform: string) => `/api/v1/integrations/${platform}/tools`;
const PLATFORMS = ["vapi", "retell", "elevenlabs", "openai"] as const;
const TRANSPORTS = ["http", "mcp", "vapi", "retell"] as const;
type Transport = (typeof TRANSPORTS)[number];

let vapiIds = 0;
/** Vapi's tool-calls message as its SDK types it, from a call whose customer is `caller`. */
function vapiMessage(calls: { name: string; args: Record<string, unknown> }[], caller = PHONE) {
  const now = new Date().toISOString();
  const vapiCall: Vapi.Call = { id: `vapi-call-${++vapiIds}`, orgId: "vapi-org", createdAt: now, updatedAt: now };
  vapiCall.customer = { number: caller };
  const message: Vapi.ServerMessageToolCalls = {
    type: "tool-calls",
    call: vapiCall,
    toolCallList: calls.map(({ name, args }, i) => ({
      id: `tc_${vapiIds}_${i}`,
      type: "function",
      function: { name, arguments: JSON.stringify(args) },
    })),
    toolWithToolCallList: [],
    timestamp: Date.now(),
  };
  return { message };
}

/** Retell's custom-function request, from an inbound call of `caller`. */
function retellBody(name: string, args: unknown, caller = PHONE) {
  const retellCall: PhoneCallResponse = {
    agent_id: "agent_roles",
    agent_version: 1,
    call_id: "call_roles",
    call_status: "ongoing",
    call_type: "phone_call",
    direction: "inbound",
    from_number: caller,
    to_number: "+12125550100",
  };
  return { name, call: retellCall, args };
}

type VapiResult = { toolCallId: string; name: string; result?: string; error?: string };

/** One operation's answer, whatever carried it: its status and JSON body. */
interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
  body: any;
  text: string;
  /** The carrying response (HTTP and Retell: the answer itself). */
  res: ReadResponse;
}

/** The caller an agent key reports over HTTP and MCP (the platforms' envelopes always carry it). */
const callerHeaders = (role: Role): Record<string, string> => (role === "agent" ? { "X-Caller-Phone": PHONE } : {});

/** Calls `op` on fixture `f` with `key` (of `role`) over `transport`. */
async function perform(transport: Transport, op: Operation, f: Fixture, key: Tenant, role: Role): Promise<Answer> {
  switch (transport) {
    case "http": {
      const { path, body } = httpRequest(op, f);
      const res = await call(key, path, { body, headers: callerHeaders(role) });
      return { status: res.status, body: res.body, text: res.text, res };
    }
    case "mcp": {
      const res = await mcpCall(key, op.tool, toolArguments(op, f), { headers: callerHeaders(role) });
      expect(res.status, res.text).toBe(200);
      const answer = toolAnswer(res);
      return { status: answer.status, body: answer.body, text: answer.text, res };
    }
    case "vapi": {
      const res = await call(key, VAPI, { body: vapiMessage([{ name: op.tool, args: toolArguments(op, f) }]) });
      expect(res.status, res.text).toBe(200);
      const results: VapiResult[] = res.body.results;
      expect(results).toHaveLength(1);
      const [one] = results;
      expect(one).toMatchObject({ toolCallId: expect.any(String), name: op.tool });
      // Exactly one of result and error.
      expect((one!.result === undefined) !== (one!.error === undefined), JSON.stringify(one)).toBe(true);
      const text = one!.result ?? one!.error!;
      const body = JSON.parse(text);
      return { status: one!.result !== undefined ? 200 : body.status, body, text, res };
    }
    case "retell": {
      const res = await call(key, RETELL(op.tool), { body: retellBody(op.tool, toolArguments(op, f)) });
      return { status: res.status, body: res.body, text: res.text, res };
    }
  }
}

/** What a change could have touched: the org's rows and events, the fixture's incident and hold. */
async function stateOf(f: Fixture): Promise<unknown> {
  const counts = await env.DB.prepare(
    `SELECT (SELECT count(*) FROM leads WHERE org_id = ?1) AS leads,
            (SELECT count(*) FROM contacts WHERE org_id = ?1) AS contacts,
            (SELECT count(*) FROM incidents WHERE org_id = ?1) AS incidents,
            (SELECT count(*) FROM holds WHERE org_id = ?1) AS holds,
            (SELECT count(*) FROM events WHERE org_id = ?1) AS events`,
  )
    .bind(f.tenant.orgId)
    .first();
  const incident = await env.DB.prepare("SELECT status, starts_at, updated_at FROM incidents WHERE id = ?")
    .bind(f.incidentId)
    .first();
  const hold = await env.DB.prepare("SELECT ended_at, expires_at FROM holds WHERE id = ?").bind(f.holdId).first();
  return { counts, incident, hold };
}

/** `key` of `role` in the fixture's org (the fixture's own key is an office key). */
const keyOf = (f: Fixture, role: Role): Promise<Tenant> =>
  role === "office" ? Promise.resolve(f.tenant) : withRole(f.tenant, role);

/** The 403 of a key of `role`, as a problem document (the operation's own answer over MCP and Vapi). */
function expectForbidden(transport: Transport, answer: Answer, role: Role) {
  expect(answer.status, `${transport}: ${answer.text}`).toBe(403);
  if (transport === "http" || transport === "retell") expectProblem(answer.res, 403, "forbidden");
  expect(isProblem(answer.body), answer.text).toBe(true);
  expect(answer.body).toMatchObject({ status: 403, code: "forbidden", type: "/problems/forbidden", role });
}

const isWrite = (op: Operation) => op.writes !== undefined || op.changes !== undefined;

describe("the role table", () => {
  it("has a row for every sampled operation, and no other", () => {
    expect(Object.keys(TABLE).sort()).toEqual(TOOLS);
  });

  it("is what each operation declares (src/routes): a new operation must declare its roles", () => {
    expect(DECLARED.map((op) => op.tool).sort()).toEqual(Object.keys(TABLE).sort());
    for (const op of DECLARED) expect([...op.roles].sort(), op.tool).toEqual([...TABLE[op.tool]!].sort());
  });

  it("follows the role table: office calls everything, read exactly what changes nothing, agent its seventeen", () => {
    for (const op of OPERATIONS) {
      expect(may("office", op.tool), op.tool).toBe(true);
      expect(may("read", op.tool), op.tool).toBe(!isWrite(op));
    }
    expect(toolsOf("agent")).toEqual(
      [
        "get_call_context",
        "find_caller",
        "list_services",
        "find_available_appointments",
        "check_booking_availability",
        "hold_slot",
        "release_hold",
        "create_incident",
        "create_lead",
        "get_incident",
        "list_incidents",
        "cancel_incident",
        "reschedule_incident",
        "create_plan",
        "get_plan",
        "list_plans",
        "cancel_plan",
      ].sort(),
    );
  });
});

describe.each(ROLES)("a key of role %s", (role) => {
  it.each(OPERATIONS.map((op) => [op.tool, op] as const))(
    "%s: 200 or 403 as the table says, over HTTP, MCP, Vapi and Retell",
    async (_tool, op) => {
      const allowed = may(role, op.tool);
      // A write gets a fixture per transport (a cancel happens once); a read shares one.
      const fixtures = isWrite(op)
        ? await Promise.all(TRANSPORTS.map(() => fixture(op)))
        : Array<Fixture>(TRANSPORTS.length).fill(await fixture(op));
      const keys = await Promise.all(fixtures.map((f) => keyOf(f, role)));
      for (const [i, transport] of TRANSPORTS.entries()) {
        const f = fixtures[i]!;
        const before = allowed || !isWrite(op) ? undefined : await stateOf(f);
        const answer = await perform(transport, op, f, keys[i]!, role);
        if (allowed) {
          expect(answer.status, `${transport}: ${answer.text}`).toBe(200);
          expect(isProblem(answer.body), `${transport}: ${answer.text}`).toBe(false);
        } else {
          expectForbidden(transport, answer, role);
          // Nothing changed.
          if (before !== undefined) expect(await stateOf(f), transport).toEqual(before);
        }
      }
    },
  );
});

describe("what each role is shown", () => {
  it("MCP tools/list lists exactly the tools of the key's role", async () => {
    const office = await newTenant("Roles tools/list");
    for (const role of ROLES) {
      const key = role === "office" ? office : await withRole(office, role);
      const res = await mcpList(key);
      expect(res.status, res.text).toBe(200);
      const names = res.body.result.tools.map((tool: { name: string }) => tool.name).sort();
      expect(names, role).toEqual(toolsOf(role));
    }
  });

  it("every role may ask each platform's tool definitions: the agent's tools that role may call", async () => {
    const office = await newTenant("Roles definitions");
    expect(agentToolsOf("read")).toEqual(
      [
        "check_booking_availability",
        "find_available_appointments",
        "find_caller",
        "get_call_context",
        "get_incident",
        "list_incidents",
        "list_services",
        "get_plan",
        "list_plans",
      ].sort(),
    );
    for (const role of ROLES) {
      const key = role === "office" ? office : await withRole(office, role);
      for (const platform of PLATFORMS) {
        const res = await call(key, DEFINITIONS(platform));
        expect(res.status, `${role} ${platform}: ${res.text}`).toBe(200);
        const names = res.body
          .map((tool: { name?: string; function?: { name: string } }) => tool.function?.name ?? tool.name)
          .sort();
        expect(names, `${role} ${platform}`).toEqual(agentToolsOf(role));
      }
    }
  });
});

describe("a Vapi message mixing allowed and forbidden tools", () => {
  it("answers each call on its own: the forbidden one is that call's error, the others run", async () => {
    const op = OPERATIONS.find((o) => o.tool === "create_lead")!;
    const f = await fixture(op);
    const read = await withRole(f.tenant, "read");
    const res = await call(read, VAPI, {
      body: vapiMessage([
        { name: "get_call_context", args: {} },
        { name: "create_lead", args: { firstName: "Fay" } },
        { name: "create_contact", args: { firstName: "Col" } },
        { name: "list_services", args: {} },
      ]),
    });
    expect(res.status, res.text).toBe(200);
    const results: VapiResult[] = res.body.results;
    expect(results.map((r) => r.name)).toEqual(["get_call_context", "create_lead", "create_contact", "list_services"]);
    expect(results.map((r) => (r.error === undefined ? 200 : JSON.parse(r.error).status))).toEqual([
      200, 403, 403, 200,
    ]);
    expect(JSON.parse(results[1]!.error!)).toMatchObject({ code: "forbidden", role: "read" });
    expect(
      await env.DB.prepare("SELECT count(*) AS n FROM leads WHERE org_id = ?").bind(f.tenant.orgId).first("n"),
    ).toBe(0);
  });
});

/** A RATE_LIMITER that refuses every call and counts them. */
function refusing() {
  const calls: unknown[] = [];
  const binding: RateLimit = {
    limit: async (options) => {
      calls.push(options);
      return { success: false };
    },
  };
  return { calls, binding };
}

describe("the order of checks: 401, then 404/405, then 403, then 429 and the body", () => {
  it("the check can fail: a read key's create-contact is 403 and writes nothing, an office key's is 200", async () => {
    const op = OPERATIONS.find((o) => o.tool === "create_contact")!;
    const f = await fixture(op);
    const read = await withRole(f.tenant, "read");
    const { path, body } = httpRequest(op, f);
    const refused = await call(read, path, { body });
    expectProblem(refused, 403, "forbidden");
    expect(refused.body.role).toBe("read");
    expect(await stateOf(f)).toMatchObject({ counts: { contacts: 0, events: 0 } });
    expect((await call(f.tenant, path, { body })).status).toBe(200);
    expect(await stateOf(f)).toMatchObject({ counts: { contacts: 1, events: 1 } });
  });

  it("a forbidden write with an invalid body, malformed JSON or another media type is 403, not 422, 400 or 415", async () => {
    const tenant = await newTenant("Roles body order");
    const read = await withRole(tenant, "read");
    const agent = await withRole(tenant, "agent");
    const forbiddenWrites = OPERATIONS.filter((op) => !may("read", op.tool));
    expect(forbiddenWrites.length).toBeGreaterThan(0);
    const f: Fixture = {
      tenant,
      accountId: "acct_nope",
      incidentId: "inc_nope",
      holdId: "hold_nope",
      planId: "plan_nope",
    };
    for (const op of forbiddenWrites) {
      const { path } = httpRequest(op, f);
      const invalid = await call(read, path, { body: { dateTime: 7, firstName: [], unknownField: true } });
      expectProblem(invalid, 403, "forbidden");
      const malformed = await call(read, path, { rawBody: "{", headers: { "Content-Type": "application/json" } });
      expectProblem(malformed, 403, "forbidden");
      const text = await call(read, path, { rawBody: "hello", headers: { "Content-Type": "text/plain" } });
      expectProblem(text, 403, "forbidden");
      const mcp = toolAnswer(await mcpCall(read, op.tool, { unknownField: true }));
      expect(mcp.isError).toBe(true);
      expect(mcp.body).toMatchObject({ status: 403, code: "forbidden", role: "read" });
      const retell = await call(read, RETELL(op.tool), { body: retellBody(op.tool, { unknownField: true }) });
      expectProblem(retell, 403, "forbidden");
      const vapi = await call(read, VAPI, { body: vapiMessage([{ name: op.tool, args: { unknownField: true } }]) });
      expect(JSON.parse(vapi.body.results[0].error)).toMatchObject({ status: 403, code: "forbidden", role: "read" });
    }
    // An agent key's office-only write, likewise.
    const contact = await call(agent, "/api/v1/contacts", { body: { nope: 1 } });
    expect(expectProblem(contact, 403, "forbidden").role).toBe("agent");
    // A query the operation would refuse: still the 403 first.
    const events = await call(agent, "/api/v1/events?limit=nope&x=1");
    expect(expectProblem(events, 403, "forbidden").role).toBe("agent");
  });

  it("without valid credentials a forbidden call is 401, not 403", async () => {
    const tenant = await newTenant("Roles 401");
    const other = await newTenant("Roles 401 other");
    const read = await withRole(tenant, "read");
    const body = { firstName: "Col" };
    expectProblem(await call(null, "/api/v1/contacts", { body }), 401, "unauthenticated");
    expectProblem(await call({ ...read, orgId: other.orgId }, "/api/v1/contacts", { body }), 401, "unauthenticated");
    expectProblem(
      await call({ ...read, apiKey: `fsk_${"0".repeat(40)}` }, "/api/v1/contacts", { body }),
      401,
      "unauthenticated",
    );
    expectProblem(
      await call(null, RETELL("create_contact"), { body: retellBody("create_contact", body) }),
      401,
      "unauthenticated",
    );
    expectProblem(await mcpCall(null, "create_contact", body), 401, "unauthenticated");
  });

  it("an unknown path is 404 and a wrong method 405, not 403", async () => {
    const tenant = await newTenant("Roles 404");
    const read = await withRole(tenant, "read");
    const agent = await withRole(tenant, "agent");
    expectProblem(await call(read, "/api/v1/no-such-thing", { body: {} }), 404, "not_found");
    expectProblem(await call(read, RETELL("drop_tables"), { body: retellBody("drop_tables", {}) }), 404, "not_found");
    // create-lead is POST only; a read key may not call it, but the method is what is wrong first.
    const wrongMethod = await call(read, "/api/v1/leads");
    expectProblem(wrongMethod, 405, "method_not_allowed");
    expect(wrongMethod.headers.get("Allow")).toBe("POST");
    expectProblem(await call(agent, "/api/v1/contacts", { method: "DELETE" }), 405, "method_not_allowed");
    expectProblem(await call(read, RETELL("create_contact")), 405, "method_not_allowed");
  });

  it("403 comes before 429: a forbidden call with a refusing limiter is 403 and the limiter is not asked", async () => {
    const tenant = await newTenant("Roles 429");
    const read = await withRole(tenant, "read");
    const agent = await withRole(tenant, "agent");
    const limiter = refusing();
    const bindings = { RATE_LIMITER: limiter.binding };
    expectProblem(await call(read, "/api/v1/contacts", { body: { firstName: "Col" }, bindings }), 403, "forbidden");
    expectProblem(await call(agent, "/api/v1/events", { bindings }), 403, "forbidden");
    expectProblem(
      await call(read, RETELL("create_lead"), { body: retellBody("create_lead", { firstName: "Fay" }), bindings }),
      403,
      "forbidden",
    );
    expect(limiter.calls).toEqual([]);
    // The limiter does refuse: a call the role allows is 429.
    expectProblem(await call(read, "/api/v1/contacts", { bindings }), 429, "rate_limited");
    expectProblem(
      await call(agent, RETELL("create_lead"), { body: retellBody("create_lead", { firstName: "Fay" }), bindings }),
      429,
      "rate_limited",
    );
    expect(limiter.calls).toHaveLength(2);
  });
});

describe("a 403 says nothing about any record", () => {
  /** A problem's text without its requestId (the one part that differs by request). */
  const withoutRequestId = (text: string) => {
    const { requestId, ...rest } = JSON.parse(text);
    expect(requestId).toEqual(expect.any(String));
    return JSON.stringify(rest);
  };

  it("a read key's cancel of a real incident, of an unknown id and of a malformed id: the same bytes but requestId", async () => {
    const op = OPERATIONS.find((o) => o.tool === "cancel_incident")!;
    const f = await fixture(op);
    const read = await withRole(f.tenant, "read");
    const unknownId = `inc_${"0".repeat(26)}`;
    const ids = [f.incidentId, unknownId, "not-an-id"];
    // Warm the key first: every compared answer comes from a verified key.
    expect((await call(read, "/api/v1/services")).status).toBe(200);
    const answers = [];
    for (const id of ids) {
      const res = await call(read, `/api/v1/incidents/${id}/cancel`, { body: { reason: "Moved away" } });
      expectProblem(res, 403, "forbidden");
      answers.push(res);
    }
    const [real, unknown, malformed] = answers.map((res) => withoutRequestId(res.text));
    expect(unknown).toBe(real);
    expect(malformed).toBe(real);
    const headerNames = answers.map((res) => [...res.headers.keys()].sort().join(","));
    expect(new Set(headerNames).size).toBe(1);
    // Over MCP and Retell too.
    const overMcp = [];
    const overRetell = [];
    for (const id of ids) {
      overMcp.push(withoutRequestId(toolAnswer(await mcpCall(read, "cancel_incident", { id, reason: "x" })).text));
      overRetell.push(
        withoutRequestId(
          (await call(read, RETELL("cancel_incident"), { body: retellBody("cancel_incident", { id, reason: "x" }) }))
            .text,
        ),
      );
    }
    expect(new Set(overMcp).size).toBe(1);
    expect(new Set(overRetell).size).toBe(1);
    expect(overMcp[0]).toBe(real);
    // The incident is still scheduled.
    expect(await stateOf(f)).toMatchObject({ incident: { status: "scheduled" }, counts: { events: 0 } });
  });
});
