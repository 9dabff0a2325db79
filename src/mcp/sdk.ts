// The parts of the MCP SDK that src/mcp/server.ts uses, in a module of their
// own that the server imports on its first POST /mcp: no isolate evaluates
// the SDK (its protocol's zod schemas) at startup. It imports nothing of the
// app's: esbuild wraps a dynamically imported module and all it imports in
// lazy initialisers, which cost every isolate ~8 ms of startup when they held
// the whole app (docs/decisions.md; test/e2e/deploy.e2e.test.ts holds it).
export { Server } from "@modelcontextprotocol/sdk/server/index.js";
export { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
export { isJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";
export {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
