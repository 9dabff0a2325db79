// Phone lookups and the backfill of the E.164 columns (docs/api.md, "Phone numbers").
import { and, eq, gt, isNotNull, or, type Placeholder } from "drizzle-orm";
import { accounts, contacts, leads, orgs } from "../../drizzle/schema";
import { phoneColumnsOf } from "../lib/phones";
import type { Db } from "./client";

/** Rows of `table` (contacts or accounts) of `orgId` whose mobile or business phone is `phone` (E.164). */
export function hasPhone(
  table: typeof contacts | typeof accounts,
  orgId: string | Placeholder,
  phone: string | Placeholder,
) {
  return or(
    and(eq(table.orgId, orgId), eq(table.mobileE164, phone)),
    and(eq(table.orgId, orgId), eq(table.businessE164, phone)),
  );
}

const TABLES = { contacts, accounts, leads } as const;
/** Rows per read and per batch of updates. */
const BACKFILL_BATCH = 100;

export interface BackfillCount {
  scanned: number;
  updated: number;
}

/**
 * Recomputes the E.164 columns of every contact, account and lead with a
 * phone (of one org, or of all), in the country of its org: for rows written
 * before the columns existed, or after an org changed country. Reads by id in
 * batches and rewrites only the rows whose columns differ, so a second run
 * updates nothing.
 */
export async function backfillPhones(db: Db, orgId?: string): Promise<Record<keyof typeof TABLES, BackfillCount>> {
  const counts = {} as Record<keyof typeof TABLES, BackfillCount>;
  for (const [name, table] of Object.entries(TABLES) as [keyof typeof TABLES, (typeof TABLES)[keyof typeof TABLES]][]) {
    const count = { scanned: 0, updated: 0 };
    let after = "";
    for (;;) {
      const rows = await db
        .select({
          id: table.id,
          mobilePhone: table.mobilePhone,
          businessPhone: table.businessPhone,
          mobileE164: table.mobileE164,
          businessE164: table.businessE164,
          country: orgs.country,
        })
        .from(table)
        .innerJoin(orgs, eq(orgs.id, table.orgId))
        .where(
          and(
            gt(table.id, after),
            orgId === undefined ? undefined : eq(table.orgId, orgId),
            or(isNotNull(table.mobilePhone), isNotNull(table.businessPhone)),
          ),
        )
        .orderBy(table.id)
        .limit(BACKFILL_BATCH);
      if (rows.length === 0) break;
      count.scanned += rows.length;
      after = rows.at(-1)!.id;
      const updates = rows.flatMap((row) => {
        const columns = phoneColumnsOf(row, row.country);
        const same = columns.mobileE164 === row.mobileE164 && columns.businessE164 === row.businessE164;
        return same ? [] : [db.update(table).set(columns).where(eq(table.id, row.id))];
      });
      const [first, ...rest] = updates;
      if (first) await db.batch([first, ...rest]);
      count.updated += updates.length;
    }
    counts[name] = count;
  }
  return counts;
}
