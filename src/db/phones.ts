import { and, eq, or } from "drizzle-orm";
import type { accounts, contacts } from "../../drizzle/schema";

/** Rows of `table` (contacts or accounts) of `orgId` whose mobile or business phone is `phone` (E.164). */
export function hasPhone(table: typeof contacts | typeof accounts, orgId: string, phone: string) {
  return or(
    and(eq(table.orgId, orgId), eq(table.mobileE164, phone)),
    and(eq(table.orgId, orgId), eq(table.businessE164, phone)),
  );
}
