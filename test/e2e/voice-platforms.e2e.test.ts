// The voice-agent platforms (docs/voice-agents.md) over a real `wrangler dev`:
// one scripted call — find the caller by phone, read the call context, find
// termite slots at a covered postal code, hold one, book it with the hold and
// an idempotencyKey (retried once: the replay), move it, cancel it — through
// each platform's shape: Vapi's tool-calls message (built with
// @vapi-ai/server-sdk's types), Retell's custom-function call (its `call` typed
// by retell-sdk), ElevenLabs webhook tools called as their `api_schema` says,
// and MCP's JSON-RPC tools/call. The Vapi, Retell and ElevenLabs calls are
// sent where, and with the headers, the served definitions say (the key
// placeholder replaced by the real key), so the definitions are what is
// tested. Each shape has its own caller and day in one org; at the end each
// incident is cancelled, both of its starts are free again and nothing else
// was booked. The served definitions equal `tools export`'s, and no
// definition or response carries the real key.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Vapi } from "@vapi-ai/server-sdk";
import type { PhoneCallResponse } from "retell-sdk/resources/call";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { everything, type RequestOptions } from "../support/http";
import { OPEN_ALWAYS } from "../support/schedules";
import { DAY, daysAhead, HOUR, iso, MINUTE } from "../support/time";
import {
  type ApiResponse,
  admin,
  applyMigrations,
  cli,
  DevServer,
  d1Execute,
  freePort,
  jsonLine,
  type RunResult,
  request,
  type Tenant,
} from "./harness";

const NOW = Date.now();
const PLACEHOLDER = "{{FIELD_SERVICE_API_KEY}}";
const ORG_NAME = "Voice Pest Control";
const TIME_ZONE = "America/New_York";
const POSTAL_CODE = "11201";
/** The agent's tools (docs/api.md, "Key roles"), in the order the operations are declared. */
const AGENT_TOOLS = [
  "get_call_context",
  "find_available_appointments",
  "check_booking_availability",
  "create_incident",
  "hold_slot",
  "release_hold",
  "find_caller",
  "list_services",
  "create_lead",
  "get_incident",
  "list_incidents",
  "cancel_incident",
  "reschedule_incident",
  "create_plan",
  "get_plan",
  "list_plans",
  "cancel_plan",
];
const PLATFORMS = ["vapi", "retell", "elevenlabs", "openai"] as const;

const SERVICE = "svc_voicetermite000000000000000";
/** The one technician who may treat termites at 112xx. */
const LICENSED = "tech_voicelicensed0000000000000";
/** Covers 112xx without the licence, and a licensed one who works elsewhere: neither may take the visits. */
const UNLICENSED = "tech_voiceunlicensed00000000000";
const ELSEWHERE = "tech_voiceelsewhere000000000000";

type Shape = "vapi" | "retell" | "elevenlabs" | "mcp";

interface Caller {
  /** Stored on the account in E.164; find_caller gets `dialled`. */
  phone: string;
  dialled: string;
  accountId: string;
  accountName: string;
  /** Which of the account's phones it is. */
  column: "mobile" | "business";
  /** Days from today of this caller's visit (each shape its own day, so that none meets another's). */
  day: number;
}

const CALLERS: Record<Shape, Caller> = {
  vapi: {
    phone: "+19175550141",
    dialled: "+1 917 555 0141",
    accountId: "acct_voicevapi00000000000000000",
    accountName: "Vera Vapi",
    column: "mobile",
    day: 2,
  },
  retell: {
    phone: "+19175550142",
    dialled: "(917) 555-0142",
    accountId: "acct_voiceretell000000000000000",
    accountName: "Rita Retell",
    column: "business",
    day: 3,
  },
  elevenlabs: {
    phone: "+19175550143",
    dialled: "917-555-0143",
    accountId: "acct_voiceelevenlabs00000000000",
    accountName: "Eli Eleven",
    column: "mobile",
    day: 4,
  },
  mcp: {
    phone: "+19175550144",
    dialled: "+19175550144",
    accountId: "acct_voicemcp000000000000000000",
    accountName: "Max Mcp",
    column: "mobile",
    day: 5,
  },
};

let stateDir: string;
let server: DevServer | undefined;
let org: Tenant;
/** `tools export --platform vapi` for this org at the dev server's origin, run while the org is provisioned. */
let exported: RunResult;
/** Every answer the server gave in this file (status, headers, body), to look for the real key in. */
const answers: string[] = [];
/** The incident each shape booked. */
const booked = new Map<Shape, string>();

beforeAll(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-e2e-voice-"));
  await applyMigrations(stateDir);
  server = await DevServer.start(stateDir, await freePort());
  org = jsonLine<Tenant>(
    await admin(stateDir, ["org", "create", "--name", ORG_NAME, "--time-zone", TIME_ZONE]),
    "org create",
  );
  // The schedule, the catalogue and the callers' accounts as the CLI stores them, in one
  // `d1 execute`; meanwhile the offline export (it opens no database).
  const now = Date.now();
  const schedule = {
    slotMinutes: 60,
    capacity: 1,
    minNoticeMinutes: 0,
    horizonDays: 30,
    weeklyHours: OPEN_ALWAYS,
    closedDates: [],
  };
  const technician = (id: string, skills: string[], postalCodes: string[]) =>
    `INSERT INTO technicians (id, org_id, name, skills, postal_codes, weekly_hours, days_off, active, created_at, updated_at) VALUES ('${id}', '${org.orgId}', '${id}', '${JSON.stringify(skills)}', '${JSON.stringify(postalCodes)}', NULL, '[]', 1, ${now}, ${now})`;
  const account = ({ accountId, accountName, phone, column }: Caller) =>
    `INSERT INTO accounts (id, org_id, name, name_lower, ${column}_phone, ${column}_e164, created_at, updated_at) VALUES ('${accountId}', '${org.orgId}', '${accountName}', '${accountName.toLowerCase()}', '${phone}', '${phone}', ${now}, ${now})`;
  const [, run] = await Promise.all([
    d1Execute(
      stateDir,
      [
        `UPDATE orgs SET schedule = '${JSON.stringify(schedule)}', max_slot_minutes = max(max_slot_minutes, 180) WHERE id = '${org.orgId}'`,
        `INSERT INTO services (id, org_id, name, name_lower, duration_minutes, buffer_minutes, arrival_window_minutes, skills, keywords, is_default, active, created_at, updated_at) VALUES ('${SERVICE}', '${org.orgId}', 'Termite treatment', 'termite treatment', 180, 0, 0, '["termite-license"]', '["termites"]', 0, 1, ${now}, ${now})`,
        technician(LICENSED, ["termite-license"], ["112"]),
        technician(UNLICENSED, [], ["112"]),
        technician(ELSEWHERE, ["termite-license"], ["900"]),
        ...Object.values(CALLERS).map(account),
      ].join("; "),
    ),
    cli(["tools", "export", "--platform", "vapi", "--base-url", server.baseUrl, "--org", org.orgId]),
  ]);
  exported = run;
}, 180_000);

afterAll(async () => {
  await server?.stop();
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

/** One HTTP call to the dev server (as `tenant`, or with only the headers given), its answer kept. */
async function send(urlPath: string, options: RequestOptions, tenant: Tenant | null = null): Promise<ApiResponse> {
  if (!server) throw new Error("the server did not start");
  const res = await request(server.baseUrl, tenant, urlPath, options);
  answers.push(everything(res));
  return res;
}

/** A definition's URL as a path of the dev server: it must call the origin the definitions were fetched from. */
function pathOf(url: string): string {
  const parsed = new URL(url);
  expect(parsed.origin).toBe(server!.baseUrl);
  return `${parsed.pathname}${parsed.search}`;
}

/** A definition's headers as the platform sends them: the org's id, the placeholder replaced by the real key. */
function realHeaders(headers: Record<string, string>): Record<string, string> {
  expect(headers).toEqual({ "X-ORG-ID": org.orgId, "X-API-KEY": PLACEHOLDER });
  return { ...headers, "X-API-KEY": org.apiKey };
}

/** ElevenLabs' request headers: the definition's, its system variables filled in as ElevenLabs fills them. */
const ELEVENLABS_VARIABLES = {
  "X-Caller-Phone": { variable_name: "system__caller_id" },
  "X-Call-Id": { variable_name: "system__conversation_id" },
};
function elevenLabsHeaders(headers: Record<string, unknown>): Record<string, string> {
  expect(headers).toEqual({ "X-ORG-ID": org.orgId, "X-API-KEY": PLACEHOLDER, ...ELEVENLABS_VARIABLES });
  return {
    "X-ORG-ID": org.orgId,
    "X-API-KEY": org.apiKey,
    "X-Caller-Phone": CALLERS.elevenlabs.dialled,
    "X-Call-Id": "conv_e2e_elevenlabs",
  };
}

// biome-ignore lint/suspicious/noExplicitAny: definitions and answers are arbitrary JSON
type Json = any;

async function definitions(platform: (typeof PLATFORMS)[number]): Promise<Json[]> {
  const res = await send(`/api/v1/integrations/${platform}/tools`, {}, org);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const nameOf = (definition: Json): string => definition.function?.name ?? definition.name;

function definitionOf(list: Json[], tool: string): Json {
  const found = list.find((d) => nameOf(d) === tool);
  if (!found) throw new Error(`no definition named ${tool}`);
  return found;
}

/** What a tool call answered: the operation's status and JSON body (its problem document on failure). */
interface Answer {
  status: number;
  body: Json;
  /** The operation's JSON as the platform receives it. */
  text: string;
  /** Idempotent-Replayed, where the shape passes the operation's headers on (Retell, ElevenLabs); else null. */
  replayed: boolean | null;
}

interface ToolCall {
  tool: string;
  args: Record<string, unknown>;
  /** A write's Idempotency-Key: the idempotencyKey argument, or (ElevenLabs, which calls the paths) the header. */
  idempotencyKey?: string;
}

/** A platform's way of calling tools: several calls of one model turn at once. */
type Agent = (calls: ToolCall[]) => Promise<Answer[]>;

const withKey = ({ args, idempotencyKey }: ToolCall) =>
  idempotencyKey === undefined ? args : { ...args, idempotencyKey };

const replayedOf = (res: ApiResponse) => res.headers.get("Idempotent-Replayed") === "true";

/** A tool's answer sent as a string (Vapi's result or error, MCP's text content): the operation's status and body. */
function fromText(text: string, failed: boolean): Answer {
  const body = JSON.parse(text);
  if (failed) expect(body.status, text).toBeGreaterThanOrEqual(400);
  return { status: failed ? body.status : 200, body, text, replayed: null };
}

/** Vapi: the turn's calls in one tool-calls message to the definitions' server, answered in `results`. */
async function vapiAgent(caller: Caller): Promise<Agent> {
  const tools = await definitions("vapi");
  let ids = 0;
  return async (calls) => {
    const servers = calls.map(({ tool }) => definitionOf(tools, tool).server);
    expect(new Set(servers.map((s) => JSON.stringify(s))).size).toBe(1);
    const toolCallList: Vapi.ToolCall[] = calls.map((call) => ({
      id: `call_vapi_${++ids}`,
      type: "function",
      function: { name: call.tool, arguments: JSON.stringify(withKey(call)) },
    }));
    const message: Vapi.ServerMessageToolCalls = {
      type: "tool-calls",
      toolCallList,
      toolWithToolCallList: [],
      timestamp: Date.now(),
      customer: { number: caller.phone },
    };
    const res = await send(pathOf(servers[0].url), {
      body: { message },
      headers: realHeaders(servers[0].headers),
    });
    expect(res.status, res.text).toBe(200);
    const results: { toolCallId: string; name: string; result?: string; error?: string }[] = res.body.results;
    expect(results.map((r) => [r.toolCallId, r.name])).toEqual(toolCallList.map((c) => [c.id, c.function.name]));
    return results.map((r) => {
      expect(typeof (r.result ?? r.error), JSON.stringify(r)).toBe("string");
      expect(r.result === undefined || r.error === undefined, JSON.stringify(r)).toBe(true);
      return fromText(r.result ?? r.error!, r.error !== undefined);
    });
  };
}

/** Retell: each call to its custom function's url, `{name, call, args}`, answered with the operation's own status. */
async function retellAgent(caller: Caller): Promise<Agent> {
  const tools = await definitions("retell");
  const call: PhoneCallResponse = {
    agent_id: "agent_voice_e2e",
    agent_version: 1,
    call_id: "call_retell_voice_e2e",
    call_status: "ongoing",
    call_type: "phone_call",
    direction: "inbound",
    from_number: caller.phone,
    to_number: "+12125550100",
  };
  return (calls) =>
    Promise.all(
      calls.map(async (toolCall) => {
        const definition = definitionOf(tools, toolCall.tool);
        expect(definition).toMatchObject({ type: "custom", method: "POST", args_at_root: false });
        const res = await send(pathOf(definition.url), {
          body: { name: toolCall.tool, call, args: withKey(toolCall) },
          headers: realHeaders(definition.headers),
        });
        return { status: res.status, body: res.body, text: res.text, replayed: replayedOf(res) };
      }),
    );
}

/**
 * ElevenLabs: each webhook tool calls its operation's own path, as its
 * api_schema says: `{id}` filled, a GET's arguments in the query, a POST's as
 * the JSON body. Every argument sent must be one the schema declares, and
 * every required one is sent.
 */
async function elevenLabsAgent(): Promise<Agent> {
  const tools = await definitions("elevenlabs");
  const declares = (schema: { properties: object; required: string[] } | undefined, sent: Record<string, unknown>) => {
    const names = Object.keys(schema?.properties ?? {});
    for (const name of Object.keys(sent)) expect(names, `${name} is declared`).toContain(name);
    for (const name of schema?.required ?? []) expect(Object.keys(sent), `${name} is sent`).toContain(name);
  };
  return (calls) =>
    Promise.all(
      calls.map(async ({ tool, args, idempotencyKey }) => {
        const definition = definitionOf(tools, tool);
        expect(definition.type).toBe("webhook");
        const schema = definition.api_schema;
        const rest: Record<string, unknown> = { ...args };
        let url: string = schema.url;
        for (const name of Object.keys(schema.path_params_schema ?? {})) {
          expect(Object.keys(rest), `path parameter ${name}`).toContain(name);
          url = url.replace(`{${name}}`, encodeURIComponent(String(rest[name])));
          delete rest[name];
        }
        expect(url).not.toMatch(/[{}]/);
        const headers = {
          ...elevenLabsHeaders(schema.request_headers),
          ...(idempotencyKey === undefined ? {} : { "Idempotency-Key": idempotencyKey }),
        };
        let res: ApiResponse;
        if (schema.method === "GET") {
          expect(schema.request_body_schema).toBeUndefined();
          declares(schema.query_params_schema, rest);
          const query = new URLSearchParams(
            Object.entries(rest).map(([k, v]): [string, string] => [k, String(v)]),
          ).toString();
          res = await send(`${pathOf(url)}${query ? `?${query}` : ""}`, { headers });
        } else {
          expect(schema.method).toBe("POST");
          expect(schema.query_params_schema).toBeUndefined();
          declares(schema.request_body_schema, rest);
          res = await send(pathOf(url), { method: "POST", body: rest, headers });
        }
        return { status: res.status, body: res.body, text: res.text, replayed: replayedOf(res) };
      }),
    );
}

/** MCP: each call a JSON-RPC tools/call on /mcp; a failed operation is an isError result carrying its problem. */
function mcpAgent(): Agent {
  let ids = 0;
  return (calls) =>
    Promise.all(
      calls.map(async (call) => {
        const id = ++ids;
        const res = await send(
          "/mcp",
          {
            body: { jsonrpc: "2.0", id, method: "tools/call", params: { name: call.tool, arguments: withKey(call) } },
            headers: { Accept: "application/json, text/event-stream" },
          },
          org,
        );
        expect(res.status, res.text).toBe(200);
        expect(res.body).toMatchObject({ jsonrpc: "2.0", id, result: { content: [{ type: "text" }] } });
        const { content, isError } = res.body.result;
        const answer = fromText(content[0].text, isError === true);
        if (isError !== true) expect(res.body.result.structuredContent).toEqual(answer.body);
        return answer;
      }),
    );
}

/** `hour`:00 UTC of the caller's day, as ISO. */
const at = (caller: Caller, hour: number) => iso(daysAhead(caller.day, hour, NOW));
const plus = (start: string, minutes: number) => iso(Date.parse(start) + minutes * MINUTE);

function ok(answer: Answer, what: string) {
  expect(answer.status, `${what}: ${answer.text}`).toBe(200);
  return answer.body;
}

/** The call-context answer, checked against the org as provisioned and the clock. */
function expectContext(context: Json) {
  expect(context.organization).toEqual({ id: org.orgId, name: ORG_NAME });
  expect(context.timeZone).toBe(TIME_ZONE);
  const now = Date.parse(context.now);
  expect(Math.abs(now - Date.now())).toBeLessThan(MINUTE);
  expect(context.localNow).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d-0[45]:00$/);
  expect(Math.abs(Date.parse(context.localNow) - now)).toBeLessThan(1000);
  expect(context.localDate).toBe(context.localNow.slice(0, 10));
  expect(context.openingHours).toHaveLength(7);
  context.openingHours.forEach((day: Json, i: number) => {
    expect(Date.parse(`${day.date}T00:00:00Z`)).toBe(Date.parse(`${context.localDate}T00:00:00Z`) + i * DAY);
    expect(day.intervals).toEqual([["00:00", "24:00"]]);
  });
  expect(context.openingHours[0].weekday).toBe(context.weekday);
  expect(context.weekday).toBe(
    new Date(`${context.localDate}T12:00:00Z`).toLocaleDateString("en-US", { weekday: "long" }).toLowerCase(),
  );
  expect(context.services).toEqual([
    { id: SERVICE, name: "Termite treatment", durationMinutes: 180, arrivalWindowMinutes: 0, keywords: ["termites"] },
  ]);
  // The default visit (no service: one slot, any technician) at the next whole hour; no one is busy today.
  const next = context.nextAvailable;
  expect(next).toMatchObject({ serviceId: null, remaining: expect.any(Number) });
  expect(next.remaining).toBeGreaterThan(0);
  expect(Date.parse(next.start) % HOUR).toBe(0);
  expect(Date.parse(next.start)).toBeGreaterThanOrEqual(now);
  expect(Date.parse(next.start)).toBeLessThanOrEqual(now + HOUR);
}

/**
 * The scripted call, through `agent`, for `caller`: every answer checked.
 * Returns the id of the incident it booked (cancelled by its end).
 */
async function converse(shape: Shape, agent: Agent): Promise<string> {
  const caller = CALLERS[shape];
  const one = async (call: ToolCall) => (await agent([call]))[0]!;
  const visit = { insectName: "termites", postalCode: POSTAL_CODE };

  // The first turn: who is calling, and the context, at once.
  const [found, context] = await agent([
    { tool: "find_caller", args: { phone: caller.dialled } },
    { tool: "get_call_context", args: {} },
  ]);
  expect(ok(found!, "find_caller")).toEqual({
    phone: caller.phone,
    contacts: [],
    accounts: [expect.objectContaining({ id: caller.accountId, name: caller.accountName })],
    upcomingIncidents: [],
    plans: [],
  });
  expectContext(ok(context!, "get_call_context"));

  // Termites at 11201: 180-minute visits of the one licensed technician there, every hour.
  const first = at(caller, 13);
  const slots = ok(
    await one({ tool: "find_available_appointments", args: { dateTime: first, limit: 3, ...visit } }),
    "find_available_appointments",
  );
  expect(slots.timeZone).toBe(TIME_ZONE);
  expect(slots.slots.map((s: Json) => [s.start, s.end, s.remaining, s.serviceId])).toEqual(
    [0, 60, 120].map((m) => [plus(first, m), plus(first, m + 180), 1, SERVICE]),
  );

  const held = ok(await one({ tool: "hold_slot", args: { dateTime: first, ...visit } }), "hold_slot");
  expect(held).toMatchObject({
    holdId: expect.stringMatching(/^hold_/),
    slot: { start: first, end: plus(first, 180), remaining: 0, serviceId: SERVICE },
    technicianId: LICENSED,
  });
  expect(Date.parse(held.expiresAt)).toBeGreaterThan(Date.now());

  // The booking with the hold and an idempotencyKey, then the same call again (a retried tool call).
  const booking: ToolCall = {
    tool: "create_incident",
    args: {
      dateTime: first,
      clientName: caller.accountName,
      phone: caller.dialled,
      notes: `Booked through ${shape}`,
      holdId: held.holdId,
      ...visit,
    },
    idempotencyKey: `voice-${shape}-${caller.phone}-booking`,
  };
  const created = await one(booking);
  const incident = ok(created, "create_incident");
  expect(incident).toMatchObject({
    id: expect.stringMatching(/^inc_/),
    status: "scheduled",
    dateTime: first,
    clientName: caller.accountName,
    insectName: "termites",
    accountId: caller.accountId,
    phone: caller.phone,
    serviceId: SERVICE,
    technicianId: LICENSED,
    postalCode: POSTAL_CODE,
    holdExpired: false,
    appointment: { start: first, end: plus(first, 180), remaining: 0 },
    cancelledAt: null,
  });
  const retried = await one(booking);
  expect(retried.status, retried.text).toBe(200);
  expect(retried.text).toBe(created.text);
  // Retell and ElevenLabs pass the operation's headers on: the second answer says it is a replay.
  const headersPassed = shape === "retell" || shape === "elevenlabs";
  expect([created.replayed, retried.replayed]).toEqual(headersPassed ? [false, true] : [null, null]);

  // The caller would rather come later that day.
  const later = at(caller, 17);
  const moved = ok(
    await one({ tool: "reschedule_incident", args: { id: incident.id, dateTime: later } }),
    "reschedule_incident",
  );
  expect(moved).toMatchObject({
    id: incident.id,
    status: "scheduled",
    dateTime: later,
    technicianId: LICENSED,
    appointment: { start: later, end: plus(later, 180) },
  });
  expect(ok(await one({ tool: "get_incident", args: { id: incident.id } }), "get_incident")).toEqual(moved);

  // And then cancels.
  const cancelled = ok(
    await one({ tool: "cancel_incident", args: { id: incident.id, reason: "Caller changed their mind" } }),
    "cancel_incident",
  );
  expect(cancelled).toMatchObject({
    id: incident.id,
    status: "cancelled",
    dateTime: later,
    cancelReason: "Caller changed their mind",
    cancelledAt: expect.any(String),
  });

  // Afterwards: nothing upcoming for the caller, their one incident cancelled, and both starts free
  // again (the hold was used, the first start given up, the second cancelled).
  const [again, listed, atFirst, atLater] = await agent([
    { tool: "find_caller", args: { phone: caller.phone } },
    { tool: "list_incidents", args: { phone: caller.phone } },
    { tool: "check_booking_availability", args: { dateTime: first, ...visit } },
    { tool: "check_booking_availability", args: { dateTime: later, ...visit } },
  ]);
  expect(ok(again!, "find_caller").upcomingIncidents).toEqual([]);
  const page = ok(listed!, "list_incidents");
  expect(page).toMatchObject({ hasMore: false, nextCursor: null });
  expect(page.data).toEqual([cancelled]);
  for (const [check, start] of [
    [atFirst!, first],
    [atLater!, later],
  ] as const) {
    expect(ok(check, "check_booking_availability")).toMatchObject({
      available: true,
      reason: null,
      slot: { start, remaining: 1, serviceId: SERVICE },
    });
  }
  return incident.id;
}

describe("tool definitions over wrangler dev", () => {
  it("serves the agent tools per platform, calling this origin as this org, with the key's placeholder only; tools export prints the same", async () => {
    const served: Record<string, ApiResponse> = {};
    for (const platform of PLATFORMS) {
      const res = await send(`/api/v1/integrations/${platform}/tools`, {}, org);
      expect(res.status, res.text).toBe(200);
      served[platform] = res;
      expect(res.body.map(nameOf)).toEqual(AGENT_TOOLS);
      expect(res.text).not.toContain(org.apiKey);
    }
    for (const definition of served.vapi!.body) {
      expect(definition.server).toEqual({
        url: `${server!.baseUrl}/api/v1/integrations/vapi/tool-calls`,
        headers: { "X-ORG-ID": org.orgId, "X-API-KEY": PLACEHOLDER },
      });
    }
    for (const definition of served.retell!.body) {
      expect(definition.url).toBe(`${server!.baseUrl}/api/v1/integrations/retell/${definition.name}`);
      expect(definition.headers).toEqual({ "X-ORG-ID": org.orgId, "X-API-KEY": PLACEHOLDER });
    }
    for (const definition of served.elevenlabs!.body) {
      expect(definition.api_schema.url.startsWith(`${server!.baseUrl}/api/v1/`), definition.api_schema.url).toBe(true);
      expect(definition.api_schema.request_headers).toEqual({
        "X-ORG-ID": org.orgId,
        "X-API-KEY": PLACEHOLDER,
        ...ELEVENLABS_VARIABLES,
      });
    }
    expect(served.openai!.text).not.toContain("X-API-KEY");

    // The CLI, offline, for the same org and origin: the very same JSON.
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).not.toContain(org.apiKey);
    const printed = JSON.parse(exported.stdout);
    expect(printed).toEqual(served.vapi!.body);
    expect(JSON.stringify(printed)).toBe(served.vapi!.text);
  });
});

describe("one call through each platform's shape over wrangler dev", () => {
  it("Vapi: tool-calls messages to the definitions' server", async () => {
    booked.set("vapi", await converse("vapi", await vapiAgent(CALLERS.vapi)));
  });

  it("Retell: custom-function calls to the definitions' urls", async () => {
    booked.set("retell", await converse("retell", await retellAgent(CALLERS.retell)));
  });

  it("ElevenLabs: webhook tools calling each operation's own path as their api_schema says", async () => {
    booked.set("elevenlabs", await converse("elevenlabs", await elevenLabsAgent()));
  });

  it("MCP: JSON-RPC tools/call on /mcp", async () => {
    booked.set("mcp", await converse("mcp", mcpAgent()));
  });

  it("afterwards the org has exactly the four incidents, all cancelled, and no answer carried the real key", async () => {
    expect([...booked.keys()].sort()).toEqual(["elevenlabs", "mcp", "retell", "vapi"]);
    const res = await send("/api/v1/incidents?limit=200", {}, org);
    expect(res.status, res.text).toBe(200);
    expect(res.body.hasMore).toBe(false);
    const rows = res.body.data.map((i: Json) => ({ id: i.id, status: i.status, phone: i.phone }));
    const expected = (Object.keys(CALLERS) as Shape[]).map((shape) => ({
      id: booked.get(shape),
      status: "cancelled",
      phone: CALLERS[shape].phone,
    }));
    expect(rows).toEqual(expect.arrayContaining(expected));
    expect(rows).toHaveLength(expected.length);
    expect(org.apiKey).toMatch(/^fsk_./);
    expect(answers.length).toBeGreaterThan(40);
    for (const answer of answers) expect(answer).not.toContain(org.apiKey);
  });
});
