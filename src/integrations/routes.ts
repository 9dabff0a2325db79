// Voice-agent platforms (docs/voice-agents.md): the tool definitions to paste
// into each (those the key's role may call), and the request shapes Vapi and
// Retell call tools with. Every call runs its operation as MCP does
// (src/http/tools.ts): the same role check, validation, answers, problem
// documents and idempotency as HTTP, with the caller and call id the
// platform's envelope reports; each call counts once against the rate limit.
import { type Context, Hono } from "hono";
import type { AppEnv } from "../env";
import { isJsonObject as isObject, readJsonObject } from "../http/body";
import { originOf } from "../http/caller";
import { methodNotAllowed } from "../http/method-not-allowed";
import type { Operation } from "../http/operation";
import { ApiError, problemResponse, validationFailed } from "../http/problem";
import { type FetchApp, runTool } from "../http/tools";
import { permitted } from "../middleware/mount";
import { countCall, rateLimit, rateLimited } from "../middleware/rate-limit";
import { PLATFORMS, toolDefinitions } from "./definitions";

// The platforms send the whole call (its transcript too) beside the tool's
// arguments: more than an operation's 64 KiB, which each call's own body keeps.
const PLATFORM_MAX_BODY_BYTES = 1024 * 1024;

/** The platform's JSON object body (415, 413 past 1 MiB, 400 as an operation's). */
const platformBody = async (c: Context<AppEnv>) => (await readJsonObject(c.req.raw, PLATFORM_MAX_BODY_BYTES)).parsed;

/** A tool call's arguments: an object, or (Vapi) its JSON text; null or absent is none. */
function argumentsOf(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return {};
  if (typeof value === "string") {
    try {
      const parsed: unknown = JSON.parse(value);
      return isObject(parsed) ? parsed : undefined;
    } catch {
      return undefined;
    }
  }
  return isObject(value) ? value : undefined;
}

/** A problem document as the text a platform passes to its model. */
async function problemText(c: Context<AppEnv>, error: ApiError): Promise<string> {
  return problemResponse(c, error).text();
}

/** At most this many tool calls in one Vapi message: one request, bounded work. */
export const MAX_VAPI_CALLS = 10;

/** Vapi's call (`message.call`): its id, and the customer's number, else the message's own customer. */
function vapiOrigin(c: Context<AppEnv>, body: Record<string, unknown>) {
  const message = isObject(body.message) ? body.message : {};
  const call = isObject(message.call) ? message.call : {};
  const number = (customer: unknown) => (isObject(customer) ? customer.number : undefined);
  return originOf(c, "vapi", { callId: call.id, numbers: [number(call.customer), number(message.customer)] });
}

/** Retell's call object: its id, and the caller — the `to_number` of an outbound call, else the `from_number`. */
function retellOrigin(c: Context<AppEnv>, body: Record<string, unknown>) {
  const call = isObject(body.call) ? body.call : {};
  const caller = call.direction === "outbound" ? call.to_number : call.from_number;
  return originOf(c, "retell", { callId: call.call_id, numbers: [caller] });
}

interface VapiCall {
  id: string;
  name: string;
  args: unknown;
}

/** The tool calls of Vapi's `tool-calls` server message, or the 422 naming what is wrong with it. */
function vapiCalls(body: Record<string, unknown>): VapiCall[] {
  const message = body.message;
  const list = isObject(message) ? message.toolCallList : undefined;
  if (!isObject(message) || message.type !== "tool-calls" || !Array.isArray(list)) {
    throw validationFailed([
      {
        path: "message",
        code: "invalid_format",
        message: 'must be Vapi\'s tool-calls message: {"type":"tool-calls","toolCallList":[…]}',
      },
    ]);
  }
  if (list.length > MAX_VAPI_CALLS) {
    throw validationFailed([
      {
        path: "message.toolCallList",
        code: "too_big",
        message: `must hold at most ${MAX_VAPI_CALLS} tool calls; nothing was run`,
      },
    ]);
  }
  return list.map((call, i) => {
    const fn = isObject(call) ? call.function : undefined;
    if (!isObject(call) || typeof call.id !== "string" || !isObject(fn) || typeof fn.name !== "string") {
      throw validationFailed([
        {
          path: `message.toolCallList[${i}]`,
          code: "invalid_format",
          message: 'must be {"id","type":"function","function":{"name","arguments"}}',
        },
      ]);
    }
    return { id: call.id, name: fn.name, args: fn.arguments };
  });
}

export function integrationRoutes(fetchApp: FetchApp, operations: readonly Operation[]) {
  const byTool = (name: string) => operations.find((op) => op.tool === name);
  // Static paths only ("/vapi/tools", "/retell/find_caller", …), not "/:platform/tools" or "/retell/:tool":
  // hono's one-regex router refuses a parameter beside a static segment at the same place, and the
  // whole app would fall back to its slower trie router (test/integration/http/router.node.test.ts).
  const routes = new Hono<AppEnv>();
  for (const platform of PLATFORMS)
    routes
      .get(`/${platform}/tools`, rateLimit, (c) => {
        if (new URL(c.req.url).search !== "")
          throw validationFailed([{ path: "query", code: "unknown_field", message: "takes no query parameters" }]);
        const origin = new URL(c.req.url).origin;
        const target = { origin, orgId: c.get("orgId"), role: c.get("actor").role };
        return c.json(toolDefinitions(platform, operations, target), 200);
      })
      .all(`/${platform}/tools`, methodNotAllowed("GET"));
  routes
    // Vapi: every call of the message in order, each answered in `results`, never a failed request.
    .post("/vapi/tool-calls", async (c) => {
      // Each call counts against the rate limit; a message whose calls cannot be read counts once.
      let body: Record<string, unknown>;
      let calls: VapiCall[];
      try {
        body = await platformBody(c);
        calls = vapiCalls(body);
      } catch (error) {
        if (!(await countCall(c))) throw rateLimited(c);
        throw error;
      }
      const origin = vapiOrigin(c, body);
      const results: Record<string, string>[] = [];
      let limited = false;
      for (const call of calls) {
        const op = byTool(call.name);
        const args = argumentsOf(call.args);
        const answer = (outcome: { result: string } | { error: string }) =>
          results.push({ toolCallId: call.id, name: call.name, ...outcome });
        // Over the limit: this call and every later one are not run.
        limited ||= !(await countCall(c));
        if (limited) {
          answer({ error: await problemText(c, rateLimited(c)) });
          continue;
        }
        if (!op) {
          answer({ error: await problemText(c, new ApiError("not_found", `No tool named ${call.name}`)) });
          continue;
        }
        if (!args) {
          const message = "must be an object of the tool's arguments, or its JSON text";
          answer({
            error: await problemText(c, validationFailed([{ path: "arguments", code: "invalid_type", message }])),
          });
          continue;
        }
        const response = await runTool(c, fetchApp, op, args, origin);
        const text = await response.text();
        answer(response.ok ? { result: text } : { error: text });
      }
      return c.json({ results }, 200);
    })
    .all("/vapi/tool-calls", methodNotAllowed("POST"));
  for (const op of operations) {
    const tool = op.tool;
    // Retell: one custom function's call, answered with its operation's own status and body.
    routes
      .post(`/retell/${tool}`, permitted(op), rateLimit, async (c) => {
        const body = await platformBody(c);
        const args = argumentsOf(body.args);
        if (body.name !== undefined && body.name !== tool)
          throw validationFailed([
            { path: "name", code: "invalid_value", message: `must be ${tool}, the tool of this URL` },
          ]);
        if (!args || typeof body.args === "string")
          throw validationFailed([
            { path: "args", code: "invalid_type", message: "must be an object of the tool's arguments" },
          ]);
        const origin = retellOrigin(c, body);
        return runTool(c, fetchApp, op, args, origin);
      })
      .all(`/retell/${tool}`, methodNotAllowed("POST"));
  }
  return routes;
}
