import { and, eq, gte, type SQL, sql } from "drizzle-orm";
import { accounts, contacts } from "../../drizzle/schema";
import { toIso } from "../lib/datetime";
import { newId } from "../lib/ids";
import { phoneColumnsOf } from "../lib/phones";
import type { Contact, ContactFilters, NewContact } from "../schemas/contacts";
import { type CursorPosition, type Db, inColumnOrder, insertWhere } from "./client";
import type { HeldKey, Written } from "./idempotency";
import { hasPhone } from "./phones";
import { commitWrite } from "./write";

type ContactRow = typeof contacts.$inferSelect;

export interface ContactWrite {
  orgId: string;
  /** The org's country, which phone numbers without "+" are read in. */
  country: string;
  contact: NewContact;
  now: number;
  /** The request's Idempotency-Key, if it holds one: the answer is recorded in the same batch. */
  held?: HeldKey;
}

/**
 * Stores a contact and its contact.created event and returns its JSON; null
 * when `accountId` names no account of this org. The account check and the
 * insert are one conditional statement, so a contact can never be linked to
 * another org's account, and nothing is written on failure.
 */
export async function createContact(
  db: Db,
  { orgId, country, contact, now, held }: ContactWrite,
): Promise<Written | null> {
  const row = inColumnOrder(contacts, {
    ...contact,
    ...phoneColumnsOf(contact, country),
    id: newId("ct", now),
    orgId,
    emailLower: contact.email?.toLowerCase() ?? null,
    createdAt: now,
    updatedAt: now,
  });
  const body = JSON.stringify(contactView(row));
  const accountExists =
    contact.accountId === null
      ? sql`1`
      : sql`EXISTS (SELECT 1 FROM ${accounts} WHERE ${and(eq(accounts.orgId, orgId), eq(accounts.id, contact.accountId))})`;
  const { applied, written } = await commitWrite(db, {
    orgId,
    now,
    held,
    row: { table: contacts, id: row.id },
    statements: { inserted: insertWhere(db, contacts, row, accountExists) },
    event: { type: "contact.created", data: body },
    body,
  });
  return applied ? written : null;
}

export interface ContactPageQuery {
  orgId: string;
  filters: ContactFilters;
  after?: CursorPosition;
  limit: number;
}

/** One page in (createdAt, id) order, read by keyset from an index that leads with org_id. */
export async function listContacts(db: Db, { orgId, filters, after, limit }: ContactPageQuery) {
  const conditions: (SQL | undefined)[] = [
    eq(contacts.orgId, orgId),
    filters.accountId === undefined ? undefined : eq(contacts.accountId, filters.accountId),
    filters.email === undefined ? undefined : eq(contacts.emailLower, filters.email.toLowerCase()),
    filters.updatedSince === undefined ? undefined : gte(contacts.updatedAt, filters.updatedSince),
    filters.phone === undefined ? undefined : hasPhone(contacts, orgId, filters.phone),
    after && sql`(${contacts.createdAt}, ${contacts.id}) > (${after.at}, ${after.id})`,
  ];
  const rows = await db
    .select()
    .from(contacts)
    .where(and(...conditions))
    .orderBy(contacts.createdAt, contacts.id)
    .limit(limit + 1);
  return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
}

export function contactView({
  orgId: _org,
  emailLower: _lower,
  mobileE164: _m,
  businessE164: _b,
  ...contact
}: ContactRow): Contact {
  return { ...contact, createdAt: toIso(contact.createdAt), updatedAt: toIso(contact.updatedAt) };
}
