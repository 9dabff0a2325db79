// MCP server (docs/api.md, "MCP"): stateless Streamable HTTP at /mcp, behind the same
// auth. The SDK is loaded by the first POST, so that no isolate evaluates it at
// startup (src/mcp/sdk.ts); the tool list is built on first use (src/mcp/server.ts).
import { Hono } from "hono";
import type { AppEnv } from "../env";
import { methodNotAllowed } from "../http/method-not-allowed";
import type { Operation } from "../http/operation";
import type { FetchApp } from "../http/tools";
import { serveMcp } from "./server";

export function mcpRoutes(fetchApp: FetchApp, operations: readonly Operation[]) {
  // Stateless (docs/api.md, "MCP"): no sessions, no message of its own to stream, so
  // GET (the optional SSE stream) and DELETE (ending a session) are 405.
  return (
    new Hono<AppEnv>()
      // The server counts the request's tool calls against the rate limit (or the request, with none).
      .post("/", async (c) => serveMcp(c, fetchApp, operations))
      .all("/", methodNotAllowed("POST"))
  );
}
