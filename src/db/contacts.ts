import { and, eq, getTableColumns, gte, type SQL, sql } from "drizzle-orm";
import { accounts, contacts } from "../../drizzle/schema";
import type { CursorPosition } from "../http/cursor";
import { toIso } from "../lib/datetime";
import { newId } from "../lib/ids";
import type { ContactFilters, NewContact } from "../schemas/contacts";
import type { Db } from "./client";

type ContactRow = typeof contacts.$inferSelect;

/**
 * Stores a contact; null when `accountId` names no account of this org. The
 * account check and the insert are one conditional statement, so a contact can
 * never be linked to another org's account, and nothing is written on failure.
 */
export async function createContact(db: Db, orgId: string, contact: NewContact, now: number) {
  const columns = Object.entries(getTableColumns(contacts));
  const values: ContactRow = {
    ...contact,
    id: newId("ct", now),
    orgId,
    emailLower: contact.email?.toLowerCase() ?? null,
    createdAt: now,
    updatedAt: now,
  };
  // Keys in column order, so a created contact reads exactly like a listed one.
  const row = Object.fromEntries(columns.map(([key]) => [key, values[key as keyof ContactRow]])) as ContactRow;
  if (contact.accountId === null) {
    await db.insert(contacts).values(row);
    return contactView(row);
  }
  const result = await db.run(sql`
    INSERT INTO ${contacts} (${sql.join(
      columns.map(([, column]) => sql.identifier(column.name)),
      sql`, `,
    )})
    SELECT ${sql.join(
      columns.map(([key]) => sql`${row[key as keyof ContactRow]}`),
      sql`, `,
    )}
    WHERE EXISTS (SELECT 1 FROM ${accounts} WHERE ${accounts.orgId} = ${orgId} AND ${accounts.id} = ${contact.accountId})`);
  return result.meta.changes === 1 ? contactView(row) : null;
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
