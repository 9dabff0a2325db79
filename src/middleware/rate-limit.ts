// Per-org rate limit (docs/api.md, "Rate limits") with the Workers Rate
// Limiting binding. It sits first in each route's own chain, so it counts only
// requests that authenticated and reached a real operation (404 and 405 come
// first).
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { ApiError } from "../http/problem";

export const rateLimit = createMiddleware<AppEnv>(async function rateLimit(c, next) {
  const { success } = await c.env.RATE_LIMITER.limit({ key: c.get("orgId") });
  if (!success) {
    throw new ApiError("rate_limited", "Too many requests for this organisation; retry after the window", {
      headers: { "Retry-After": c.env.RATE_LIMIT_PERIOD ?? "60" },
    });
  }
  await next();
});
