import type { Context } from "hono";
import { ApiError } from "./problem";

/** The handler of last resort for a known path: 405 naming the methods it does serve. */
export const methodNotAllowed = (...methods: string[]) =>
  function methodNotAllowed(c: Context): never {
    const allow = methods.includes("GET") ? [...methods, "HEAD"] : methods;
    throw new ApiError("method_not_allowed", `${c.req.method} is not allowed here`, {
      headers: { Allow: allow.join(", ") },
    });
  };
