// An agent key bound to its caller (docs/api.md, "Key roles", "The caller of a
// call", "Who made each change", "One request, bounded work") over
// a real `wrangler dev`: through each channel that reports a caller — Vapi's
// tool-calls message, Retell's custom-function call, and plain HTTP with
// `X-Caller-Phone` — caller A cannot cancel, move or read caller B's visit
// (404 incident_not_found, and B's visit unchanged, read back in SQL), lists
// only A's visits, and books with A's number; that booking's event names the
// agent key, the channel, the call id and A's number. A Vapi message of 11
// tool calls is 422 and runs none of them. One server, one org (the default
// schedule: no schedule to store) and one CLI `key create --role agent` for the
// whole file: each CLI or `d1 execute` process costs seconds.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { daysAhead, iso } from "../support/time";
import {
  type ApiResponse,
  admin,
  applyMigrations,
  DevServer,
  d1Execute,
  freePort,
  jsonLine,
  request,
  type Tenant,
} from "./harness";

const NOW = Date.now();
/**
 * `hour`:00 UTC of the `n`th Monday to Friday (from 0) at least 2 days ahead:
 * with `hour` 8 to 16, a slot of the default schedule (Monday to Friday
 * 08:00–17:00 in the org's zone, UTC; one place; 120 minutes' notice), far
 * from notice and horizon.
 */
function at(n: number, hour: number): string {
  for (let d = 2, seen = -1; ; d++) {
    const day = new Date(daysAhead(d, hour, NOW)).getUTCDay();
    if (day !== 0 && day !== 6 && ++seen === n) return iso(daysAhead(d, hour, NOW));
  }
}

/** Caller A, as each channel reports it (the org is in the US), and B: fictional 555-01xx numbers. */
const A = "+19175550101";
const B = "+19175550102";
const A_DIALLED = { vapi: "+1 917 555 0101", retell: "(917) 555-0101", http: "917-555-0101" } as const;

type Channel = keyof typeof A_DIALLED;
const CHANNELS: Channel[] = ["vapi", "retell", "http"];
/** The call id each channel reports: Vapi's `message.call.id`, Retell's `call.call_id`, the `X-Call-Id` header. */
const CALL_IDS: Record<Channel, string> = {
  vapi: "vapi-call-7d1f0c2e-0001",
  retell: "retell_call_5b0e9a44_0002",
  http: "http-call-0003",
};
/** The weekday of each channel's own booking, and of its attempt to move B's visit (both free). */
const BOOK_DAY: Record<Channel, number> = { vapi: 1, retell: 2, http: 3 };

let stateDir: string;
let server: DevServer | undefined;
let office: Tenant & { keyId: string };
let agent: Tenant & { keyId: string; role: string };
/** Booked by the office: A's visit, B's visit, and one with no phone. */
let visitA: string;
let visitB: string;
let visitNobody: string;
/** Every visit of A's so far: A's own list must be exactly these. */
const visitsOfA = new Set<string>();
/** B's visit as its booking answered it: what the database must still hold after each channel's attempts. */
let storedB: Record<string, unknown>;

const readB = async () =>
  (
    await d1Execute(
      stateDir,
      `SELECT status, starts_at, ends_at, updated_at, cancelled_at, cancel_reason, phone FROM incidents WHERE id = '${visitB}'`,
    )
  )[0];

async function send(tenant: Tenant, urlPath: string, options: Parameters<typeof request>[3] = {}) {
  if (!server) throw new Error("the server did not start");
  return request(server.baseUrl, tenant, urlPath, options);
}

async function bookAsOffice(dateTime: string, clientName: string, phone?: string) {
  const res = await send(office, "/api/v1/ai-agent/create-incident", {
    body: { dateTime, clientName, insectName: "ants", ...(phone ? { phone } : {}) },
  });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

beforeAll(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-e2e-agent-"));
  await applyMigrations(stateDir);
  server = await DevServer.start(stateDir, await freePort());
  office = jsonLine(await admin(stateDir, ["org", "create", "--name", "Agent Binding Pest"]), "org create");
  agent = jsonLine(
    await admin(stateDir, ["key", "create", "--org", office.orgId, "--role", "agent"]),
    "key create --role agent",
  );
  expect(agent.role).toBe("agent");
  agent.orgId = office.orgId;
  visitA = (await bookAsOffice(at(0, 9), "Alice Caller", "+1 (917) 555-0101")).id;
  const b = await bookAsOffice(at(0, 10), "Bob Other", "917.555.0102");
  visitB = b.id;
  visitNobody = (await bookAsOffice(at(0, 11), "No Phone")).id;
  visitsOfA.add(visitA);
  expect(b).toMatchObject({ status: "scheduled", phone: B, dateTime: at(0, 10) });
  storedB = {
    status: "scheduled",
    starts_at: Date.parse(b.appointment.start),
    ends_at: Date.parse(b.appointment.end),
    updated_at: Date.parse(b.updatedAt),
    cancelled_at: null,
    cancel_reason: null,
    phone: B,
  };
}, 180_000);

afterAll(async () => {
  await server?.stop();
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

/** One tool call of the agent key as caller A, through `channel`: the status and JSON body of its answer. */
async function callAsA(channel: Channel, tool: string, args: Record<string, unknown>): Promise<ApiResponse> {
  if (channel === "vapi") {
    const toolCallId = `call_${tool}_${Math.random().toString(36).slice(2, 10)}`;
    const res = await send(agent, "/api/v1/integrations/vapi/tool-calls", {
      body: {
        message: {
          type: "tool-calls",
          toolCallList: [
            { id: toolCallId, type: "function", function: { name: tool, arguments: JSON.stringify(args) } },
          ],
          call: { id: CALL_IDS.vapi, type: "inboundPhoneCall", customer: { number: A_DIALLED.vapi } },
        },
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.results).toHaveLength(1);
    const [answer] = res.body.results;
    expect(answer).toMatchObject({ toolCallId, name: tool });
    const text: string = answer.result ?? answer.error;
    const body = JSON.parse(text);
    // A result is the operation's 2xx answer; an error its problem document, whose status says which.
    return { ...res, status: answer.result !== undefined ? 200 : body.status, text, body };
  }
  if (channel === "retell") {
    return send(agent, `/api/v1/integrations/retell/${tool}`, {
      body: {
        name: tool,
        call: {
          call_id: CALL_IDS.retell,
          call_type: "phone_call",
          from_number: A_DIALLED.retell,
          to_number: "+12125550100",
          direction: "inbound",
        },
        args,
      },
    });
  }
  const headers = { "X-Caller-Phone": A_DIALLED.http, "X-Call-Id": CALL_IDS.http };
  const { id, ...body } = args;
  switch (tool) {
    case "cancel_incident":
      return send(agent, `/api/v1/incidents/${id}/cancel`, { body, headers });
    case "reschedule_incident":
      return send(agent, `/api/v1/incidents/${id}/reschedule`, { body, headers });
    case "get_incident":
      return send(agent, `/api/v1/incidents/${id}`, { headers });
    case "list_incidents":
      return send(agent, `/api/v1/incidents?${new URLSearchParams(body as Record<string, string>)}`, { headers });
    case "create_incident":
      return send(agent, "/api/v1/ai-agent/create-incident", { body, headers });
    default:
      throw new Error(`no HTTP route for ${tool}`);
  }
}

function expectNotFound(res: ApiResponse) {
  expect(res.status, res.text).toBe(404);
  expect(res.body).toMatchObject({ status: 404, code: "incident_not_found" });
}

/** The org's events of `type`, as the office reads them. */
async function events(type: string): Promise<{ type: string; actor: unknown; data: { id: string; phone: string } }[]> {
  const res = await send(office, `/api/v1/events?type=${type}&limit=200`);
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

describe.each(CHANNELS)("an agent key bound to caller A, through %s", (channel) => {
  it("cannot cancel, move or read B's visit: 404 incident_not_found, and B's visit unchanged in SQL", async () => {
    expectNotFound(await callAsA(channel, "cancel_incident", { id: visitB, reason: "not mine to cancel" }));
    expectNotFound(await callAsA(channel, "reschedule_incident", { id: visitB, dateTime: at(BOOK_DAY[channel], 15) }));
    expectNotFound(await callAsA(channel, "get_incident", { id: visitB }));
    // A's own visit is A's to read, through the same channel.
    const own = await callAsA(channel, "get_incident", { id: visitA });
    expect(own.status, own.text).toBe(200);
    expect(own.body).toMatchObject({ id: visitA, phone: A });

    expect(await readB()).toEqual(storedB);
    expect((await events("incident.cancelled")).map((event) => event.data.id)).not.toContain(visitB);
    expect((await events("incident.rescheduled")).map((event) => event.data.id)).not.toContain(visitB);
  });

  it("books with A's number, and the booking's event names the agent key, the channel, the call and A", async () => {
    const dateTime = at(BOOK_DAY[channel], 9);
    const res = await callAsA(channel, "create_incident", {
      dateTime,
      clientName: `Alice via ${channel}`,
      insectName: "ants",
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: "scheduled", dateTime, phone: A });
    visitsOfA.add(res.body.id);

    const created = (await events("incident.created")).filter((event) => event.data.id === res.body.id);
    expect(created).toHaveLength(1);
    expect(created[0]!.actor).toEqual({
      keyId: agent.keyId,
      role: "agent",
      channel,
      callId: CALL_IDS[channel],
      callerPhone: A,
    });
    expect(created[0]!.data.phone).toBe(A);
  });

  it("lists only A's visits, and a phone filter of B's number is 403 caller_mismatch", async () => {
    const res = await callAsA(channel, "list_incidents", {});
    expect(res.status, res.text).toBe(200);
    const listed: { id: string; phone: string }[] = res.body.data;
    expect(listed.map((incident) => incident.id).sort()).toEqual([...visitsOfA].sort());
    expect(listed.every((incident) => incident.phone === A)).toBe(true);
    expect(listed.map((incident) => incident.id)).not.toContain(visitB);
    expect(listed.map((incident) => incident.id)).not.toContain(visitNobody);

    const mismatch = await callAsA(channel, "list_incidents", { phone: B });
    expect(mismatch.status, mismatch.text).toBe(403);
    expect(mismatch.body).toMatchObject({ code: "caller_mismatch" });
  });
});

describe("one Vapi message, bounded work", () => {
  it("11 tool calls are 422 (message.toolCallList too_big) and none runs", async () => {
    const before = await send(office, "/api/v1/incidents?limit=200");
    expect(before.status, before.text).toBe(200);
    const createdBefore = (await events("incident.created")).length;
    const toolCallList = Array.from({ length: 11 }, (_, i) => ({
      id: `call_bulk_${i}`,
      type: "function",
      function: {
        name: "create_incident",
        arguments: { dateTime: at(4 + Math.floor(i / 9), 8 + (i % 9)), clientName: `Bulk ${i}`, insectName: "ants" },
      },
    }));
    const res = await send(agent, "/api/v1/integrations/vapi/tool-calls", {
      body: {
        message: {
          type: "tool-calls",
          toolCallList,
          call: { id: "vapi-call-bulk", customer: { number: A_DIALLED.vapi } },
        },
      },
    });
    expect(res.status, res.text).toBe(422);
    expect(res.body).toMatchObject({ code: "validation_failed" });
    expect(res.body.errors).toEqual([expect.objectContaining({ path: "message.toolCallList", code: "too_big" })]);

    // The office key sees every incident of the org, cancelled or not: none was added or changed.
    const after = await send(office, "/api/v1/incidents?limit=200");
    expect(after.status, after.text).toBe(200);
    expect(after.body.data).toEqual(before.body.data);
    expect(await events("incident.created")).toHaveLength(createdBefore);
  });
});
