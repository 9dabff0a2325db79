// An operation as a tool (docs/api.md, "MCP" and "Voice-agent platforms"):
// its arguments' JSON Schema (path parameters, then its body or query, and an
// optional `idempotencyKey` on write tools), and one call of it run as the
// operation's own HTTP request inside this worker, so that every tool
// transport (MCP, Vapi, Retell) gets the very same validation, answers,
// problem documents, role check and idempotency as HTTP. Each call reaches
// its operation with the origin its transport read (channel, call id,
// caller), for the binding and the events' actor; the transport counted the
// call against the rate limit already (docs/api.md, "One request, bounded work").
import type { Context } from "hono";
import * as z from "zod";
import { BOOKMARK_HEADER } from "../db/client";
import type { AppEnv, Bindings, CallOrigin } from "../env";
import type { Operation } from "./operation";
import { problemResponse, validationFailed } from "./problem";

export type FetchApp = (request: Request, env: Bindings, ctx: ExecutionContext) => Response | Promise<Response>;

/** The argument of a write tool that is that call's Idempotency-Key. */
export const IDEMPOTENCY_ARGUMENT = "idempotencyKey";
const KEY = /^[\x20-\x7e]{1,255}$/;

/** Whether a tool writes (a POST that is not a read): it takes an `idempotencyKey` argument. */
export const isWriteTool = (op: Operation) => op.method === "post" && op.effect !== "read";

/** Applies a schema's own `override` (as zod-openapi does for the document), so tools and document agree. */
function documentedAs({ zodSchema, jsonSchema }: { zodSchema: z.core.$ZodType; jsonSchema: Record<string, unknown> }) {
  const override = (z.globalRegistry.get(zodSchema) as { override?: unknown } | undefined)?.override;
  delete jsonSchema.override;
  if (typeof override === "function") override({ jsonSchema });
}

/** JSON Schema of a zod object schema with the object at the root, as tools want (zod puts schemas with an id behind a $ref). */
export function jsonSchema(schema: z.ZodType, io: "input" | "output") {
  const {
    $schema: _,
    $ref,
    $defs,
    ...root
  } = z.toJSONSchema(schema, { io, unrepresentable: "any", override: documentedAs }) as Record<string, unknown>;
  const defs = $defs as Record<string, object> | undefined;
  const target = typeof $ref === "string" && defs ? defs[$ref.replace("#/$defs/", "")] : root;
  return { ...target, ...(defs ? { $defs: defs } : {}) } as { type: "object" } & Record<string, unknown>;
}

const idempotencyArgument = () =>
  z.string().min(1).max(255).regex(KEY).optional().meta({
    description:
      "This call's Idempotency-Key (1 to 255 printable ASCII characters): a retry with the same key returns the first answer instead of writing again",
  });

/** A tool's arguments: the operation's path parameters (an `{id}` becomes an `id` argument) with its body or query, and a write's idempotencyKey. */
export function toolInput(op: Operation): z.ZodType {
  const rest = (op.body ?? op.query)?.() as z.ZodObject | undefined;
  const params = op.params?.() as z.ZodObject | undefined;
  const input = !params
    ? (rest ?? z.strictObject({}))
    : !rest
      ? params
      : z.strictObject({ ...params.shape, ...rest.shape });
  return isWriteTool(op) ? input.extend({ [IDEMPOTENCY_ARGUMENT]: idempotencyArgument() }) : input;
}

/** The JSON Schema of a tool's arguments. */
export const toolInputSchema = (op: Operation) => jsonSchema(toolInput(op), "input");

/**
 * An argument as URL text, whatever JSON the client sent: objects as JSON
 * (the route then refuses them), lone surrogates as U+FFFD (a URL cannot
 * carry them), so that building the request never throws.
 */
function queryText(value: unknown): string {
  const text = typeof value === "object" && value !== null ? JSON.stringify(value) : String(value);
  return text.replace(/\p{Surrogate}/gu, "\uFFFD");
}

/**
 * An argument as one path segment. "", "." and ".." would not stay one (a URL
 * drops or climbs them, reaching another route); as no id is any of them, they
 * become a segment that names nothing (a NUL appended), so the route answers
 * its own "not found" after validating the body, as over HTTP.
 */
const pathSegment = (text: string) =>
  /^\.{0,2}$/.test(text) ? `${encodeURIComponent(text)}%00` : encodeURIComponent(text);

/** The HTTP request that performs `op` with `args` (a write's idempotencyKey taken out), as the tool's caller. */
function operationRequest(
  c: Context<AppEnv>,
  op: Operation,
  args: Record<string, unknown>,
  { bookmark, idempotencyKey }: { bookmark?: string; idempotencyKey?: string },
): Request {
  const url = new URL(op.path, c.req.url);
  const headers = new Headers({
    "X-API-KEY": c.req.header("X-API-KEY") ?? "",
    "X-ORG-ID": c.req.header("X-ORG-ID") ?? "",
    "X-Request-Id": c.get("requestId"),
  });
  if (bookmark) headers.set(BOOKMARK_HEADER, bookmark);
  // Path parameters fill the template; the other arguments are the body or the query, validated by the route.
  const isPathParameter = (name: string) => op.path.includes(`{${name}}`);
  for (const [name, value] of Object.entries(args).filter(([name]) => isPathParameter(name)))
    url.pathname = url.pathname.replace(`%7B${name}%7D`, pathSegment(queryText(value)));
  // fromEntries, so that a "__proto__" argument stays a member (and is refused by the route).
  const rest = Object.fromEntries(Object.entries(args).filter(([name]) => !isPathParameter(name)));
  if (op.method === "post") {
    headers.set("Content-Type", "application/json");
    const key = idempotencyKey ?? c.req.header("Idempotency-Key");
    if (key !== undefined) headers.set("Idempotency-Key", key);
    return new Request(url, { method: "POST", headers, body: JSON.stringify(rest) });
  }
  for (const [name, value] of Object.entries(rest)) {
    if (value !== undefined && value !== null) url.searchParams.set(name, queryText(value));
  }
  return new Request(url, { method: "GET", headers });
}

// The transport counted the call already.
const UNLIMITED: RateLimit = { limit: async () => ({ success: true }) };

/** How a tool call runs: where it came from, and the D1 session it continues. */
export interface ToolCall {
  origin: CallOrigin;
  /** Chains the calls' D1 sessions. */
  bookmark?: string;
}

/**
 * Runs one call of `op` with `args` as its own request: the operation's
 * status and JSON body (a problem document on failure). A write tool's
 * `idempotencyKey` argument is that call's Idempotency-Key, in place of the
 * carrying request's header.
 */
export async function runTool(
  c: Context<AppEnv>,
  fetchApp: FetchApp,
  op: Operation,
  args: Record<string, unknown>,
  { origin, bookmark }: ToolCall,
): Promise<Response> {
  let idempotencyKey: string | undefined;
  if (isWriteTool(op) && Object.hasOwn(args, IDEMPOTENCY_ARGUMENT)) {
    const { [IDEMPOTENCY_ARGUMENT]: key, ...rest } = args;
    args = Object.fromEntries(Object.entries(rest));
    if (key !== undefined && key !== null) {
      if (typeof key !== "string" || !KEY.test(key)) {
        const message = "must be a string of 1 to 255 printable ASCII characters";
        return problemResponse(c, validationFailed([{ path: IDEMPOTENCY_ARGUMENT, code: "invalid_format", message }]));
      }
      idempotencyKey = key;
    }
  }
  const request = operationRequest(c, op, args, { bookmark, idempotencyKey });
  return fetchApp(request, { ...c.env, RATE_LIMITER: UNLIMITED, TOOL_CALL: origin }, c.executionCtx);
}
