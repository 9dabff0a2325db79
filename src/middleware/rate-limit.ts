// Per-org rate limit (docs/api.md, "Rate limits") with the Workers Rate
// Limiting binding. It sits in each route's own chain after the role check,
// so it counts only requests that authenticated and reached a real operation
// they may call (404, 405 and 403 come first). A request that carries tool
// calls (MCP, Vapi, Retell) counts each call instead (countCall).
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { ApiError } from "../http/problem";

export const rateLimited = (c: Context<AppEnv>) =>
  new ApiError("rate_limited", "Too many requests for this organisation; retry after the window", {
    headers: { "Retry-After": c.env.RATE_LIMIT_PERIOD ?? "60" },
  });

/** Counts one request or tool call against the org's limit: false when it is over. */
export async function countCall(c: Context<AppEnv>): Promise<boolean> {
  const { success } = await c.env.RATE_LIMITER.limit({ key: c.get("orgId") });
  return success;
}

export const rateLimit = createMiddleware<AppEnv>(async function rateLimit(c, next) {
  if (!(await countCall(c))) throw rateLimited(c);
  await next();
});
