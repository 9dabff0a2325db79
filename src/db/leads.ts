import { leads } from "../../drizzle/schema";
import { toIso, toIsoOrNull } from "../lib/datetime";
import { newId } from "../lib/ids";
import type { NewLead } from "../schemas/leads";
import { type Db, inColumnOrder, insertStatement } from "./client";
import { type HeldKey, storedWithWrite } from "./idempotency";

type LeadRow = typeof leads.$inferSelect;

/** Stores a lead and returns its JSON; with a held Idempotency-Key, that JSON is recorded in the same batch. */
export async function createLead(db: Db, orgId: string, lead: NewLead, now: number, held?: HeldKey): Promise<string> {
  const row = inColumnOrder(leads, { ...lead, id: newId("lead", now), orgId, createdAt: now });
  const body = JSON.stringify(leadView(row));
  const d1 = db.$client;
  await d1.batch([
    insertStatement(d1, leads, row),
    ...(held ? [storedWithWrite(d1, held, "leads", row.id, body)] : []),
  ]);
  if (held) held.stored = true;
  return body;
}

export function leadView({ orgId: _org, ...lead }: LeadRow) {
  // Overwriting keys keeps their place, so the fields stay in the spec's order.
  return { ...lead, estimatedCloseDate: toIsoOrNull(lead.estimatedCloseDate), createdAt: toIso(lead.createdAt) };
}
