// /mcp is stateless (docs/api.md, "MCP"): GET (the optional SSE stream) and DELETE
// answer 405 at once, after authentication; and every tool carries the
// annotations its operation's declaration implies, which this file checks
// against what each operation really does to D1.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "../../../src/openapi/document";
import { OPERATIONS } from "../../../src/routes";
import { wrapD1 } from "../../support/d1";
import { bookIncident } from "../../support/incidents";
import { mcpCall, mcpClient, mcpList } from "../../support/mcp";
import { expectProblem } from "../../support/problem";
import { call } from "../../support/request";
import { addAccount, openTenant } from "../../support/tenants";
import { slotAt } from "../../support/time";

describe("GET and DELETE /mcp", () => {
  it.each(["GET", "DELETE"])("%s answers 405 with Allow: POST, at once", async (method) => {
    const t = await openTenant();
    const res = await call(t, "/mcp", { method, headers: { Accept: "text/event-stream" } });
    expectProblem(res, 405, "method_not_allowed");
    expect(res.headers.get("Allow")).toBe("POST");
  });

  it.each(["GET", "DELETE"])("%s without credentials is the uniform 401", async (method) => {
    expectProblem(
      await call(null, "/mcp", { method, headers: { Accept: "text/event-stream" } }),
      401,
      "unauthenticated",
    );
  });

  it("the SDK client still connects, lists and calls (it does without the stream)", async () => {
    const client = await mcpClient(await openTenant());
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(0);
    const result = await client.callTool({ name: "list_contacts", arguments: {} });
    expect(result.isError).toBeFalsy();
    await client.close();
  });
});

// A successful call of every tool; a tool added without a sample here fails the test below.
interface Ids {
  accountId: string;
  /** Two scheduled incidents: one to cancel, one to move. */
  incidents: [string, string];
}

const SAMPLES: Record<string, (ids: Ids) => Record<string, unknown>> = {
  find_available_appointments: () => ({ dateTime: slotAt(), limit: 2 }),
  check_booking_availability: () => ({ dateTime: slotAt() }),
  create_incident: () => ({ dateTime: slotAt(), clientName: "Ann", insectName: "Ants" }),
  find_caller: () => ({ phone: "+19175550134" }),
  create_lead: () => ({ firstName: "Ann" }),
  create_contact: () => ({ firstName: "Ann" }),
  list_contacts: () => ({ limit: 5 }),
  get_account: ({ accountId }) => ({ id: accountId }),
  get_incident: ({ incidents }) => ({ id: incidents[0] }),
  list_incidents: () => ({ status: "scheduled" }),
  cancel_incident: ({ incidents }) => ({ id: incidents[0], reason: "moved away" }),
  reschedule_incident: ({ incidents }) => ({ id: incidents[1], dateTime: slotAt(3) }),
  list_events: () => ({ type: "incident.created" }),
};

const WRITE = /^\s*(insert|update|delete)\b/i;

describe("tool annotations", () => {
  it("every tool declares title and the four hints, openWorldHint false, as docs/api.md names them", async () => {
    const { tools } = (await mcpList(await openTenant())).body.result;
    for (const tool of tools) {
      expect(tool.annotations, tool.name).toEqual({
        title: tool.title,
        readOnlyHint: expect.any(Boolean),
        destructiveHint: expect.any(Boolean),
        idempotentHint: expect.any(Boolean),
        openWorldHint: false,
      });
      const read = /^(find|check|get|list)_/.test(tool.name);
      expect(tool.annotations.readOnlyHint, tool.name).toBe(read);
      if (tool.name.startsWith("create_")) expect(tool.annotations.destructiveHint, tool.name).toBe(false);
    }
  });

  it("the read-only tools are exactly those whose calls write nothing, and the document says the same", async () => {
    const t = await openTenant("Annotated", { capacity: 5 });
    const account = await addAccount(t, "Ann");
    const ids: Ids = { accountId: account.id, incidents: [(await bookIncident(t)).id, (await bookIncident(t)).id] };
    const { tools } = (await mcpList(t)).body.result;
    const operations = Object.values(openApiDocument(OPERATIONS).paths ?? {}).flatMap((methods) =>
      Object.values(methods ?? {}),
    );
    for (const tool of tools) {
      const sample = SAMPLES[tool.name];
      expect(sample, `a sample call of ${tool.name}`).toBeDefined();
      const recorded = wrapD1(env.DB);
      const res = await mcpCall(t, tool.name, sample!(ids), { bindings: { DB: recorded.db } });
      expect(res.body.result.isError, `${tool.name}: ${res.text}`).toBeFalsy();
      // The key's last-use hint is the auth middleware's, not the operation's.
      const writes = recorded.trips
        .flatMap((trip) => trip.sql)
        .filter((sql) => WRITE.test(sql) && !/api_keys/.test(sql));
      expect(writes.length === 0, `${tool.name} writes: ${writes.join("; ")}`).toBe(tool.annotations.readOnlyHint);
      const documented = operations.find((op) => op?.operationId !== undefined && op.summary === tool.title);
      expect(documented?.["x-read-only" as never], tool.name).toBe(tool.annotations.readOnlyHint);
    }
  });
});
