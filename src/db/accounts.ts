import { and, eq } from "drizzle-orm";
import { accounts } from "../../drizzle/schema";
import { toIso } from "../lib/datetime";
import type { Db } from "./client";

type AccountRow = typeof accounts.$inferSelect;

export async function getAccount(db: Db, orgId: string, id: string) {
  const [row] = await db
    .select()
    .from(accounts)
    .where(and(eq(accounts.orgId, orgId), eq(accounts.id, id)))
    .limit(1);
  return row && accountView(row);
}

export function accountView({ orgId: _org, nameLower: _lower, ...account }: AccountRow) {
  return { ...account, createdAt: toIso(account.createdAt), updatedAt: toIso(account.updatedAt) };
}
