// The MCP server at /mcp, through request.ts: raw JSON-RPC calls (stateless
// Streamable HTTP, JSON responses) and the official SDK client.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type Credentials, credentialsOf, type ReadResponse, withHeaders } from "./http";
import { type Bindings, call, fetchApp } from "./request";

export interface McpOptions {
  /** Sent after the credentials (an explicit list of credentials goes with a null tenant). */
  headers?: HeadersInit;
  bindings?: Bindings;
}

const withAccept = (headers: HeadersInit | undefined) =>
  withHeaders({ Accept: "application/json, text/event-stream" }, headers);

/** A JSON-RPC tools/call as `tenant`. */
export function mcpCall(tenant: Credentials | null, tool: string, args: unknown, options: McpOptions = {}) {
  return call(tenant, "/mcp", {
    body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: tool, arguments: args } },
    headers: withAccept(options.headers),
    bindings: options.bindings,
  });
}

/** A JSON-RPC tools/list as `tenant`. */
export function mcpList(tenant: Credentials | null, options: McpOptions = {}) {
  return call(tenant, "/mcp", {
    body: { jsonrpc: "2.0", id: 1, method: "tools/list" },
    headers: withAccept(options.headers),
    bindings: options.bindings,
  });
}

/** The operation's answer inside a tools/call result: the problem document of a failed call, else the result. */
export function toolAnswer(res: ReadResponse): {
  isError: boolean;
  status: number;
  body: Record<string, unknown> & { [k: string]: unknown };
  /** The result's text, as sent. */
  text: string;
} {
  const result = res.body?.result;
  if (!result) throw new Error(`not a tools/call result: ${res.status} ${res.text}`);
  const text: string = result.content[0].text;
  const body = JSON.parse(text);
  return { isError: result.isError === true, status: result.isError ? body.status : 200, body, text };
}

export interface McpClientOptions {
  headers?: Record<string, string>;
  bindings?: Bindings;
  /** Sees every response of the session (initialize, notifications, calls). */
  onResponse?: (response: Response) => void;
}

/** The SDK's client, connected as `tenant` (no credentials when null) through app.fetch. */
export async function mcpClient(tenant: Credentials | null, options: McpClientOptions = {}) {
  const transport = new StreamableHTTPClientTransport(new URL("https://api.test/mcp"), {
    requestInit: { headers: { ...(tenant ? credentialsOf(tenant) : {}), ...options.headers } },
    fetch: async (url, init) => {
      const response = await fetchApp(new Request(url, init), options.bindings);
      options.onResponse?.(response);
      return response;
    },
  });
  const client = new Client({ name: "test-client", version: "1.0.0" });
  await client.connect(transport);
  return client;
}
