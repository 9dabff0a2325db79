// The OpenAPI document is valid OpenAPI 3.1 and describes exactly the routes
// the app serves (the document is built from the same operation table and zod
// schemas that validate requests; this keeps the app's routing honest too).
import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import app from "../../../src/app";
import { openApiDocument } from "../../../src/openapi/document";

const doc = openApiDocument() as unknown as {
  paths: Record<string, Record<string, { responses: Record<string, unknown>; security?: unknown[] }>>;
  components: { securitySchemes: Record<string, { name: string }> };
};
// Served, but not API operations: the document itself, its page and the MCP endpoint.
const NOT_OPERATIONS = new Set(["/api/v1/openapi.json", "/docs", "/mcp"]);

describe("OpenAPI document", () => {
  it("validates against the OpenAPI 3.1 schema", async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc) as unknown as Parameters<Validator["validate"]>[0]);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("lists every route the app serves, and nothing else", () => {
    const served = app.routes
      .filter((r) => r.method === "GET" || r.method === "POST")
      .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:(\w+)/g, "{$1}")}`)
      .filter((route) => !NOT_OPERATIONS.has(route.split(" ")[1]!));
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
