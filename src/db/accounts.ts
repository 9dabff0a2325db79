import { and, eq, sql } from "drizzle-orm";
import { accounts } from "../../drizzle/schema";
import { toIso } from "../lib/datetime";
import { newId } from "../lib/ids";
import type { NewAccount } from "../schemas/accounts";
import type { Db } from "./client";
import { orgExists } from "./orgs";

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

// D1 allows 100 bound parameters per statement, so each multi-row INSERT
// carries its rows as one JSON parameter; D1 caps a value at 2 MB, and 500
// rows at every field's maximum length (about 2.7 KB of JSON each) fit.
const ROWS_PER_STATEMENT = 500;
const COLUMNS = [
  "id",
  "name",
  "nameLower",
  "accountType",
  "email",
  "mobilePhone",
  "businessPhone",
  "buildingLocation",
  "street1",
  "street2",
  "city",
  "postalCode",
  "state",
  "country",
  "createdAt",
  "updatedAt",
] as const;
const COLUMN_NAMES = sql.raw(COLUMNS.map((c) => accounts[c].name).join(", "));
const FROM_JSON = sql.raw(COLUMNS.map((_, i) => `value ->> ${i}`).join(", "));

/**
 * Inserts validated accounts in one atomic batch of multi-row INSERTs (all or
 * nothing); null when the org does not exist.
 */
export async function insertAccounts(db: Db, orgId: string, rows: NewAccount[], now = Date.now()) {
  if (!(await orgExists(db, orgId))) return null;
  const stored = rows.map((account) => ({
    ...account,
    id: newId("acct", now),
    nameLower: account.name.toLowerCase(),
    createdAt: now,
    updatedAt: now,
  }));
  const statements = [];
  for (let i = 0; i < stored.length; i += ROWS_PER_STATEMENT) {
    const json = JSON.stringify(stored.slice(i, i + ROWS_PER_STATEMENT).map((row) => COLUMNS.map((c) => row[c])));
    statements.push(
      db.run(
        sql`INSERT INTO ${accounts} (org_id, ${COLUMN_NAMES}) SELECT ${orgId}, ${FROM_JSON} FROM json_each(${json})`,
      ),
    );
  }
  const [first, ...rest] = statements;
  if (first) await db.batch([first, ...rest]);
  return { imported: stored.length, accounts: stored.map(({ id, name }) => ({ id, name })) };
}
