// Who made each change (docs/api.md, "Who made each change"):
// every event carries `actor` {keyId, role, channel, callId, callerPhone},
// written in the change's own batch. The key and its role; the channel the
// change came by (http, mcp, vapi, retell); the call id the platform reported
// (Vapi's message.call.id, Retell's call.call_id, else X-Call-Id when it is 1
// to 128 printable ASCII characters — otherwise none, never a 422); and the
// caller's number (the envelope's before X-Caller-Phone, normalised E.164, a
// withheld number none), recorded whatever the key's role. An agent key's
// booking without a phone is the caller's. Read through GET /api/v1/events
// and the events table.
import { env } from "cloudflare:test";
import type { Vapi } from "@vapi-ai/server-sdk";
import type { PhoneCallResponse } from "retell-sdk/resources/call";
import { describe, expect, it } from "vitest";
import { fixture, OPERATIONS, send, type Transport } from "../../support/operations";
import { expectProblem } from "../../support/problem";
import { call } from "../../support/request";
import { openTenant, type Tenant, withRole } from "../../support/tenants";
import { slotIn } from "../../support/time";

const EVENTS = "/api/v1/events?limit=200";
const CREATE = "/api/v1/ai-agent/create-incident";
const LEADS = "/api/v1/leads";
const VAPI = "/api/v1/integrations/vapi/tool-calls";
const RETELL = (tool: string) => `/api/v1/integrations/retell/${tool}`;
const MCP_ACCEPT = { Accept: "application/json, text/event-stream" };

/** The sampled operations that record an event. */
const EVENTFUL = OPERATIONS.filter((op) => (op.writes || op.changes) && !op.noEvent);

interface Actor {
  keyId: string | null;
  role: string | null;
  channel: string;
  callId: string | null;
  callerPhone: string | null;
}

// biome-ignore lint/suspicious/noExplicitAny: events are read as sent
type Event = { id: string; type: string; actor: Actor; data: any };

/** The org's events through GET /api/v1/events, read with `office` (an office key of the org). */
async function eventsOf(office: Tenant): Promise<Event[]> {
  const res = await call(office, EVENTS);
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/** The org's only event, checked against the stored one: the API serves the stored body. */
async function onlyEvent(office: Tenant): Promise<Event> {
  const events = await eventsOf(office);
  expect(events, JSON.stringify(events)).toHaveLength(1);
  const stored = await env.DB.prepare("SELECT body FROM events WHERE org_id = ? AND id = ?")
    .bind(office.orgId, events[0]!.id)
    .first<{ body: string }>();
  expect(JSON.parse(stored!.body)).toEqual(events[0]);
  return events[0]!;
}

/** Runs `action` and returns the events the org recorded meanwhile, as the events list shows them. */
async function recorded(office: Tenant, action: () => Promise<unknown>): Promise<Event[]> {
  const before = (await eventsOf(office)).length;
  await action();
  return (await eventsOf(office)).slice(before);
}

let hours = 0;
/** A create-incident body at a new hour (a day ahead or more) of an around-the-clock schedule. */
const booking = (extra: Record<string, unknown> = {}) => ({
  dateTime: slotIn(24 + hours++),
  clientName: "Ann Caller",
  insectName: "ants",
  ...extra,
});

const lead = (firstName = "Lee") => ({ firstName, email: `${firstName.toLowerCase()}@example.com` });

/** A tools/call over /mcp as `key`, with `headers`; the tool's result must not be an error. */
async function overMcp(key: Tenant, tool: string, args: Record<string, unknown>, headers: Record<string, string>) {
  const res = await call(key, "/mcp", {
    body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: tool, arguments: args } },
    headers: { ...MCP_ACCEPT, ...headers },
  });
  expect(res.status, res.text).toBe(200);
  expect(res.body.result.isError, res.text).toBeFalsy();
  return JSON.parse(res.body.result.content[0].text);
}

interface VapiEnvelope {
  /** message.call.id; no message.call at all when undefined. */
  callId?: string;
  /** message.call.customer.number; no customer on the call when undefined. */
  callCustomer?: string;
  /** message.customer.number; no customer on the message when undefined. */
  messageCustomer?: string;
}

/** Vapi's tool-calls message as its SDK types it, with the call and customers of `envelope`. */
function vapiMessage(tool: string, args: Record<string, unknown>, envelope: VapiEnvelope) {
  const now = new Date().toISOString();
  const message: Vapi.ServerMessageToolCalls = {
    type: "tool-calls",
    toolCallList: [{ id: "tc_1", type: "function", function: { name: tool, arguments: JSON.stringify(args) } }],
    toolWithToolCallList: [],
    timestamp: Date.now(),
  };
  if (envelope.callId !== undefined) {
    const vapiCall: Vapi.Call = { id: envelope.callId, orgId: "vapi-org", createdAt: now, updatedAt: now };
    if (envelope.callCustomer !== undefined) vapiCall.customer = { number: envelope.callCustomer };
    message.call = vapiCall;
  }
  if (envelope.messageCustomer !== undefined) message.customer = { number: envelope.messageCustomer };
  return { message };
}

/** One Vapi tool call as `key`; its result (which must not be an error), parsed. */
async function overVapi(
  key: Tenant,
  tool: string,
  args: Record<string, unknown>,
  envelope: VapiEnvelope,
  headers: Record<string, string> = {},
) {
  const res = await call(key, VAPI, { body: vapiMessage(tool, args, envelope), headers });
  expect(res.status, res.text).toBe(200);
  const [result] = res.body.results;
  expect(result.error, result.error).toBeUndefined();
  return JSON.parse(result.result);
}

/** Retell's custom-function request with its call object. */
function retellBody(name: string, args: unknown, retellCall: Partial<PhoneCallResponse>) {
  const full: PhoneCallResponse = {
    agent_id: "agent_actor",
    agent_version: 1,
    call_id: "call_retell_actor",
    call_status: "ongoing",
    call_type: "phone_call",
    direction: "inbound",
    from_number: "+19175550177",
    to_number: "+12125550100",
    ...retellCall,
  };
  return { name, call: full, args };
}

const officeActor = (t: Tenant, channel: string, call: Partial<Actor> = {}): Actor => ({
  keyId: t.keyId,
  role: "office",
  channel,
  callId: null,
  callerPhone: null,
  ...call,
});

describe("a change by an office key, with no call reported", () => {
  it.each(
    EVENTFUL.flatMap((op) => (["http", "mcp"] as Transport[]).map((transport) => [op.tool, transport, op] as const)),
  )("%s over %s: actor is the key, office, the channel, no call id, no caller", async (_tool, transport, op) => {
    const f = await fixture(op);
    const res = await send(env.DB, transport, op, f);
    expect(res.status, res.text).toBe(200);
    if (transport === "mcp") expect(res.body.result.isError, res.text).toBeFalsy();
    // create-plan records its first visit's event and its plan's: each with the same actor.
    const events = (op.events ?? 1) === 1 ? [await onlyEvent(f.tenant)] : await eventsOf(f.tenant);
    expect(events).toHaveLength(op.events ?? 1);
    for (const event of events) expect(event.actor).toStrictEqual(officeActor(f.tenant, transport));
  });

  it("the actor names the key that made the change, among the org's keys", async () => {
    const t = await openTenant("Actor keys");
    const second = await withRole(t, "office");
    const [byFirst, bySecond] = [
      await recorded(t, () => call(t, LEADS, { body: lead("First") })),
      await recorded(t, () => call(second, LEADS, { body: lead("Second") })),
    ];
    expect(byFirst.map((e) => e.actor.keyId)).toEqual([t.keyId]);
    expect(bySecond.map((e) => e.actor.keyId)).toEqual([second.keyId]);
    expect(second.keyId).not.toBe(t.keyId);
  });
});

describe("the call an HTTP request reports (X-Call-Id, X-Caller-Phone)", () => {
  it("an office key's call id and caller are recorded, the number normalised in the org's country", async () => {
    const t = await openTenant("Actor headers");
    const events = await recorded(t, async () => {
      const res = await call(t, LEADS, {
        body: lead(),
        headers: { "X-Call-Id": "conv_8f2a-11", "X-Caller-Phone": "(917) 555-0199" },
      });
      expect(res.status, res.text).toBe(200);
    });
    expect(events.map((e) => e.actor)).toStrictEqual([
      officeActor(t, "http", { callId: "conv_8f2a-11", callerPhone: "+19175550199" }),
    ]);
  });

  it("an office key is not bound: its booking without a phone stays without one, the caller only recorded", async () => {
    const t = await openTenant("Actor office booking");
    const res = await call(t, CREATE, { body: booking(), headers: { "X-Caller-Phone": "+1 917 555 0199" } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.phone).toBeNull();
    const event = await onlyEvent(t);
    expect(event.actor.callerPhone).toBe("+19175550199");
    expect(event.data.phone).toBeNull();
  });

  it.each([
    ["128 printable ASCII characters", `${"c".repeat(127)}~`, `${"c".repeat(127)}~`],
    ["one printable character", "x", "x"],
    ["spaces and punctuation inside", "call 42 / #7", "call 42 / #7"],
    ["129 characters", "c".repeat(129), null],
    ["a tab inside", "call\tid", null],
    ["a DEL inside", "call\x7fid", null],
    ["a non-ASCII character inside", "call\xe9", null],
    ["an empty value", "", null],
  ] as const)("an X-Call-Id of %s: callId %j, and the change is made (never a 422)", async (_name, sent, callId) => {
    const t = await openTenant("Actor call ids");
    const events = await recorded(t, async () => {
      const res = await call(t, LEADS, { body: lead(), headers: { "X-Call-Id": sent } });
      expect(res.status, res.text).toBe(200);
    });
    expect(events.map((e) => e.actor)).toStrictEqual([officeActor(t, "http", { callId })]);
  });

  it.each([
    ["anonymous", "anonymous"],
    ["a withheld number", "Restricted"],
    ["too short", "12"],
    ["not a number of the org's country", "555-0199"],
    ["very long", `+1917555${"0".repeat(60)}`],
  ])("an X-Caller-Phone %s is no caller: null, and the change is made", async (_name, sent) => {
    const t = await openTenant("Actor no caller");
    const events = await recorded(t, async () => {
      const res = await call(t, LEADS, { body: lead(), headers: { "X-Caller-Phone": sent, "X-Call-Id": "c-1" } });
      expect(res.status, res.text).toBe(200);
    });
    expect(events.map((e) => e.actor)).toStrictEqual([officeActor(t, "http", { callId: "c-1" })]);
  });
});

describe("a change by an agent key, over each channel", () => {
  it("HTTP: role agent, the agent key's id, channel http, the headers' call", async () => {
    const t = await openTenant("Actor agent http");
    const agent = await withRole(t, "agent");
    const events = await recorded(t, async () => {
      const res = await call(agent, LEADS, {
        body: lead(),
        headers: { "X-Call-Id": "el_conv_1", "X-Caller-Phone": "917.555.0199" },
      });
      expect(res.status, res.text).toBe(200);
    });
    expect(events.map((e) => e.actor)).toStrictEqual([
      { keyId: agent.keyId, role: "agent", channel: "http", callId: "el_conv_1", callerPhone: "+19175550199" },
    ]);
  });

  it("MCP: channel mcp, with the request's X-Call-Id and X-Caller-Phone", async () => {
    const t = await openTenant("Actor agent mcp");
    const agent = await withRole(t, "agent");
    const headers = { "X-Call-Id": "mcp-call-9", "X-Caller-Phone": "(917) 555-0199" };
    const events = await recorded(t, async () => {
      await overMcp(agent, "create_lead", lead(), headers);
      await overMcp(agent, "create_incident", booking(), headers);
    });
    expect(events.map((e) => e.type)).toEqual(["lead.created", "incident.created"]);
    for (const event of events)
      expect(event.actor).toStrictEqual({
        keyId: agent.keyId,
        role: "agent",
        channel: "mcp",
        callId: "mcp-call-9",
        callerPhone: "+19175550199",
      });
    // An office key over MCP reports the same call, as office.
    const office = await recorded(t, () => overMcp(t, "create_lead", lead("Off"), headers));
    expect(office.map((e) => e.actor)).toStrictEqual([
      officeActor(t, "mcp", { callId: "mcp-call-9", callerPhone: "+19175550199" }),
    ]);
  });

  it("Vapi: channel vapi, callId = message.call.id, callerPhone = message.call.customer.number", async () => {
    const t = await openTenant("Actor agent vapi");
    const agent = await withRole(t, "agent");
    const events = await recorded(t, () =>
      overVapi(agent, "create_incident", booking(), { callId: "vapi-call-1", callCustomer: "+1 (917) 555-0199" }),
    );
    expect(events.map((e) => e.actor)).toStrictEqual([
      { keyId: agent.keyId, role: "agent", channel: "vapi", callId: "vapi-call-1", callerPhone: "+19175550199" },
    ]);
  });

  it.each([
    [
      "no customer on the call: message.customer.number",
      { callId: "v-2", messageCustomer: "+19175550188" },
      {},
      { callId: "v-2", callerPhone: "+19175550188" },
    ],
    [
      "both: the call's customer first",
      { callId: "v-3", callCustomer: "+19175550199", messageCustomer: "+19175550188" },
      {},
      { callId: "v-3", callerPhone: "+19175550199" },
    ],
    [
      "a withheld call customer: the message's customer",
      { callId: "v-4", callCustomer: "anonymous", messageCustomer: "+19175550188" },
      {},
      { callId: "v-4", callerPhone: "+19175550188" },
    ],
    [
      "an anonymous caller and no header: no caller",
      { callId: "v-5", callCustomer: "anonymous" },
      {},
      { callId: "v-5", callerPhone: null },
    ],
    [
      "the envelope's number and call id win over X-Caller-Phone and X-Call-Id",
      { callId: "v-6", callCustomer: "+19175550199" },
      { "X-Caller-Phone": "+19175550111", "X-Call-Id": "header-call" },
      { callId: "v-6", callerPhone: "+19175550199" },
    ],
    [
      "a withheld envelope number: X-Caller-Phone",
      { callId: "v-7", callCustomer: "anonymous" },
      { "X-Caller-Phone": "+19175550111" },
      { callId: "v-7", callerPhone: "+19175550111" },
    ],
    [
      "no call in the message: X-Call-Id",
      { messageCustomer: "+19175550188" },
      { "X-Call-Id": "header-call" },
      { callId: "header-call", callerPhone: "+19175550188" },
    ],
    ["no call and no header: nothing", {}, {}, { callId: null, callerPhone: null }],
  ] as const)("Vapi, %s", async (_name, envelope, headers, expected) => {
    const t = await openTenant("Actor vapi envelopes");
    const agent = await withRole(t, "agent");
    const events = await recorded(t, () => overVapi(agent, "create_lead", lead(), envelope, headers));
    expect(events.map((e) => e.actor)).toStrictEqual([
      { keyId: agent.keyId, role: "agent", channel: "vapi", ...expected },
    ]);
  });

  it.each([
    ["an inbound call: from_number", { direction: "inbound" as const }, "+19175550177"],
    ["an outbound call: to_number", { direction: "outbound" as const }, "+12125550100"],
  ])("Retell, %s; callId = call.call_id", async (_name, retellCall, callerPhone) => {
    const t = await openTenant("Actor agent retell");
    const agent = await withRole(t, "agent");
    const events = await recorded(t, async () => {
      const res = await call(agent, RETELL("create_lead"), {
        body: retellBody("create_lead", lead(), { call_id: "retell-77", ...retellCall }),
        headers: { "X-Caller-Phone": "+19175550111", "X-Call-Id": "header-call" },
      });
      expect(res.status, res.text).toBe(200);
    });
    expect(events.map((e) => e.actor)).toStrictEqual([
      { keyId: agent.keyId, role: "agent", channel: "retell", callId: "retell-77", callerPhone },
    ]);
  });

  it("Retell, a withheld number: no caller (and without a header, none at all)", async () => {
    const t = await openTenant("Actor retell anonymous");
    const agent = await withRole(t, "agent");
    const events = await recorded(t, async () => {
      const res = await call(agent, RETELL("create_lead"), {
        body: retellBody("create_lead", lead(), { call_id: "retell-78", from_number: "anonymous" }),
      });
      expect(res.status, res.text).toBe(200);
    });
    expect(events.map((e) => e.actor)).toStrictEqual([
      { keyId: agent.keyId, role: "agent", channel: "retell", callId: "retell-78", callerPhone: null },
    ]);
  });

  it("cancel and reschedule by an agent over Vapi record the agent and its call", async () => {
    const t = await openTenant("Actor agent changes");
    const agent = await withRole(t, "agent");
    const envelope = { callId: "vapi-change", callCustomer: "+19175550199" };
    const first = await overVapi(agent, "create_incident", booking(), envelope);
    const second = await overVapi(agent, "create_incident", booking(), envelope);
    const events = await recorded(t, async () => {
      await overVapi(agent, "reschedule_incident", { id: first.id, dateTime: slotIn(24 + hours++) }, envelope);
      await overVapi(agent, "cancel_incident", { id: second.id, reason: "moved" }, envelope);
    });
    expect(events.map((e) => e.type)).toEqual(["incident.rescheduled", "incident.cancelled"]);
    for (const event of events)
      expect(event.actor).toStrictEqual({
        keyId: agent.keyId,
        role: "agent",
        channel: "vapi",
        callId: "vapi-change",
        callerPhone: "+19175550199",
      });
  });
});

describe("an agent key's booking", () => {
  it("without a phone stores the caller's number as the incident's phone (HTTP, Vapi, Retell)", async () => {
    const t = await openTenant("Actor agent phone");
    const agent = await withRole(t, "agent");
    const byHttp = await call(agent, CREATE, { body: booking(), headers: { "X-Caller-Phone": "(917) 555-0199" } });
    expect(byHttp.status, byHttp.text).toBe(200);
    const byVapi = await overVapi(agent, "create_incident", booking(), { callId: "v", callCustomer: "+19175550188" });
    const byRetell = await call(agent, RETELL("create_incident"), {
      body: retellBody("create_incident", booking(), { from_number: "+19175550177" }),
    });
    expect(byRetell.status, byRetell.text).toBe(200);
    const booked = [byHttp.body, byVapi, byRetell.body];
    expect(booked.map((b) => b.phone)).toEqual(["+19175550199", "+19175550188", "+19175550177"]);
    // Stored so, and so in each event.
    for (const b of booked) {
      const row = await env.DB.prepare("SELECT phone FROM incidents WHERE id = ?")
        .bind(b.id)
        .first<{ phone: string }>();
      expect(row?.phone).toBe(b.phone);
    }
    const events = await eventsOf(t);
    expect(events.map((e) => [e.data.phone, e.actor.callerPhone])).toEqual(booked.map((b) => [b.phone, b.phone]));
    // The visit is the caller's: the agent reads it back as that caller.
    const own = await call(agent, `/api/v1/incidents/${byHttp.body.id}`, {
      headers: { "X-Caller-Phone": "+19175550199" },
    });
    expect(own.status, own.text).toBe(200);
  });

  it("with another phone keeps that phone: the visit is then not the caller's", async () => {
    const t = await openTenant("Actor agent other phone");
    const agent = await withRole(t, "agent");
    const caller = { "X-Caller-Phone": "+19175550199" };
    const res = await call(agent, CREATE, { body: booking({ phone: "(212) 555-0123" }), headers: caller });
    expect(res.status, res.text).toBe(200);
    expect(res.body.phone).toBe("+12125550123");
    const row = await env.DB.prepare("SELECT phone FROM incidents WHERE id = ?")
      .bind(res.body.id)
      .first<{ phone: string }>();
    expect(row?.phone).toBe("+12125550123");
    const event = await onlyEvent(t);
    expect(event.data.phone).toBe("+12125550123");
    expect(event.actor.callerPhone).toBe("+19175550199");
    expectProblem(
      await call(agent, `/api/v1/incidents/${res.body.id}`, { headers: caller }),
      404,
      "incident_not_found",
    );
    // Its own number reaches it.
    const tenant = await call(agent, `/api/v1/incidents/${res.body.id}`, {
      headers: { "X-Caller-Phone": "2125550123" },
    });
    expect(tenant.status, tenant.text).toBe(200);
  });

  it("with no caller and no phone books a visit without a phone", async () => {
    const t = await openTenant("Actor agent no caller");
    const agent = await withRole(t, "agent");
    const res = await call(agent, CREATE, { body: booking(), headers: { "X-Caller-Phone": "anonymous" } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.phone).toBeNull();
    const event = await onlyEvent(t);
    expect(event.actor).toStrictEqual({
      keyId: agent.keyId,
      role: "agent",
      channel: "http",
      callId: null,
      callerPhone: null,
    });
  });
});

describe("the served reference", () => {
  it("its example of an event (GET /api/v1/events) shows who made it: actor", async () => {
    const res = await call(null, "/api/v1/openapi.json");
    expect(res.status).toBe(200);
    const example = res.body.paths["/api/v1/events"].get.responses["200"].content["application/json"].example;
    expect(example.data.length).toBeGreaterThan(0);
    for (const event of example.data)
      expect(Object.keys(event.actor ?? {}).sort(), JSON.stringify(event)).toEqual(
        ["callId", "callerPhone", "channel", "keyId", "role"].sort(),
      );
  });
});
