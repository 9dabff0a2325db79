import { getTableColumns, getTableName, type Table } from "drizzle-orm";
import { type DrizzleD1Database, drizzle } from "drizzle-orm/d1";

/** What queries need of D1: a binding or a session of it (the Sessions API). */
export type D1Client = Pick<D1Database, "prepare" | "batch">;

/** Drizzle over D1; `$client` is the binding or session itself, for batches of raw SQL (drizzle cannot batch those). */
export type Db = DrizzleD1Database & { $client: D1Client };

export const createDb = (d1: D1Client): Db => drizzle(d1 as D1Database);

/** `values` with every column of `table`, in column order (absent ones null), so a stored row reads exactly like a listed one. */
export function inColumnOrder<T extends Table>(table: T, values: Partial<T["$inferSelect"]>): T["$inferSelect"] {
  return Object.fromEntries(
    Object.keys(getTableColumns(table)).map((key) => [key, values[key as keyof typeof values] ?? null]),
  ) as T["$inferSelect"];
}

/** An INSERT of `row` as a raw statement, for a batch; with `where`, it is INSERT … SELECT … WHERE that condition. */
export function insertStatement<T extends Table>(
  d1: D1Client,
  table: T,
  row: T["$inferSelect"],
  where?: { sql: string; params: unknown[] },
) {
  const columns = Object.entries(getTableColumns(table));
  const names = columns.map(([, column]) => `"${column.name}"`).join(", ");
  const values = columns.map(([key]) => (row as Record<string, unknown>)[key]);
  const sql = `INSERT INTO "${getTableName(table)}" (${names}) SELECT ${columns.map(() => "?").join(", ")}${where ? ` WHERE ${where.sql}` : ""}`;
  return d1.prepare(sql).bind(...values, ...(where?.params ?? []));
}
