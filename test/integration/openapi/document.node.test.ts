// The OpenAPI document is valid OpenAPI 3.1 and describes exactly the routes
// the app serves (the document is built from the same operation table and zod
// schemas that validate requests; this keeps the app's routing honest too).
import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import app from "../../../src/app";
import type { Operation } from "../../../src/http/operation";
import { openApiDocument } from "../../../src/openapi/document";
import { OPERATIONS } from "../../../src/routes";
import { strict } from "../../support/strict";

const doc = openApiDocument(OPERATIONS) as unknown as {
  paths: Record<string, Record<string, { responses: Record<string, unknown>; security?: unknown[] }>>;
  components: { securitySchemes: Record<string, { name: string }> };
};
// Served, but not API operations: the document itself, its page, the MCP endpoint, the dispatch
// board's page and its files (docs/api.md, "The dispatch board"), and the voice platforms' adapters
// under /api/v1/integrations/, which carry operations in the platforms' shapes (docs/voice-agents.md).
const NOT_OPERATIONS = new Set([
  "/api/v1/openapi.json",
  "/docs",
  "/mcp",
  "/board",
  "/board.js",
  "/board.css",
  "/board.svg",
]);
const notAnOperation = (path: string) => NOT_OPERATIONS.has(path) || path.startsWith("/api/v1/integrations/");

describe("OpenAPI document", () => {
  it("validates against the OpenAPI 3.1 schema", async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc) as unknown as Parameters<Validator["validate"]>[0]);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
    // The validator compiles the whole 3.1 meta-schema: seconds on a busy shared machine.
  }, 30_000);

  it("lists every route the app serves, and nothing else", () => {
    const served = app.routes
      .filter((r) => r.method === "GET" || r.method === "POST")
      .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:(\w+)/g, "{$1}")}`)
      .filter((route) => !notAnOperation(route.split(" ")[1]!));
    const documented = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((m) => `${m} ${path}`),
    );
    expect([...new Set(served)].sort()).toEqual(documented.sort());
  });

  it("declares both auth headers, required together on every /api/v1 operation", () => {
    expect(
      Object.values(doc.components.securitySchemes)
        .map((s) => s.name)
        .sort(),
    ).toEqual(["X-API-KEY", "X-ORG-ID"]);
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const op of Object.values(methods)) {
        if (path.startsWith("/api/v1/")) {
          expect(op.security).toBeUndefined(); // inherits the document-wide requirement
          expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["200", "401", "422", "429", "500", "503"]));
        } else expect(op.security).toEqual([]);
      }
    }
  });
});

describe("examples", () => {
  type Parameter = { in: string; name: string; schema?: { example?: unknown } };
  type Documented = {
    parameters?: Parameter[];
    requestBody?: { content: Record<string, { example?: unknown }> };
    responses: Record<string, { content?: Record<string, { example?: unknown }> }>;
  };
  const documented = (op: Operation) => (doc.paths[op.path]?.[op.method] ?? {}) as unknown as Documented;

  it.each(OPERATIONS.map((op) => [op.operationId, op] as const))(
    "%s: a request example and a 200 example, each valid against its own schema",
    (_id, op) => {
      const entry = documented(op);
      expect(
        strict(op.response()).safeParse(entry.responses["200"]?.content?.["application/json"]?.example).error,
      ).toBe(undefined);
      if (op.body) {
        const example = entry.requestBody?.content["application/json"]?.example;
        expect(example).toBeDefined();
        expect(op.body().safeParse(example).error).toBe(undefined);
      }
      // Parameters arrive as text: each documented example, as text, must pass the operation's own validation.
      for (const [where, schema] of [
        ["query", op.query],
        ["path", op.params],
      ] as const) {
        if (!schema) continue;
        const params = (entry.parameters ?? []).filter((p) => p.in === where);
        expect(params.length).toBeGreaterThan(0);
        for (const p of params) expect(p.schema?.example, `${op.operationId} ${p.name}`).toBeDefined();
        const values = Object.fromEntries(params.map((p) => [p.name, String(p.schema?.example)]));
        expect(schema().safeParse(values).error).toBe(undefined);
      }
    },
  );
});
