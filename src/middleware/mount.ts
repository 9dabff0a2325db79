// Mounts the declared operations (src/http/operation.ts) on the app, each
// behind the middleware it needs, in the order of docs/api.md ("Errors":
// order of checks), and answers 405 with Allow for other methods on their paths.
// Tool calls (src/http/tools.ts) run the same chains on an app of their own.
import { Hono, type MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import * as z from "zod/v4";
import type { AppEnv } from "../env";
import { jsonBody } from "../http/body";
import { forbidden } from "../http/caller";
import { methodNotAllowed } from "../http/method-not-allowed";
import { mayCall, type Operation, routePath } from "../http/operation";
import { renderError } from "../http/problem";
import { asToolCall, toolBody } from "../http/tools";
import { validate, validateAll } from "../http/validate";
import { once } from "../lib/once";
import { idempotency } from "./idempotency";
import { rateLimit } from "./rate-limit";

const noQuery = once(() => z.strictObject({}));

/**
 * The middleware an operation needs, in the order of checks of docs/api.md
 * ("Errors"), after authentication and routing: the key's role (403), rate
 * limit (429; a tool call's transport counted it), the body reader (415, 413,
 * 400; a tool call's arguments are its body), validation (422), then
 * Idempotency-Key on every POST.
 */
function middlewareOf(op: Operation, toolCall = false): MiddlewareHandler<AppEnv>[] {
  const validation = validateAll([
    op.body && validate("json", op.body),
    // Every operation checks its query: one that takes none refuses any parameter (unknown_field).
    validate("query", op.query ?? noQuery),
    op.params && validate("param", op.params),
  ]);
  return [
    permitted(op),
    ...(toolCall ? [] : [rateLimit]),
    ...(op.body ? [toolCall ? toolBody : jsonBody] : []),
    validation,
    ...(op.method === "post" ? [idempotency] : []),
  ];
}

/** 403 forbidden unless the key's role may call the operation. */
export const permitted = (op: Operation) =>
  createMiddleware<AppEnv>(async function permitted(c, next) {
    const { role } = c.get("actor");
    if (!mayCall(op, role)) throw forbidden(role);
    await next();
  });

/** The operation's handler, given its validated input. */
const handlerOf =
  (op: Operation): MiddlewareHandler<AppEnv> =>
  async (c) =>
    op.handler(c, {
      body: op.body && c.req.valid("json" as never),
      query: op.query && c.req.valid("query" as never),
      params: op.params && c.req.valid("param" as never),
    });

/** Routes every operation, then answers 405 (with Allow) for any other method on their paths. */
export function mountOperations(app: Hono<AppEnv>, operations: readonly Operation[]) {
  const allowed = new Map<string, string[]>();
  for (const op of operations) {
    app.on([op.method.toUpperCase()], [routePath(op.path)], ...middlewareOf(op), handlerOf(op));
    allowed.set(op.path, [...(allowed.get(op.path) ?? []), op.method.toUpperCase()]);
  }
  for (const [path, methods] of allowed) app.all(routePath(path), methodNotAllowed(...methods.sort()));
}

/**
 * The app a tool call's request runs on (src/http/tools.ts, runTool): each
 * operation's own chain, after its carrier's authentication and request log
 * and without a rate limit of its own.
 */
export function toolOperations(operations: readonly Operation[]): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  for (const op of operations)
    app.on([op.method.toUpperCase()], [routePath(op.path)], asToolCall, ...middlewareOf(op, true), handlerOf(op));
  return app.onError(renderError);
}
