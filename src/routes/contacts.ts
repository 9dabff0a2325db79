import { Hono } from "hono";
import { contactView, createContact, listContacts } from "../db/contacts";
import type { AppEnv } from "../env";
import { jsonBody } from "../http/body";
import { decodeCursor, encodeCursor } from "../http/cursor";
import { methodNotAllowed } from "../http/method-not-allowed";
import { validationFailed } from "../http/problem";
import { validate } from "../http/validate";
import { idempotency } from "../middleware/idempotency";
import { rateLimit } from "../middleware/rate-limit";
import { createContactBody, listContactsQuery } from "../schemas/contacts";

export const contacts = new Hono<AppEnv>()
  .post("/", rateLimit, jsonBody, validate("json", createContactBody), idempotency, async (c) => {
    const contact = await createContact(c.var.db, c.var.orgId, c.req.valid("json"), Date.now(), c.var.heldKey);
    if (contact === null) {
      throw validationFailed([{ path: "accountId", code: "account_not_found", message: "no account with this id" }]);
    }
    return c.body(contact, 200, { "Content-Type": "application/json" });
  })
  .get("/", rateLimit, validate("query", listContactsQuery), async (c) => {
    const { limit, cursor, ...filters } = c.req.valid("query");
    // A cursor belongs to one org and one set of filters (normalised, so that
    // equivalent spellings of a filter share cursors); `limit` may change.
    const scope = [
      c.var.orgId,
      filters.accountId ?? null,
      filters.email?.toLowerCase() ?? null,
      filters.updatedSince ?? null,
    ];
    const after = cursor === undefined ? undefined : await decodeCursor(cursor, scope);
    const page = await listContacts(c.var.db, c.var.orgId, filters, after, limit);
    const last = page.rows.at(-1);
    return c.json(
      {
        data: page.rows.map(contactView),
        hasMore: page.hasMore,
        nextCursor: page.hasMore && last ? await encodeCursor(last, scope) : null,
      },
      200,
    );
  })
  .all("/", methodNotAllowed("GET", "POST"));
