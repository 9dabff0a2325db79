import { Hono } from "hono";
import { createLead } from "../db/leads";
import type { AppEnv } from "../env";
import { jsonBody } from "../http/body";
import { methodNotAllowed } from "../http/method-not-allowed";
import { validate } from "../http/validate";
import { idempotency } from "../middleware/idempotency";
import { rateLimit } from "../middleware/rate-limit";
import { createLeadBody } from "../schemas/leads";

export const leads = new Hono<AppEnv>()
  .post("/", rateLimit, jsonBody, validate("json", createLeadBody), idempotency, async (c) => {
    const lead = await createLead(c.var.db, c.var.orgId, c.req.valid("json"), Date.now(), c.var.heldKey);
    return c.body(lead, 200, { "Content-Type": "application/json" });
  })
  .all("/", methodNotAllowed("POST"));
