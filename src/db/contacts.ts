import { and, eq, gte, type SQL, sql } from "drizzle-orm";
import { contacts } from "../../drizzle/schema";
import type { CursorPosition } from "../http/cursor";
import { toIso } from "../lib/datetime";
import { newId } from "../lib/ids";
import type { ContactFilters, NewContact } from "../schemas/contacts";
import { type Db, inColumnOrder, insertStatement } from "./client";
import { type HeldKey, storedWithWrite } from "./idempotency";

type ContactRow = typeof contacts.$inferSelect;

/**
 * Stores a contact and returns its JSON; null when `accountId` names no
 * account of this org. The account check and the insert are one conditional
 * statement, so a contact can never be linked to another org's account, and
 * nothing is written on failure. With a held Idempotency-Key, the JSON is
 * recorded in the same batch, only if the contact was stored.
 */
export async function createContact(
  db: Db,
  orgId: string,
  contact: NewContact,
  now: number,
  held?: HeldKey,
): Promise<string | null> {
  const row = inColumnOrder(contacts, {
    ...contact,
    id: newId("ct", now),
    orgId,
    emailLower: contact.email?.toLowerCase() ?? null,
    createdAt: now,
    updatedAt: now,
  });
  const body = JSON.stringify(contactView(row));
  const d1 = db.$client;
  const accountExists = {
    sql: "? IS NULL OR EXISTS (SELECT 1 FROM accounts WHERE org_id = ? AND id = ?)",
    params: [contact.accountId ?? null, orgId, contact.accountId ?? null],
  };
  const [insert] = await d1.batch([
    insertStatement(d1, contacts, row, accountExists),
    ...(held ? [storedWithWrite(d1, held, "contacts", row.id, body)] : []),
  ]);
  if (insert?.meta.changes !== 1) return null;
  if (held) held.stored = true;
  return body;
}

/** One page in (createdAt, id) order, read by keyset from an index that leads with org_id. */
export async function listContacts(
  db: Db,
  orgId: string,
  filters: ContactFilters,
  after: CursorPosition | undefined,
  limit: number,
) {
  const conditions: (SQL | undefined)[] = [
    eq(contacts.orgId, orgId),
    filters.accountId === undefined ? undefined : eq(contacts.accountId, filters.accountId),
    filters.email === undefined ? undefined : eq(contacts.emailLower, filters.email.toLowerCase()),
    filters.updatedSince === undefined ? undefined : gte(contacts.updatedAt, filters.updatedSince),
    after && sql`(${contacts.createdAt}, ${contacts.id}) > (${after.createdAt}, ${after.id})`,
  ];
  const rows = await db
    .select()
    .from(contacts)
    .where(and(...conditions))
    .orderBy(contacts.createdAt, contacts.id)
    .limit(limit + 1);
  return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
}

export function contactView({ orgId: _org, emailLower: _lower, ...contact }: ContactRow) {
  return { ...contact, createdAt: toIso(contact.createdAt), updatedAt: toIso(contact.updatedAt) };
}
