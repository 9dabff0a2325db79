// The MCP server through the official SDK client: the seventeen tools with the
// operations' own input schemas, the same JSON results as HTTP, failures as
// isError results carrying the problem document.

import { beforeAll, describe, expect, it } from "vitest";
import { holdSlotBody } from "../../../src/schemas/holds";
import { createLeadBody } from "../../../src/schemas/leads";
import { mcpClient as connect } from "../../support/mcp";
import { call } from "../../support/request";
import { addAccount, newTenant, openTenant, type Tenant } from "../../support/tenants";
import { slotAt } from "../../support/time";

let a: Tenant;
let b: Tenant;

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON results
const text = (result: object): any => JSON.parse((result as { content: { text: string }[] }).content[0]!.text);

beforeAll(async () => {
  a = await openTenant("MCP A");
  b = await newTenant("MCP B");
});

describe("MCP server at /mcp", () => {
  it("refuses a client without credentials", async () => {
    await expect(connect(null)).rejects.toThrow(/401/);
  });

  it("lists the twenty-three tools with the operations' input schemas", { timeout: 20_000 }, async () => {
    const client = await connect(a);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "cancel_incident",
      "cancel_plan",
      "check_booking_availability",
      "close_incident",
      "create_contact",
      "create_incident",
      "create_lead",
      "create_plan",
      "find_available_appointments",
      "find_caller",
      "get_account",
      "get_board",
      "get_call_context",
      "get_incident",
      "get_plan",
      "hold_slot",
      "list_contacts",
      "list_events",
      "list_incidents",
      "list_plans",
      "list_services",
      "release_hold",
      "reschedule_incident",
    ]);
    // The call context takes no argument at all, and says it only reads.
    const context = tools.find((t) => t.name === "get_call_context");
    expect(context?.inputSchema.properties ?? {}).toEqual({});
    expect(context?.inputSchema.required ?? []).toEqual([]);
    expect(context?.outputSchema?.type).toBe("object");
    expect(context?.annotations?.readOnlyHint).toBe(true);
    // An id in the path becomes an `id` argument, beside the body's fields.
    const reschedule = tools.find((t) => t.name === "reschedule_incident")?.inputSchema;
    expect(reschedule?.required).toEqual(["id", "dateTime"]);
    expect(reschedule?.additionalProperties).toBe(false);
    const lead = tools.find((t) => t.name === "create_lead")?.inputSchema as unknown as {
      properties: object;
      additionalProperties: boolean;
    };
    // A write tool takes its call's Idempotency-Key as an optional `idempotencyKey` argument besides.
    expect(Object.keys(lead.properties)).toEqual([...Object.keys(createLeadBody().shape), "idempotencyKey"]);
    expect(lead.additionalProperties).toBe(false);
    const incident = tools.find((t) => t.name === "create_incident");
    expect(incident?.inputSchema.required).toEqual(["dateTime", "clientName", "insectName"]);
    expect(Object.keys(incident?.inputSchema.properties ?? {})).toContain("holdId");
    expect(incident?.outputSchema?.type).toBe("object");
    const hold = tools.find((t) => t.name === "hold_slot")?.inputSchema;
    expect(hold?.required).toEqual(["dateTime"]);
    expect(Object.keys(hold?.properties ?? {}).sort()).toEqual(
      [...Object.keys(holdSlotBody().shape), "idempotencyKey"].sort(),
    );
    expect(hold?.additionalProperties).toBe(false);
    const release = tools.find((t) => t.name === "release_hold")?.inputSchema;
    expect([release?.required, release?.additionalProperties]).toEqual([["holdId"], false]);
  });

  it("holds a place, books on the hold and releases it, with the same JSON as HTTP", async () => {
    const client = await connect(a);
    const start = slotAt(4, 11);
    const before = Date.now();
    const held = await client.callTool({ name: "hold_slot", arguments: { dateTime: start, holdMinutes: 2 } });
    expect(held.isError, JSON.stringify(held)).toBeFalsy();
    expect(held.structuredContent).toEqual(text(held));
    const hold = text(held);
    expect(hold).toMatchObject({
      holdId: expect.stringMatching(/^hold_[0-9a-z]{26}$/),
      slot: { start, remaining: 0 },
      technicianId: null,
    });
    const expiresAt = Date.parse(hold.expiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 2 * 60_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 2 * 60_000);
    // The hold takes the one place, for HTTP as for the tools.
    const check = await client.callTool({ name: "check_booking_availability", arguments: { dateTime: start } });
    expect(text(check)).toMatchObject({ available: false, reason: "fully_booked" });
    expect((await call(a, "/api/v1/ai-agent/is-booking-available", { body: { dateTime: start } })).body).toEqual(
      text(check),
    );
    const booked = await client.callTool({
      name: "create_incident",
      arguments: { dateTime: start, clientName: "Held caller", insectName: "Ants", holdId: hold.holdId },
    });
    expect(booked.isError, JSON.stringify(booked)).toBeFalsy();
    expect(text(booked)).toMatchObject({ appointment: { start, remaining: 0 }, holdExpired: false });
    // Releasing the used hold is the same 200 (agents retry) and frees nothing the booking took.
    const released = await client.callTool({ name: "release_hold", arguments: { holdId: hold.holdId } });
    expect(text(released)).toEqual({ holdId: hold.holdId, released: true });
    expect((await call(a, "/api/v1/ai-agent/release-hold", { body: { holdId: hold.holdId } })).body).toEqual(
      text(released),
    );
    const still = await client.callTool({ name: "check_booking_availability", arguments: { dateTime: start } });
    expect(text(still)).toMatchObject({ available: false, reason: "fully_booked" });
    const unknown = await client.callTool({
      name: "release_hold",
      arguments: { holdId: "hold_00000000000000000000000000" },
    });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toMatchObject({ status: 422, errors: [{ path: "holdId", code: "not_found" }] });
  });

  it("finds slots, books one and sees it gone, with the same JSON as HTTP", async () => {
    const client = await connect(a);
    const from = slotAt(2, 9);
    const found = await client.callTool({
      name: "find_available_appointments",
      arguments: { dateTime: from, limit: 2 },
    });
    expect(found.isError).toBeFalsy();
    expect(found.structuredContent).toEqual(text(found));
    expect(text(found)).toEqual(
      (await call(a, "/api/v1/ai-agent/available-appointments", { body: { dateTime: from, limit: 2 } })).body,
    );
    const first = text(found).slots[0];
    const booked = await client.callTool({
      name: "create_incident",
      arguments: { dateTime: first.start, clientName: "Caller", insectName: "Wasps" },
    });
    expect(text(booked).appointment.start).toBe(first.start);
    const check = await client.callTool({ name: "check_booking_availability", arguments: { dateTime: first.start } });
    expect(text(check)).toMatchObject({ available: false, reason: "fully_booked" });
    const again = await client.callTool({
      name: "find_available_appointments",
      arguments: { dateTime: from, limit: 2 },
    });
    expect(text(again).slots.map((s: { start: string }) => s.start)).not.toContain(first.start);
  });

  it("returns failures as isError results holding the problem document", async () => {
    const client = await connect(a);
    const bad = await client.callTool({ name: "create_lead", arguments: { email: "nope", firstname: "x" } });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatchObject({ status: 422, code: "validation_failed", type: "/problems/validation_failed" });
    const conflict = await client.callTool({
      name: "create_incident",
      arguments: { dateTime: "2020-01-01T00:00:00Z", clientName: "X", insectName: "Y" },
    });
    expect(conflict.isError).toBe(true);
    expect(text(conflict)).toMatchObject({ status: 409, code: "slot_unavailable", reason: "in_the_past" });
  });

  it("reads contacts and accounts of the caller's org only", async () => {
    const account = await addAccount(a, "Only A");
    const clientA = await connect(a);
    const clientB = await connect(b);
    const contact = text(
      await clientA.callTool({ name: "create_contact", arguments: { firstName: "Ann", accountId: account.id } }),
    );
    const page = text(
      await clientA.callTool({ name: "list_contacts", arguments: { limit: 5, accountId: account.id } }),
    );
    expect(page.data.map((c: { id: string }) => c.id)).toEqual([contact.id]);
    expect(text(await clientA.callTool({ name: "get_account", arguments: { id: account.id } })).name).toBe("Only A");
    const foreign = await clientB.callTool({ name: "get_account", arguments: { id: account.id } });
    expect(foreign.isError).toBe(true);
    expect(text(foreign).code).toBe("account_not_found");
    expect(text(await clientB.callTool({ name: "list_contacts", arguments: {} })).data).toEqual([]);
  });
});

describe("a lone tools/call (src/mcp/server.ts answers it without building a server)", () => {
  const HEADERS = { Accept: "application/json, text/event-stream", "X-Request-Id": "lone-call-test" };
  const send = (body: unknown, headers: Record<string, string> = {}) =>
    call(a, "/mcp", { body, headers: { ...HEADERS, ...headers } });

  it.each([
    ["a result", 1, "list_contacts", { limit: 2 }],
    ["a result, string id", "call-7", "find_available_appointments", { dateTime: slotAt(2, 15), limit: 2 }],
    ["a problem (404)", 2, "get_account", { id: "acct_missing" }],
    ["a problem (422)", 3, "check_booking_availability", { dateTime: "tomorrow" }],
    ["arguments null", 4, "list_services", null],
    // The batch's call replays the lone one's answer.
    ["a write", 5, "create_lead", { firstName: "Lone", idempotencyKey: "lone-call-5" }],
  ] as const)("%s: byte for byte what the SDK answers for the same call in a batch", async (_name, id, tool, args) => {
    const message = { jsonrpc: "2.0", id, method: "tools/call", params: { name: tool, arguments: args } };
    const lone = await send(message);
    const batch = await send([message]);
    expect(lone.status, lone.text).toBe(200);
    expect(batch.status, batch.text).toBe(200);
    expect(lone.headers.get("Content-Type")).toBe(batch.headers.get("Content-Type"));
    // A batch of one is answered with its one response.
    expect(lone.text).toBe(batch.text);
  });

  it.each([
    ["an unknown tool", { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "nope", arguments: {} } }, {}],
    ["a fractional id", { jsonrpc: "2.0", id: 1.5, method: "tools/call", params: { name: "list_services" } }, {}],
    ["an unknown member", { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_services" }, x: 1 }, {}],
    [
      "an unsupported protocol version",
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_services" } },
      { "Mcp-Protocol-Version": "1999-01-01" },
    ],
    [
      "no event-stream in Accept",
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_services" } },
      { Accept: "application/json" },
    ],
  ] as const)("%s is left to the SDK: its JSON-RPC error", async (_name, message, headers) => {
    const res = await send(message, headers);
    expect(res.body?.error?.code, res.text).toEqual(expect.any(Number));
  });
});
