// `dates check` and `dates repair` (docs/operations.md, "Dates outside the
// years 0001–9999"). Before parseDateTime (src/lib/datetime.ts) kept instants
// within MIN_INSTANT … MAX_INSTANT, an offset could carry a date-time past
// 9999-12-31 or before 0001-01-01 once in UTC, and it was stored. toISOString
// writes such an instant with an expanded year ("+010000-01-01T…") or year
// 0000: no API date-time, so an events page holding one fails the OpenAPI
// document for good. Only a lead's estimatedCloseDate could be stored so:
// incidents' times are slot starts within the booking horizon, every other
// time is the server's clock. It is optional, so the repair makes it null.
import { and, asc, eq, gt, lt, or, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { events, idempotencyKeys, leads } from "../../drizzle/schema";
import { MAX_INSTANT, MIN_INSTANT } from "../lib/datetime";
import type { Db } from "./client";

export type RepairedTable = "leads" | "events" | "idempotency_keys";

/** An out-of-range instant as stored. */
export interface DateFinding {
  table: RepairedTable;
  /** The lead's or event's id, or the Idempotency-Key of a recorded answer. */
  id: string;
  orgId: string;
  /** The column, or the JSON path of the member in the row's body. */
  field: string;
  /** As stored: epoch milliseconds in the column, the ISO text in a body. */
  value: number | string;
  /** Whether `dates repair` sets it to null: only where a request could have left it out. */
  repairable: boolean;
}

export interface DateChange {
  table: RepairedTable;
  id: string;
  orgId: string;
  field: string;
  oldValue: number | string;
  newValue: null;
}

/**
 * Where the lead's estimatedCloseDate is stored: its column, its lead.created
 * event's data, and the recorded answer of its POST /api/v1/leads (kept 24 h
 * for Idempotency-Key replays). Anything else found is reported, never changed.
 */
const REPAIRABLE: Record<RepairedTable, string> = {
  leads: "estimated_close_date",
  events: "$.data.estimatedCloseDate",
  idempotency_keys: "$.estimatedCloseDate",
};

const ofOrg = (column: SQLiteColumn, orgId?: string) => (orgId === undefined ? undefined : eq(column, orgId));

const leadsOutOfRange = (db: Db, orgId?: string) =>
  db
    .select({ id: leads.id, orgId: leads.orgId, value: leads.estimatedCloseDate })
    .from(leads)
    .where(
      and(
        ofOrg(leads.orgId, orgId),
        or(lt(leads.estimatedCloseDate, MIN_INSTANT), gt(leads.estimatedCloseDate, MAX_INSTANT)),
      ),
    )
    .orderBy(asc(leads.orgId), asc(leads.id));

// toISOString's text of an instant outside the years 0000–9999 opens with an
// expanded year: a sign and six digits. D1 refuses GLOB patterns over 50
// bytes, so the year and the rest are matched apart.
const EXPANDED_YEAR = "[+-][0-9][0-9][0-9][0-9][0-9][0-9]";
const MONTH_DAY = "-[0-9][0-9]-[0-9][0-9]T*";
const isBadIso = (text: SQL) =>
  sql`((substr(${text}, 1, 7) GLOB ${EXPANDED_YEAR} AND substr(${text}, 8) GLOB ${MONTH_DAY})
    OR (substr(${text}, 1, 4) = '0000' AND substr(${text}, 5) GLOB ${MONTH_DAY}))`;

/**
 * Every JSON string member of the bodies of `table` that is such a text:
 * (id, orgId, field = its JSON path, value). A plain text test comes first, so
 * only the bodies that may hold one are parsed (and only valid JSON is).
 */
function bodiesOutOfRange(db: Db, table: typeof events | typeof idempotencyKeys, orgId?: string) {
  const id = table === events ? events.id : idempotencyKeys.key;
  const body = table.body;
  return db
    .select({ id, orgId: table.orgId, field: sql<string>`t.fullkey`, value: sql<string>`t.value` })
    .from(table)
    .crossJoin(sql`json_tree(CASE WHEN json_valid(${body}) THEN ${body} ELSE 'null' END) AS t`)
    .where(
      and(
        ofOrg(table.orgId, orgId),
        sql`(${body} GLOB ${`*"${EXPANDED_YEAR}-*`} OR ${body} GLOB '*"0000-*')`,
        sql`t.type = 'text'`,
        isBadIso(sql`t.value`),
      ),
    )
    .orderBy(asc(table.orgId), asc(id), sql`t.id`);
}

/** Every out-of-range instant stored (of one org, or of all), changing nothing. One round trip. */
export async function findOutOfRangeDates(db: Db, orgId?: string): Promise<DateFinding[]> {
  const [leadRows, eventRows, answerRows] = await db.batch([
    leadsOutOfRange(db, orgId),
    bodiesOutOfRange(db, events, orgId),
    bodiesOutOfRange(db, idempotencyKeys, orgId),
  ]);
  const found = (table: RepairedTable, rows: { id: string; orgId: string; field: string; value: number | string }[]) =>
    rows.map((row) => ({ table, ...row, repairable: row.field === REPAIRABLE[table] }));
  return [
    ...found(
      "leads",
      leadRows.map((row) => ({ ...row, field: REPAIRABLE.leads, value: Number(row.value) })),
    ),
    ...found("events", eventRows),
    ...found("idempotency_keys", answerRows),
  ];
}

/**
 * The statement that sets `finding` to null, only while it still holds the
 * value found (a repair running beside this one changes it once), answering
 * the row it changed.
 */
function setToNull(db: Db, finding: DateFinding) {
  const { table, id, orgId, field, value } = finding;
  if (table === "leads")
    return db
      .update(leads)
      .set({ estimatedCloseDate: null })
      .where(and(eq(leads.orgId, orgId), eq(leads.id, id), eq(leads.estimatedCloseDate, Number(value))))
      .returning({ id: leads.id });
  const [target, key] = table === "events" ? [events, events.id] : [idempotencyKeys, idempotencyKeys.key];
  return db
    .update(target)
    .set({ body: sql`json_set(${target.body}, ${field}, NULL)` })
    .where(and(eq(target.orgId, orgId), eq(key, id), sql`json_extract(${target.body}, ${field}) = ${value}`))
    .returning({ id: key });
}

/**
 * Sets every repairable out-of-range instant to null, all in one batch (all
 * or nothing), and reports each change made; the others are left as found.
 */
export async function repairOutOfRangeDates(db: Db, orgId?: string) {
  const findings = await findOutOfRangeDates(db, orgId);
  const repairable = findings.filter((finding) => finding.repairable);
  const [first, ...rest] = repairable.map((finding) => setToNull(db, finding));
  const results: { id: string }[][] = first ? await db.batch([first, ...rest]) : [];
  const changes: DateChange[] = repairable
    .filter((_, i) => results[i]?.length === 1)
    .map(({ table, id, orgId: org, field, value }) => ({
      table,
      id,
      orgId: org,
      field,
      oldValue: value,
      newValue: null,
    }));
  return {
    changes,
    /** The events whose body changed: their webhook receivers still hold the old value. */
    eventIds: changes.filter((change) => change.table === "events").map((change) => change.id),
    unrepaired: findings.filter((finding) => !finding.repairable),
  };
}
