import { leads } from "../../drizzle/schema";
import { toIso, toIsoOrNull } from "../lib/datetime";
import { newId } from "../lib/ids";
import type { NewLead } from "../schemas/leads";
import type { Db } from "./client";

type LeadRow = typeof leads.$inferSelect;

export async function createLead(db: Db, orgId: string, lead: NewLead, now: number) {
  const [row] = await db
    .insert(leads)
    .values({ ...lead, id: newId("lead", now), orgId, createdAt: now })
    .returning();
  return leadView(row!);
}

export function leadView({ orgId: _org, ...lead }: LeadRow) {
  // Overwriting keys keeps their place, so the fields stay in the spec's order.
  return { ...lead, estimatedCloseDate: toIsoOrNull(lead.estimatedCloseDate), createdAt: toIso(lead.createdAt) };
}
