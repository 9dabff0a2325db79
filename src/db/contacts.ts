import { and, eq, gte, sql } from "drizzle-orm";
import { accounts, contacts } from "../../drizzle/schema";
import { toIso } from "../lib/datetime";
import { newId } from "../lib/ids";
import { phoneColumnsOf } from "../lib/phones";
import type { Contact, ContactFilters, NewContact } from "../schemas/contacts";
import {
  afterCursor,
  afterOf,
  type CursorPosition,
  columnsBut,
  type Db,
  inColumnOrder,
  insertWhere,
  pageOf,
  param,
  placeholdersFor,
  preparedWith,
} from "./client";
import type { Actor } from "./events";
import type { IdempotencyKey, Written } from "./idempotency";
import { hasPhone } from "./phones";
import { commitWrite } from "./write";

type ContactRow = typeof contacts.$inferSelect;

const HIDDEN = ["orgId", "emailLower", "mobileE164", "businessE164"] as const;
/** The columns contactView shows: what a read answered with it selects. */
export const contactColumns = columnsBut(contacts, ...HIDDEN);
export type ShownContact = Omit<ContactRow, (typeof HIDDEN)[number]>;

export interface ContactWrite {
  orgId: string;
  /** The org's country, which phone numbers without "+" are read in. */
  country: string;
  contact: NewContact;
  now: number;
  /** The request's Idempotency-Key, if it holds one: the answer is recorded in the same batch. */
  idempotencyKey?: IdempotencyKey;
  /** Who makes the change (its event's actor). */
  actor: Actor;
}

// The contact, if its account (when it names one) is one of the org's.
const insertContact = preparedWith((db, has) =>
  insertWhere(
    db,
    contacts,
    placeholdersFor(contacts),
    has("account")
      ? sql`EXISTS (SELECT 1 FROM ${accounts} WHERE ${and(eq(accounts.orgId, param("orgId")), eq(accounts.id, param("account")))})`
      : sql`1`,
  ),
);

/**
 * Stores a contact and its contact.created event and returns its JSON; null
 * when `accountId` names no account of this org. The account check and the
 * insert are one conditional statement, so a contact can never be linked to
 * another org's account, and nothing is written on failure.
 */
export async function createContact(
  db: Db,
  { orgId, country, contact, now, idempotencyKey, actor }: ContactWrite,
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
  const { applied, written } = await commitWrite(db, {
    orgId,
    now,
    idempotencyKey,
    row: { table: contacts, id: row.id },
    statements: { inserted: insertContact(db, { ...row, account: contact.accountId ?? undefined }) },
    event: { type: "contact.created", data: body, actor },
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

const contactPage = preparedWith((db, has) =>
  db
    .select(contactColumns)
    .from(contacts)
    .where(
      and(
        eq(contacts.orgId, param("orgId")),
        has("accountId") ? eq(contacts.accountId, param("accountId")) : undefined,
        has("email") ? eq(contacts.emailLower, param("email")) : undefined,
        has("updatedSince") ? gte(contacts.updatedAt, param("updatedSince")) : undefined,
        has("phone") ? hasPhone(contacts, param("orgId"), param("phone")) : undefined,
        has("afterAt") ? afterCursor(contacts.createdAt, contacts.id) : undefined,
      ),
    )
    .orderBy(contacts.createdAt, contacts.id)
    .limit(param("limit")),
);

/** One page in (createdAt, id) order, read by keyset from an index that leads with org_id. */
export async function listContacts(db: Db, { orgId, filters, after, limit }: ContactPageQuery) {
  const rows = await contactPage(db, {
    orgId,
    accountId: filters.accountId,
    email: filters.email?.toLowerCase(),
    updatedSince: filters.updatedSince,
    phone: filters.phone,
    ...afterOf(after),
    limit: limit + 1,
  }).all();
  return pageOf(rows, limit);
}

export function contactView({
  orgId: _org,
  emailLower: _lower,
  mobileE164: _m,
  businessE164: _b,
  ...contact
}: ShownContact & Partial<ContactRow>): Contact {
  return { ...contact, createdAt: toIso(contact.createdAt), updatedAt: toIso(contact.updatedAt) };
}
