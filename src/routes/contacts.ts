import { contactView, createContact, listContacts } from "../db/contacts";
import { decodeCursor, encodeCursor } from "../http/cursor";
import { defineOperation } from "../http/operation";
import { validationFailed } from "../http/problem";
import { e164OrFail } from "../http/validate";
import { writtenResponse } from "../http/written";
import { contact, contactPage, createContactBody, listContactsQuery } from "../schemas/contacts";

export const contactOperations = [
  defineOperation({
    operationId: "createContact",
    tool: "create_contact",
    method: "post",
    path: "/api/v1/contacts",
    tag: "Contacts",
    effect: "create",
    roles: ["office"],
    summary: "Create a contact",
    description:
      "Stores a contact. At least one of firstName, lastName, email, mobilePhone, businessPhone is required; `accountId`, when given, must be an account of your organisation.",
    body: createContactBody,
    response: contact,
    handler: async (c, { body }) => {
      const { db, orgId, org, idempotencyKey, actor } = c.var;
      const written = await createContact(db, {
        orgId,
        country: org.country,
        contact: body,
        now: Date.now(),
        idempotencyKey,
        actor,
      });
      if (written === null) {
        throw validationFailed([{ path: "accountId", code: "account_not_found", message: "no account with this id" }]);
      }
      return writtenResponse(c, written);
    },
  }),
  defineOperation({
    operationId: "listContacts",
    tool: "list_contacts",
    method: "get",
    path: "/api/v1/contacts",
    tag: "Contacts",
    effect: "read",
    roles: ["office", "read"],
    summary: "List contacts",
    description:
      "Contacts oldest first by (createdAt, id), read by keyset: pass `nextCursor` as `cursor` for the next page (null on the last). Filters: accountId, email (case-insensitive exact), phone (mobilePhone or businessPhone is this number, any spelling), updatedSince (inclusive).",
    query: listContactsQuery,
    response: contactPage,
    handler: async (c, { query }) => {
      const { limit, cursor, phone, ...rest } = query;
      const { db, orgId, org } = c.var;
      const filters = { ...rest, ...(phone === undefined ? {} : { phone: e164OrFail(phone, org.country) }) };
      // A cursor belongs to one org and one set of filters (normalised, so that
      // equivalent spellings of a filter share cursors); `limit` may change.
      const scope = {
        secret: org.cursorSecret,
        filters: [
          "contacts",
          filters.accountId ?? null,
          filters.email?.toLowerCase() ?? null,
          filters.updatedSince ?? null,
          filters.phone ?? null,
        ],
      };
      const after = cursor === undefined ? undefined : await decodeCursor(cursor, scope);
      const page = await listContacts(db, { orgId, filters, after, limit });
      const last = page.rows.at(-1);
      return c.json(
        {
          data: page.rows.map(contactView),
          hasMore: page.hasMore,
          nextCursor: page.hasMore && last ? await encodeCursor({ at: last.createdAt, id: last.id }, scope) : null,
        },
        200,
      );
    },
  }),
];
