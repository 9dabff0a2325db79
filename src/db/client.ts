import { getTableColumns, type SQL, sql, type Table } from "drizzle-orm";
import { type DrizzleD1Database, drizzle } from "drizzle-orm/d1";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";

/** What queries need of D1: a binding or a session of it (the Sessions API). */
export type D1Client = Pick<D1Database, "prepare" | "batch">;

export type Db = DrizzleD1Database;

/** The header a D1 session's bookmark travels in (src/middleware/database.ts). */
export const BOOKMARK_HEADER = "X-D1-Bookmark";

/** Where a keyset page starts after: the last row's sort time (a contact's createdAt, an incident's start) and id. */
export interface CursorPosition {
  at: number;
  id: string;
}

export const createDb = (d1: D1Client): Db => drizzle(d1 as D1Database);

/** `values` with every column of `table`, in column order (absent ones null), so a stored row reads exactly like a listed one. */
export function inColumnOrder<T extends Table>(table: T, values: Partial<T["$inferSelect"]>): T["$inferSelect"] {
  return Object.fromEntries(
    Object.keys(getTableColumns(table)).map((key) => [key, values[key as keyof typeof values] ?? null]),
  ) as T["$inferSelect"];
}

/** A row whose values may also be SQL expressions, computed by the statement that inserts it. */
export type RowOf<T extends Table> = { [K in keyof T["$inferSelect"]]: T["$inferSelect"][K] | SQL };

/**
 * INSERT … SELECT `row` WHERE `condition`: one statement that decides and
 * writes (a query builder, so it can go into db.batch).
 */
export function insertWhere<T extends SQLiteTable>(db: Db, table: T, row: RowOf<T>, condition: SQL) {
  const values = sql.join(
    Object.keys(getTableColumns(table)).map((key) => sql`${(row as Record<string, unknown>)[key]}`),
    sql`, `,
  );
  return db.insert(table).select(sql`SELECT ${values} WHERE ${condition}`);
}
