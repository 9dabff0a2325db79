// The agent-facing surface over real HTTP against `wrangler dev`: the official
// MCP SDK client lists the tools, finds slots, books one and sees it gone; the
// served OpenAPI document validates as 3.1, the docs page is served, and a
// client generated from the document (openapi-typescript + openapi-fetch)
// type-checks under strict settings and works.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Validator } from "@seriousme/openapi-schema-validator";
import openapiTS, { astToString, type OpenAPI3 } from "openapi-typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { credentialsOf } from "../support/http";
import { OPEN_ALWAYS } from "../support/schedules";
import { slotAt } from "../support/time";
import { admin, applyMigrations, DevServer, freePort, jsonLine, ROOT, run } from "./harness";

let dir: string;
let server: DevServer | undefined;
let org: { orgId: string; apiKey: string };

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-mcp-"));
  await applyMigrations(dir);
  const dev = await DevServer.start(dir, await freePort());
  server = dev;
  org = jsonLine(await admin(dir, ["org", "create", "--name", "MCP Org", "--time-zone", "UTC"]), "org create");
  const schedule = path.join(dir, "schedule.json");
  fs.writeFileSync(schedule, JSON.stringify({ minNoticeMinutes: 0, weeklyHours: OPEN_ALWAYS }));
  jsonLine(await admin(dir, ["schedule", "set", "--org", org.orgId, "--file", schedule]), "schedule set");
});

afterAll(async () => {
  await server?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

// biome-ignore lint/suspicious/noExplicitAny: tool results are arbitrary JSON
const json = (result: object): any => JSON.parse((result as { content: { text: string }[] }).content[0]!.text);

describe("MCP over wrangler dev", () => {
  it("lists the tools, finds slots, books one and sees it gone", async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${server!.baseUrl}/mcp`), {
      requestInit: { headers: credentialsOf(org) },
    });
    const client = new Client({ name: "e2e-agent", version: "1.0.0" });
    await client.connect(transport);
    const { tools } = await client.listTools();
    // Every operation of docs/api.md's table: an office key may call them all.
    expect(tools).toHaveLength(23);
    expect(tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(["hold_slot", "release_hold", "get_call_context"]),
    );
    for (const tool of tools) {
      expect(tool.annotations, tool.name).toMatchObject({ title: tool.title, openWorldHint: false });
      expect(tool.annotations?.readOnlyHint, tool.name).toBe(/^(find|check|get|list)_/.test(tool.name));
    }
    // Stateless: the optional event stream is refused at once, not held open.
    const stream = await fetch(`${server!.baseUrl}/mcp`, {
      headers: { ...credentialsOf(org), Accept: "text/event-stream" },
      signal: AbortSignal.timeout(5_000),
    });
    expect([stream.status, stream.headers.get("Allow")]).toEqual([405, "POST"]);

    const from = slotAt(2, 10);
    const found = json(
      await client.callTool({ name: "find_available_appointments", arguments: { dateTime: from, limit: 3 } }),
    );
    expect(found.slots).toHaveLength(3);
    const slot = found.slots[0].start;
    expect(slot).toBe(from);

    const check = json(await client.callTool({ name: "check_booking_availability", arguments: { dateTime: slot } }));
    expect(check).toMatchObject({ available: true, reason: null });

    const booked = await client.callTool({
      name: "create_incident",
      arguments: { dateTime: slot, clientName: "Voice caller", insectName: "Bed bugs" },
    });
    expect(booked.isError).toBeFalsy();
    expect(json(booked)).toMatchObject({ dateTime: slot, appointment: { start: slot, remaining: 0 } });

    const after = json(
      await client.callTool({ name: "find_available_appointments", arguments: { dateTime: from, limit: 3 } }),
    );
    expect(after.slots.map((s: { start: string }) => s.start)).not.toContain(slot);
    const again = await client.callTool({
      name: "create_incident",
      arguments: { dateTime: slot, clientName: "Second caller", insectName: "Ants" },
    });
    expect(again.isError).toBe(true);
    expect(json(again)).toMatchObject({ status: 409, code: "slot_unavailable", reason: "fully_booked" });
    await client.close();
  });

  it("refuses a client with a wrong key", async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${server!.baseUrl}/mcp`), {
      requestInit: { headers: { "X-API-KEY": `fsk_${"x".repeat(40)}`, "X-ORG-ID": org.orgId } },
    });
    await expect(new Client({ name: "intruder", version: "1.0.0" }).connect(transport)).rejects.toThrow(/401/);
  });
});

describe("OpenAPI document and docs page over wrangler dev", () => {
  it("serves a valid OpenAPI 3.1 document and a docs page, without credentials", async () => {
    const doc = await (await fetch(`${server!.baseUrl}/api/v1/openapi.json`)).json();
    const validator = new Validator();
    const result = await validator.validate(doc as Parameters<Validator["validate"]>[0]);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    const page = await fetch(`${server!.baseUrl}/docs`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("/api/v1/ai-agent/available-appointments");
  });
});

// Strict settings an integrator may well have; the client must compile under them without a cast.
const STRICT = {
  strict: true,
  noUncheckedIndexedAccess: true,
  exactOptionalPropertyTypes: true,
  noEmit: true,
  target: "ES2022",
  module: "ESNext",
  moduleResolution: "Bundler",
  lib: ["ES2022", "DOM"],
  skipLibCheck: true,
  types: [],
};

describe("a client generated from the served document", () => {
  it("type-checks with natural values (numbers for numbers) and no casts", async () => {
    const doc = await (await fetch(`${server!.baseUrl}/api/v1/openapi.json`)).json<OpenAPI3>();
    fs.mkdirSync(path.join(ROOT, ".test-results"), { recursive: true });
    const out = fs.mkdtempSync(path.join(ROOT, ".test-results", "client-"));
    try {
      fs.writeFileSync(path.join(out, "api.d.ts"), astToString(await openapiTS(doc)));
      fs.copyFileSync(path.join(import.meta.dirname, "client", "client.ts"), path.join(out, "client.ts"));
      fs.writeFileSync(
        path.join(out, "tsconfig.json"),
        JSON.stringify({ compilerOptions: STRICT, files: ["client.ts"] }),
      );
      const tsc = await run("npx", ["tsc", "-p", out]);
      expect(tsc.code, tsc.stdout + tsc.stderr).toBe(0);
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });

  it("runs find → check → book → lead → contact → list → account against wrangler dev", async () => {
    const accounts = path.join(dir, "client-accounts.json");
    fs.writeFileSync(accounts, JSON.stringify([{ name: "Client Co" }]));
    jsonLine(await admin(dir, ["accounts", "import", "--org", org.orgId, "--file", accounts]), "accounts import");
    // Loaded by a computed path: this project's type check must not follow it
    // to ./api, which exists only once the test above has generated it.
    const clientPath = path.join(import.meta.dirname, "client", "client.ts");
    const { walkThrough } = await import(/* @vite-ignore */ clientPath);
    const walk = await walkThrough(server!.baseUrl, org, slotAt(3, 10));
    expect(walk).toEqual({
      slots: 3,
      available: true,
      incidentId: expect.stringMatching(/^inc_/),
      remaining: 0,
      replayed: "true",
      leadValue: 1800,
      contactAccountId: expect.stringMatching(/^acct_/),
      pageSize: 1,
      hasMore: false,
      accountName: "Client Co",
      missingAccountCode: "account_not_found",
      refusedCode: "slot_unavailable",
      eventIncidentId: walk.incidentId,
    });
  });
});
