// /mcp is stateless (docs/api.md, "MCP"): GET (the optional SSE stream) and DELETE
// answer 405 at once, after authentication; and every tool carries the
// annotations its operation's declaration implies, which this file checks
// against what each operation's sample call in the operation samples
// (test/support/operations.ts) really does to D1.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "../../../src/openapi/document";
import { OPERATIONS as DECLARED } from "../../../src/routes";
import { wrapD1 } from "../../support/d1";
import { mcpClient, mcpList } from "../../support/mcp";
import { fixture, OPERATIONS, send, TOOLS } from "../../support/operations";
import { expectProblem } from "../../support/problem";
import { call } from "../../support/request";
import { openTenant } from "../../support/tenants";

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

const WRITE = /^\s*(insert|update|delete)\b/i;
/** The operations of the OpenAPI document. */
const DOCUMENTED = Object.values(openApiDocument(DECLARED).paths ?? {}).flatMap((methods) =>
  Object.values(methods ?? {}),
);

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

  it("lists exactly the sampled tools", async () => {
    const { tools } = (await mcpList(await openTenant())).body.result;
    expect(tools.map((tool: { name: string }) => tool.name).sort()).toEqual(TOOLS);
  });

  // Each tool's sample call (test/support/operations.ts), on a fixture of its own.
  it.each(OPERATIONS.map((op) => [op.tool, op] as const))(
    "%s is read-only exactly when its call writes nothing, and the document says the same",
    async (_tool, op) => {
      const f = await fixture(op);
      const { tools } = (await mcpList(f.tenant)).body.result;
      const tool = tools.find((t: { name: string }) => t.name === op.tool);
      expect(tool, `${op.tool} in the tool list`).toBeDefined();
      const recorded = wrapD1(env.DB);
      const res = await send(recorded.db, "mcp", op, f);
      expect(res.body.result.isError, res.text).toBeFalsy();
      // The key's last-use hint is the auth middleware's, not the operation's.
      const writes = recorded.trips
        .flatMap((trip) => trip.sql)
        .filter((sql) => WRITE.test(sql) && !/api_keys/.test(sql));
      expect(writes.length === 0, `${op.tool} writes: ${writes.join("; ")}`).toBe(tool.annotations.readOnlyHint);
      // A write creates (hold_slot too: each call a new hold) or changes what exists (release_hold: again is the same).
      if (!tool.annotations.readOnlyHint)
        expect([tool.annotations.destructiveHint, tool.annotations.idempotentHint], op.tool).toEqual(
          op.changes ? [true, true] : [false, false],
        );
      const documented = DOCUMENTED.find((d) => d?.operationId !== undefined && d.summary === tool.title);
      expect(documented?.["x-read-only" as never], op.tool).toBe(tool.annotations.readOnlyHint);
    },
  );
});
