import { and, eq, getTableColumns, sql } from "drizzle-orm";
import { accounts } from "../../drizzle/schema";
import { toIso } from "../lib/datetime";
import { newId } from "../lib/ids";
import { phoneColumnsOf } from "../lib/phones";
import type { Account, NewAccount } from "../schemas/accounts";
import { columnsBut, type Db, prepared } from "./client";
import { countryOf } from "./orgs";

type AccountRow = typeof accounts.$inferSelect;

const HIDDEN = ["orgId", "nameLower", "mobileE164", "businessE164"] as const;
/** The columns accountView shows: what a read answered with it selects. */
export const accountColumns = columnsBut(accounts, ...HIDDEN);
export type ShownAccount = Omit<AccountRow, (typeof HIDDEN)[number]>;

const accountById = prepared((db) =>
  db
    .select(accountColumns)
    .from(accounts)
    .where(and(eq(accounts.orgId, sql.placeholder("orgId")), eq(accounts.id, sql.placeholder("id"))))
    .limit(1),
);

export async function getAccount(db: Db, orgId: string, id: string) {
  const row = await accountById(db, { orgId, id }).get();
  return row && accountView(row);
}

export function accountView({
  orgId: _org,
  nameLower: _lower,
  mobileE164: _m,
  businessE164: _b,
  ...account
}: ShownAccount & Partial<AccountRow>): Account {
  return { ...account, createdAt: toIso(account.createdAt), updatedAt: toIso(account.updatedAt) };
}

// D1 allows 100 bound parameters per statement, so each multi-row INSERT
// carries its rows as one JSON parameter; D1 caps a value at 2 MB, and 500
// rows at every field's maximum length (about 2.7 KB of JSON each) fit.
const ROWS_PER_STATEMENT = 500;
// Every column but org_id (a parameter of its own), in table order.
const COLUMNS = Object.keys(getTableColumns(accounts)).filter((key) => key !== "orgId") as (keyof AccountRow)[];

/** INSERT … SELECT of the rows of a JSON array of arrays (in COLUMNS order), one row per element. */
function insertFromJson(db: Db, orgId: string, rows: unknown[][]) {
  const values = Object.keys(getTableColumns(accounts)).map((key) =>
    key === "orgId" ? sql`${orgId}` : sql.raw(`value ->> ${COLUMNS.indexOf(key as keyof AccountRow)}`),
  );
  return db.insert(accounts).select(sql`SELECT ${sql.join(values, sql`, `)} FROM json_each(${JSON.stringify(rows)})`);
}

/**
 * Inserts validated accounts in one atomic batch of multi-row INSERTs (all or
 * nothing); null when the org does not exist.
 */
export async function insertAccounts(db: Db, orgId: string, rows: NewAccount[], now = Date.now()) {
  const country = await countryOf(db, orgId);
  if (country === null) return null;
  const stored = rows.map((account) => ({
    ...account,
    ...phoneColumnsOf(account, country),
    id: newId("acct", now),
    orgId,
    nameLower: account.name.toLowerCase(),
    createdAt: now,
    updatedAt: now,
  }));
  const statements = [];
  for (let i = 0; i < stored.length; i += ROWS_PER_STATEMENT) {
    const chunk = stored.slice(i, i + ROWS_PER_STATEMENT).map((row) => COLUMNS.map((c) => row[c]));
    statements.push(insertFromJson(db, orgId, chunk));
  }
  const [first, ...rest] = statements;
  if (first) await db.batch([first, ...rest]);
  return { imported: stored.length, accounts: stored.map(({ id, name }) => ({ id, name })) };
}
