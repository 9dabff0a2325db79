// What `zod-to-json-schema` resolves to in the deployed bundle (wrangler.toml
// [alias]). The MCP SDK imports it for zod 3 schemas in a function
// (toJsonSchemaCompat) this worker never reaches: its schemas are zod 4 and its
// tools' JSON Schemas are built by src/http/tools.ts. esbuild keeps the
// package's modules anyway (about 1.3 KB minified). Tests and Node use the real one.
export function zodToJsonSchema(): never {
  throw new Error("zod-to-json-schema is not bundled");
}
