import { type Column, getTableColumns, type Placeholder, type SQL, sql, type Table } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { type DrizzleD1Database, drizzle } from "drizzle-orm/d1";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { bindTemplate, templateOf } from "./drizzle-internals";

/** What queries need of D1: a binding or a session of it (the Sessions API). */
export type D1Client = Pick<D1Database, "prepare" | "batch">;

export type Db = DrizzleD1Database & { $client: D1Client };

/** The header a D1 session's bookmark travels in (src/middleware/database.ts). */
export const BOOKMARK_HEADER = "X-D1-Bookmark";

/** Where a keyset page starts after: the last row's sort time (a contact's createdAt, an incident's start) and id. */
export interface CursorPosition {
  at: number;
  id: string;
}

export const createDb = (d1: D1Client): Db => drizzle(d1 as D1Database) as Db;

/**
 * A statement built once (by `build`, on first use) and run on each request's
 * session with that request's values for its placeholders. Values go to D1 as
 * given: a column drizzle would encode (JSON, booleans) is not for this.
 */
export function prepared<P extends object>(build: (db: Db) => { prepare(): P }) {
  let template: P | undefined;
  return (db: Db, values: Record<string, unknown> = {}): P & BatchItem<"sqlite"> => {
    template ??= templateOf(build);
    return bindTemplate(template, db.$client, values) as unknown as P & BatchItem<"sqlite">;
  };
}

/**
 * `make`'s value for a key, made on the key's first use and returned for it
 * after (the rest of the arguments go with the key, and are read only then):
 * a module's templates per mode, per table or per shape. Kept in a Map, or in
 * `kept` (a WeakMap for keys that are objects).
 */
export function keptPer<K, A extends unknown[], V>(
  make: (key: K, ...rest: A) => V,
  kept: { get(key: K): V | undefined; set(key: K, value: V): unknown } = new Map<K, V>(),
) {
  return (key: K, ...rest: A): V => {
    let value = kept.get(key);
    if (value === undefined) {
      value = make(key, ...rest);
      kept.set(key, value);
    }
    return value;
  };
}

/**
 * Prepared statements made per key object: a template (SQL built once over
 * placeholders, a module's constant) or a table, which always goes with the
 * same `context`. `build` makes the one for a key on its first use, and that
 * one serves it after.
 */
export const preparedPer = <K extends object, C extends unknown[], P extends object>(
  build: (key: K, ...context: C) => ReturnType<typeof prepared<P>>,
) => keptPer(build, new WeakMap<K, ReturnType<typeof prepared<P>>>());

/**
 * `prepared` for a statement with optional parts (a list's filters): `build`
 * includes a part when `has(name)` — when `values` gives that name a value —
 * and one statement is built per combination of names given (a bounded set:
 * the names are the caller's, never a client's).
 */
export function preparedWith<P extends object>(build: (db: Db, has: (name: string) => boolean) => { prepare(): P }) {
  const byShape = keptPer((_shape: string, given: string[]) =>
    prepared((templates) => build(templates, (name) => given.includes(name))),
  );
  return (db: Db, values: Record<string, unknown>) => {
    const given = Object.keys(values).filter((name) => values[name] !== undefined);
    return byShape(given.join(" "), given)(db, values);
  };
}

/** A value bound per request to a prepared statement (`prepared`, `preparedWith`). */
export const param = (name: string) => sql.placeholder(name);

/** A prepared keyset page's start: rows after the cursor's (sort value, id), bound as afterAt and afterId (afterOf). */
export const afterCursor = (at: Column, id: Column) => sql`(${at}, ${id}) > (${param("afterAt")}, ${param("afterId")})`;

/** The values afterCursor binds: none without a cursor, so that preparedWith leaves the condition out. */
export const afterOf = (after: CursorPosition | undefined) => ({ afterAt: after?.at, afterId: after?.id });

/** A page of `limit` rows from a read of `limit + 1`, and whether more follow. */
export const pageOf = <T>(rows: T[], limit: number) => ({ rows: rows.slice(0, limit), hasMore: rows.length > limit });

/**
 * Every column of `table` but the `hidden` ones: what a read answered with a
 * view selects. D1's answer costs by its bytes (docs/performance.md), and a
 * column the view drops (the org, a lookup copy) is bytes for nothing.
 */
export function columnsBut<T extends Table, K extends keyof T["_"]["columns"] & string>(table: T, ...hidden: K[]) {
  const columns: Record<string, unknown> = { ...getTableColumns(table) };
  for (const key of hidden) delete columns[key];
  return columns as Omit<T["_"]["columns"], K>;
}

/**
 * Every column of `table` as a placeholder of its own name (after `prefix`,
 * when another row of the statement's batch shares its names): a row to
 * insert by a prepared statement.
 */
export const placeholdersFor = <T extends Table>(table: T, prefix = "") =>
  Object.fromEntries(Object.keys(getTableColumns(table)).map((key) => [key, param(prefix + key)])) as RowOf<T>;

/** `values` with every column of `table`, in column order (absent ones null), so a stored row reads exactly like a listed one. */
export function inColumnOrder<T extends Table>(table: T, values: Partial<T["$inferSelect"]>): T["$inferSelect"] {
  return Object.fromEntries(
    Object.keys(getTableColumns(table)).map((key) => [key, values[key as keyof typeof values] ?? null]),
  ) as T["$inferSelect"];
}

/** A row whose values may also be SQL expressions, computed by the statement that inserts it. */
export type RowOf<T extends Table> = { [K in keyof T["$inferSelect"]]: T["$inferSelect"][K] | SQL | Placeholder };

/** The value insertWhere's `chosen` computed, as `row` and `condition` read it. */
export const CHOSEN = sql.raw(`"chosen"."value"`);

/**
 * INSERT … SELECT `row` WHERE `condition`: one statement that decides and
 * writes (a query builder, so it can go into db.batch). `chosen`, a value both
 * read (a technician assigned: the row's and whether there is one), is
 * computed once, as CHOSEN: SQLite evaluates a subquery each time it appears.
 */
export function insertWhere<T extends SQLiteTable>(db: Db, table: T, row: RowOf<T>, condition: SQL, chosen?: SQL) {
  const values = sql.join(
    Object.keys(getTableColumns(table)).map((key) => sql`${(row as Record<string, unknown>)[key]}`),
    sql`, `,
  );
  return db
    .insert(table)
    .select(
      chosen
        ? sql`WITH "chosen" AS MATERIALIZED (SELECT ${chosen} AS "value") SELECT ${values} FROM "chosen" WHERE ${condition}`
        : sql`SELECT ${values} WHERE ${condition}`,
    );
}

/** The text of an error and of its causes: where D1 puts SQLite's message (a constraint's, a trigger's). */
export const errorText = (error: unknown): string =>
  error instanceof Error
    ? `${error.message} ${error.cause === undefined ? "" : errorText(error.cause)}`
    : String(error);

/**
 * Whether `error` is a write's meeting the unique index on `columns`
 * ("table.column, …", as SQLite names them in its message): a batch that
 * races another to the same key fails whole on it, nothing of it written.
 */
export const violatesUnique = (error: unknown, columns: string): boolean =>
  errorText(error).includes(`UNIQUE constraint failed: ${columns}`);
