import { Hono } from "hono";
import { getAccount } from "../db/accounts";
import type { AppEnv } from "../env";
import { methodNotAllowed } from "../http/method-not-allowed";
import { ApiError } from "../http/problem";
import { rateLimit } from "../middleware/rate-limit";

export const accounts = new Hono<AppEnv>()
  .get("/:id", rateLimit, async (c) => {
    // Unknown, malformed and other orgs' ids all read as "no such account".
    const account = await getAccount(c.var.db, c.var.orgId, c.req.param("id"));
    if (!account) throw new ApiError(404, "account_not_found", "No account with this id");
    return c.json(account, 200);
  })
  .all("/:id", methodNotAllowed("GET"));
