// An operation as a tool (docs/api.md, "MCP" and "Voice-agent platforms"):
// its arguments' JSON Schema (path parameters, then its body or query, and an
// optional `idempotencyKey` on write tools), and one call of it run as the
// operation's own HTTP request through the operation's own chain (the tool
// operations of src/middleware/mount.ts), so that every tool transport (MCP,
// Vapi, Retell) gets the very same validation, answers, problem documents,
// role check and idempotency as HTTP. What the request carrying the call did
// once is not done again: the call adopts its request id, key, org and D1
// session, with the origin its transport read (channel, call id, caller) for
// the binding and the events' actor; it writes no log line of its own (an
// unexpected error goes on the carrier's), and the transport counted it
// against the rate limit already (docs/api.md, "One request, bounded work").
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import * as z from "zod/v4";
import type { AppEnv, Bindings, CallOrigin } from "../env";
import { MAX_BODY_BYTES, useBody } from "./body";
import type { Operation } from "./operation";
import { ApiError, problemResponse, validationFailed } from "./problem";

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

/** A tool call's own request, and what it carries: its carrier, its origin and (a POST) its body. */
interface ToolCall {
  carrier: Context<AppEnv>;
  origin: CallOrigin;
  body?: string;
}
const calls = new WeakMap<Request, ToolCall>();

/**
 * The request that performs `op` with `args` (a write's idempotencyKey taken
 * out), as hono's router and the operation's chain read one: method, URL and
 * headers. Its body is handed to the chain as text (toolBody), never streamed.
 */
function operationRequest(c: Context<AppEnv>, op: Operation, args: Record<string, unknown>, idempotencyKey?: string) {
  const url = new URL(op.path, c.req.url);
  // Path parameters fill the template; the other arguments are the body or the query, validated by the route.
  const isPathParameter = (name: string) => op.path.includes(`{${name}}`);
  for (const [name, value] of Object.entries(args).filter(([name]) => isPathParameter(name)))
    url.pathname = url.pathname.replace(`%7B${name}%7D`, pathSegment(queryText(value)));
  // fromEntries, so that a "__proto__" argument stays a member (and is refused by the route).
  const rest = Object.fromEntries(Object.entries(args).filter(([name]) => !isPathParameter(name)));
  const headers = new Headers();
  if (op.method === "post") {
    headers.set("Content-Type", "application/json");
    const key = idempotencyKey ?? c.req.header("Idempotency-Key");
    if (key !== undefined) headers.set("Idempotency-Key", key);
  } else {
    for (const [name, value] of Object.entries(rest))
      if (value !== undefined && value !== null) url.searchParams.set(name, queryText(value));
  }
  const request = { method: op.method.toUpperCase(), url: url.href, headers } as Request;
  return { request, body: op.method === "post" ? JSON.stringify(rest) : undefined };
}

/**
 * The first step of a tool call's chain (src/middleware/mount.ts): the call
 * is its carrier's request id, key, org and D1 session (its reads see the
 * calls before it, its bookmark is the carrier's), as the call's origin.
 */
export const asToolCall = createMiddleware<AppEnv>(async function asToolCall(c, next) {
  const { carrier, origin } = calls.get(c.req.raw)!;
  const { requestId, orgId, org, db, actor } = carrier.var;
  c.set("requestId", requestId);
  c.set("orgId", orgId);
  c.set("org", org);
  c.set("db", db);
  c.set("actor", { keyId: actor.keyId, role: actor.role, ...origin });
  await next();
  // One log line per request: the carrier's names the first unexpected error of its calls.
  const error = c.get("error");
  if (error && !carrier.get("error")) carrier.set("error", error);
});

/** A tool call's body reader: its arguments' JSON text, held to an operation's limit as a request's body is (src/http/body.ts). */
export const toolBody = createMiddleware<AppEnv>(async function toolBody(c, next) {
  const text = calls.get(c.req.raw)!.body ?? "{}";
  const bytes = new TextEncoder().encode(text);
  if (bytes.byteLength > MAX_BODY_BYTES)
    throw new ApiError("payload_too_large", `The body must be at most ${MAX_BODY_BYTES} bytes`);
  useBody(c, text, bytes);
  await next();
});

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
  origin: CallOrigin,
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
  const { request, body } = operationRequest(c, op, args, idempotencyKey);
  calls.set(request, { carrier: c, origin, body });
  return fetchApp(request, c.env, c.executionCtx);
}
