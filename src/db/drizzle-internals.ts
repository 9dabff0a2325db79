// Everything that reaches into drizzle-orm's internals (not in its types),
// for prepared statements (src/db/client.ts `prepared`): what a prepared D1
// query holds, how a batch asks an item for it, and where a selected field's
// decoder is. test/integration/db/drizzle-internals.test.ts checks each of
// these against the installed drizzle, and fails on an upgrade that moves one.
import { Column, fillPlaceholders, is, SQL, Subquery } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import type { D1Client, Db } from "./client";

// Drizzle builds a statement's SQL anew on every call, and that was most of
// the JavaScript a read ran (docs/performance.md), though the text never
// changes — only the values do. A prepared statement is built once per
// isolate, against this stand-in client, with `sql.placeholder(name)` for each
// value; each request then binds its values on its own session.
export const TEMPLATES = drizzle({ prepare: () => ({}) } as unknown as D1Database);

/** What drizzle's prepared D1 queries hold (not in its types): the SQL with its parameters, D1's statement, the fields selected. */
export interface Bindable {
  query: { sql: string; params: unknown[] };
  stmt: D1PreparedStatement;
  fields?: { path: string[]; field: unknown }[];
  values(): Promise<unknown[][]>;
}

interface Decoder {
  mapFromDriverValue(value: unknown): unknown;
}

/** A selected field's decoder, where drizzle's mapResultRow finds it (an SQL's decoder is internal to drizzle). */
const decoderOf = (field: unknown): Decoder =>
  is(field, Column)
    ? field
    : (
        (is(field, SQL) ? field : is(field, Subquery) ? field._.sql : (field as SQL.Aliased).sql) as unknown as {
          decoder: Decoder;
        }
      ).decoder;

/**
 * A row mapper for a select of top-level fields, as drizzle's own (a null
 * stays null, any other value goes through its field's decoder), with the
 * decoders looked up once rather than for every field of every row — which
 * made mapping a 50-row page cost more than building its SQL. Undefined for
 * nested fields (joins), which keep drizzle's mapping.
 */
function rowMapper(fields: Bindable["fields"]) {
  if (!fields?.every(({ path }) => path.length === 1)) return undefined;
  const columns = fields.map(({ path: [key], field }) => ({ key: key!, decoder: decoderOf(field) }));
  return (row: unknown[]) => {
    const mapped: Record<string, unknown> = {};
    for (let i = 0; i < columns.length; i++) {
      const { key, decoder } = columns[i]!;
      const value = row[i];
      mapped[key] = value === null ? null : decoder.mapFromDriverValue(value);
    }
    return mapped;
  };
}

/** Builds the template of a prepared statement, mapping its rows with rowMapper where it can. */
export function templateOf<P extends object>(build: (db: Db) => { prepare(): P }): P {
  const template = build(TEMPLATES).prepare() as P & Bindable & Record<"all" | "get", unknown>;
  const map = rowMapper(template.fields);
  if (map) {
    template.all = async function all(this: Bindable) {
      return (await this.values()).map(map);
    };
    template.get = async function get(this: Bindable) {
      const [row] = await this.values();
      return row && map(row);
    };
  }
  return template;
}

/**
 * The template's statement with `values` for its placeholders, on `client`
 * (a request's D1 session): a copy that shares the template's built SQL and
 * row mapping, and answers a batch's request for its prepared query itself.
 */
export function bindTemplate<P extends object>(template: P, client: D1Client, values: Record<string, unknown>) {
  const { sql, params } = (template as unknown as Bindable).query;
  const statement = Object.create(template) as P & Bindable & { _prepare(): unknown };
  statement.query = { sql, params: fillPlaceholders(params, values) };
  statement.stmt = client.prepare(sql);
  // As an item of db.batch, which asks each item for its prepared query.
  statement._prepare = () => statement;
  return statement;
}
