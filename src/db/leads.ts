import { leads } from "../../drizzle/schema";
import { toIso, toIsoOrNull } from "../lib/datetime";
import { newId } from "../lib/ids";
import { phoneColumnsOf } from "../lib/phones";
import type { Lead, NewLead } from "../schemas/leads";
import { type Db, inColumnOrder, placeholdersFor, prepared } from "./client";
import type { Actor } from "./events";
import type { IdempotencyKey, Written } from "./idempotency";
import { commitWrite } from "./write";

type LeadRow = typeof leads.$inferSelect;

export interface LeadWrite {
  orgId: string;
  /** The org's country, which phone numbers without "+" are read in. */
  country: string;
  lead: NewLead;
  now: number;
  /** The request's Idempotency-Key, if it holds one: the answer is recorded in the same batch. */
  idempotencyKey?: IdempotencyKey;
  /** Who creates it (its event's actor). */
  actor: Actor;
}

const insertLead = prepared((db) => db.insert(leads).values(placeholdersFor(leads) as typeof leads.$inferInsert));

/** Stores a lead and its lead.created event and returns its JSON, in one round trip. */
export async function createLead(
  db: Db,
  { orgId, country, lead, now, idempotencyKey, actor }: LeadWrite,
): Promise<Written> {
  const row = inColumnOrder(leads, {
    ...lead,
    ...phoneColumnsOf(lead, country),
    id: newId("lead", now),
    orgId,
    createdAt: now,
  });
  const body = JSON.stringify(leadView(row));
  const { written } = await commitWrite(db, {
    orgId,
    now,
    idempotencyKey,
    row: { table: leads, id: row.id },
    statements: { inserted: insertLead(db, row) },
    event: { type: "lead.created", data: body, actor },
    body,
  });
  return written;
}

export function leadView({ orgId: _org, mobileE164: _m, businessE164: _b, ...lead }: LeadRow): Lead {
  // Overwriting keys keeps their place, so the fields stay in the spec's order.
  return { ...lead, estimatedCloseDate: toIsoOrNull(lead.estimatedCloseDate), createdAt: toIso(lead.createdAt) };
}
