// `accounts import`: the whole file is read and validated first; then every
// row goes to D1 in one atomic batch of multi-row INSERTs, each carrying its
// rows as a single JSON parameter (D1 allows only 100 bound parameters per
// statement, so one parameter per value would mean one statement per 5 rows).
import { readFile } from "node:fs/promises";
import { accounts } from "../../drizzle/schema";
import type { Db } from "../db/client";
import { toFieldErrors } from "../http/validate";
import { parseCsv } from "../lib/csv";
import { newId } from "../lib/ids";
import { importAccount, type NewAccount } from "../schemas/accounts";
import { CliError } from "./errors";
import { assertOrgExists } from "./orgs-and-keys";

// D1 caps a single value at 2 MB; 500 rows at every field's maximum length
// (about 2.7 KB of JSON each) stay well under it.
const ROWS_PER_STATEMENT = 500;
const MAX_REPORTED_ERRORS = 20;

export async function importAccounts(db: Db, orgId: string, file: string, now = Date.now()) {
  const rows = parseAccounts(await readFileText(file), file);
  await assertOrgExists(db, orgId);
  const stored = rows.map((account) => ({
    ...account,
    id: newId("acct", now),
    nameLower: account.name.toLowerCase(),
    createdAt: now,
    updatedAt: now,
  }));
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < stored.length; i += ROWS_PER_STATEMENT) {
    statements.push(insertChunk(db, orgId, stored.slice(i, i + ROWS_PER_STATEMENT)));
  }
  if (statements.length > 0) await db.$client.batch(statements);
  return { imported: stored.length, accounts: stored.map(({ id, name }) => ({ id, name })) };
}

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
const INSERT_FROM_JSON = `INSERT INTO accounts (org_id, ${COLUMNS.map((c) => accounts[c].name).join(", ")})
  SELECT ?1, ${COLUMNS.map((_, i) => `value ->> ${i}`).join(", ")} FROM json_each(?2)`;

type StoredAccount = NewAccount & { id: string; nameLower: string; createdAt: number; updatedAt: number };

function insertChunk(db: Db, orgId: string, rows: StoredAccount[]): D1PreparedStatement {
  const json = JSON.stringify(rows.map((row) => COLUMNS.map((column) => row[column])));
  return db.$client.prepare(INSERT_FROM_JSON).bind(orgId, json);
}

async function readFileText(file: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? "error"}`);
  }
}

/** Validated accounts of a .json or .csv file, or a CliError listing the bad rows. */
export function parseAccounts(text: string, file: string): NewAccount[] {
  const records = file.toLowerCase().endsWith(".csv") ? csvRecords(text) : jsonRecords(text);
  const problems: string[] = [];
  const valid: NewAccount[] = [];
  records.forEach((record, i) => {
    const result = importAccount.safeParse(record);
    if (result.success) valid.push(result.data);
    else
      for (const e of toFieldErrors(result.error.issues, record, Object.keys(importAccount.shape)))
        problems.push(`record ${i + 1}: ${e.path || "(record)"}: ${e.message}`);
  });
  if (problems.length > 0) {
    const shown = problems.slice(0, MAX_REPORTED_ERRORS).join("\n  ");
    const more = problems.length > MAX_REPORTED_ERRORS ? `\n  … and ${problems.length - MAX_REPORTED_ERRORS} more` : "";
    throw new CliError(`${file}: ${problems.length} problem(s), nothing imported:\n  ${shown}${more}`);
  }
  return valid;
}

function jsonRecords(text: string): unknown[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CliError("the file is not valid JSON");
  }
  if (!Array.isArray(parsed)) throw new CliError("a .json file must hold an array of account objects");
  return parsed;
}

function csvRecords(text: string): Record<string, unknown>[] {
  let rows: string[][];
  try {
    rows = parseCsv(text);
  } catch (error) {
    throw new CliError(`the file is not valid CSV: ${(error as Error).message}`);
  }
  const [header, ...body] = rows;
  if (!header) throw new CliError("a .csv file needs a header row");
  const names = header.map((h) => h.trim());
  return body
    .filter((cells) => cells.some((cell) => cell !== ""))
    .map((cells, i) => {
      if (cells.length !== names.length)
        throw new CliError(`CSV row ${i + 2} has ${cells.length} cells, the header ${names.length}`);
      const record: Record<string, unknown> = {};
      names.forEach((name, j) => {
        const cell = cells[j] ?? "";
        if (cell === "") return; // an empty cell is an absent field
        // A numeric accountType becomes a number, so "1.5" is reported as "must be an integer".
        record[name] = name === "accountType" && /^[+-]?\d+(\.\d+)?$/.test(cell.trim()) ? Number(cell) : cell;
      });
      return record;
    });
}
