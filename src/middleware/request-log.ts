import { createMiddleware } from "hono/factory";
import { routePath } from "hono/route";
import type { AppEnv } from "../env";

/**
 * One JSON line per request. It names the route pattern, never the raw URL or
 * headers, so no key, query value or body can reach the logs; an unexpected
 * error is logged by name and message here and only here, never sent to the client.
 */
export const requestLog = createMiddleware<AppEnv>(async function requestLog(c, next) {
  const started = Date.now();
  await next();
  const error = c.get("error");
  console.log(
    JSON.stringify({
      requestId: c.get("requestId"),
      orgId: c.get("orgId") ?? null,
      method: c.req.method,
      route: routePath(c, -1),
      status: c.res.status,
      durationMs: Date.now() - started,
      ...(error ? { error: describe(error) } : {}),
    }),
  );
});

/**
 * A failed query's own cause (D1's message, e.g. "no such table: leads"), not
 * drizzle's wrapper, whose message carries the SQL and its parameters —
 * values the client sent, which have no place in a log line.
 */
function describe(error: Error): string {
  const cause = error.cause instanceof Error ? error.cause : error;
  return `${cause.name}: ${cause.message}`;
}
