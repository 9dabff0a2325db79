// The MCP server behind POST /mcp (src/mcp/routes.ts). The SDK is loaded on
// the first such request (src/mcp/sdk.ts) and the tool list built on a role's
// first tools/list, never at startup; a lone tools/call, an agent's every
// turn, is answered without building a server. Each tool is an operation
// declared in src/routes (see operation.ts); a call is dispatched to that
// operation's own route inside this worker, so tools get the very same
// validation, results, problem documents and idempotency as HTTP. Each tool
// call counts once against the rate limit, the request itself only when it
// carries none (docs/api.md, "One request, bounded work"); the tool list holds
// only the tools of the key's role.
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import type { Context } from "hono";
import type { KeyRole } from "../../drizzle/schema";
import type { AppEnv } from "../env";
import { isJsonObject as isObject, readCapped } from "../http/body";
import { mayCall, type Operation, toolAnnotations } from "../http/operation";
import { type FetchApp, jsonSchema, runTool, toolInputSchema } from "../http/tools";
import { once } from "../lib/once";
import { countCall, rateLimited } from "../middleware/rate-limit";

function toolOf(op: Operation) {
  return {
    name: op.tool,
    title: op.summary,
    description: op.description,
    annotations: toolAnnotations(op),
    inputSchema: toolInputSchema(op),
    outputSchema: jsonSchema(op.response(), "output"),
  };
}

// Imported once: each import() call, even of a loaded module, costs a lookup.
const sdk = once(() => import("./sdk"));
type Sdk = Awaited<ReturnType<typeof sdk>>;

const toolLists = new Map<KeyRole, ReturnType<typeof toolOf>[]>();
/** The tools a role may call, built on the role's first tools/list of the isolate (its operations are the app's, fixed). */
function tools(operations: readonly Operation[], role: KeyRole) {
  const list = toolLists.get(role) ?? operations.filter((op) => mayCall(op, role)).map(toolOf);
  toolLists.set(role, list);
  return list;
}

// The SDK transport's own limit, which reading the body here must keep; each
// tool call's body is then held to the API's 64 KiB by its route.
const MCP_MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * The Server's JSON Schema validator, which it uses only for elicitation
 * answers; this server never elicits. Given explicitly, so the SDK never
 * builds its ajv one (left out of the bundle: src/lib/no-ajv.ts).
 */
const NO_ELICITATION: jsonSchemaValidator = {
  getValidator: () => () => ({ valid: false, data: undefined, errorMessage: "this server asks for no elicitation" }),
};

interface SentCalls {
  /** How many tools/call messages the body holds, usable or not: each counts against the rate limit. */
  count: number;
  /** Tool arguments by JSON-RPC id, exactly as parsed from the body. */
  args: Map<unknown, Record<string, unknown>>;
  /** Why a call's params are unusable, by JSON-RPC id. */
  invalid: Map<unknown, string>;
}

/**
 * The tools/call messages of the body, read before the SDK reads them: the
 * SDK's own parsing drops a member named "__proto__" (which the operation's
 * route must see to refuse it, unknown_field, as over HTTP), and answers
 * params of the wrong shape with a validation dump as an internal error. A
 * call with unusable params is given empty ones, for the SDK to pass it on,
 * and answered by the tool handler as invalid params (-32602) in a sentence.
 */
function readCalls(body: unknown): SentCalls {
  const calls: SentCalls = { count: 0, args: new Map(), invalid: new Map() };
  for (const message of Array.isArray(body) ? body : [body]) {
    if (!isObject(message) || message.method !== "tools/call") continue;
    calls.count++;
    const { params } = message;
    const args = isObject(params) ? params.arguments : undefined;
    const problem = !isObject(params)
      ? "params must be an object with the tool's name and its arguments"
      : typeof params.name !== "string"
        ? "params.name must be the name of a tool (a string)"
        : args !== undefined && args !== null && !isObject(args)
          ? "arguments must be an object of the tool's arguments by name"
          : undefined;
    if (problem) {
      calls.invalid.set(message.id, problem);
      message.params = { name: "", arguments: {} };
    } else if (isObject(params)) {
      if (args === null) delete params.arguments; // explicit null means absent
      if (isObject(args)) calls.args.set(message.id, args);
    }
  }
  return calls;
}

/** A call's answer as an MCP tool result: the operation's JSON, or its problem document with isError. */
async function toolResult(c: Context<AppEnv>, fetchApp: FetchApp, op: Operation, args: Record<string, unknown>) {
  const { callId, callerPhone } = c.get("actor");
  const response = await runTool(c, fetchApp, op, args, { channel: "mcp", callId, callerPhone });
  const text = await response.text();
  const content = [{ type: "text" as const, text }];
  // A failure is a tool result carrying the problem document, not a protocol error.
  if (!response.ok) return { content, isError: true };
  return { content, structuredContent: JSON.parse(text) as Record<string, unknown> };
}

/**
 * The body's one tools/call, when the SDK would take it as it is and call a
 * known tool with it: the request passes the transport's checks (Accept,
 * Content-Type, protocol version), the body is that one JSON-RPC request with
 * nothing but a name and arguments in its params. Answered here, as the SDK
 * answers it, without building a server for it; anything else goes to the SDK.
 */
function loneCall(mcp: Sdk, c: Context<AppEnv>, body: unknown, sent: SentCalls, operations: readonly Operation[]) {
  const accept = c.req.header("Accept");
  const version = c.req.header("Mcp-Protocol-Version");
  if (!accept?.includes("application/json") || !accept.includes("text/event-stream")) return undefined;
  if (
    !mcp.isJsonContentType(c.req.header("Content-Type")) ||
    (version && !mcp.SUPPORTED_PROTOCOL_VERSIONS.includes(version))
  )
    return undefined;
  // Counted as a tools/call with usable params: its method and params are there.
  if (!isObject(body) || sent.count !== 1 || sent.invalid.size > 0 || Object.keys(body).length !== 4) return undefined;
  const { jsonrpc, id, params } = body;
  if (jsonrpc !== "2.0" || (typeof id !== "string" && !Number.isSafeInteger(id)) || !isObject(params)) return undefined;
  if (Object.keys(params).some((key) => key !== "name" && key !== "arguments")) return undefined;
  const op = operations.find((o) => o.tool === params.name);
  return op && { id, op, args: sent.args.get(id) ?? {} };
}

/** Answers one POST /mcp (JSON-RPC, stateless: docs/api.md, "MCP"). */
export async function serveMcp(c: Context<AppEnv>, fetchApp: FetchApp, operations: readonly Operation[]) {
  let body: unknown;
  let request = c.req.raw;
  const text = new TextDecoder().decode(await readCapped(c.req.raw, MCP_MAX_BODY_BYTES));
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: the transport reads the text again and answers with its parse error.
    request = new Request(c.req.raw, { body: text });
  }
  const sent = readCalls(body);
  for (let i = 0; i < Math.max(1, sent.count); i++) if (!(await countCall(c))) throw rateLimited(c);
  const mcp = await sdk();
  const lone = loneCall(mcp, c, body, sent, operations);
  if (lone) {
    const result = await toolResult(c, fetchApp, lone.op, lone.args);
    // The SDK's JSON response, member for member (test/integration/mcp/mcp.test.ts holds them equal).
    const answer = JSON.stringify({ result, jsonrpc: "2.0", id: lone.id });
    return new Response(answer, { status: 200, headers: { "Content-Type": "application/json" } });
  }
  const server = new mcp.Server(
    { name: "field-service-api", version: "1.0.0" },
    { capabilities: { tools: {} }, jsonSchemaValidator: NO_ELICITATION },
  );
  const { role } = c.get("actor");
  server.setRequestHandler(mcp.ListToolsRequestSchema, async () => ({ tools: tools(operations, role) }));
  server.setRequestHandler(mcp.CallToolRequestSchema, async ({ params }, extra) => {
    const invalid = sent.invalid.get(extra.requestId);
    if (invalid) throw new mcp.McpError(mcp.ErrorCode.InvalidParams, `Invalid tools/call params: ${invalid}`);
    const op = operations.find((o) => o.tool === params.name);
    if (!op) throw new mcp.McpError(mcp.ErrorCode.InvalidParams, `Unknown tool: ${params.name}`);
    return toolResult(c, fetchApp, op, sent.args.get(extra.requestId) ?? params.arguments ?? {});
  });
  const transport = new mcp.WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  return transport.handleRequest(request, body === undefined ? {} : { parsedBody: body });
}
