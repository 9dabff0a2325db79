// The one write path: a write is its change, its event and the record of its
// answer for the request's Idempotency-Key, committed together in one batch
// (one round trip) or not at all. Each write names its statements; the
// results come back by those names, never by position.
import { and, eq, type Placeholder, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { EventType, WritableTable } from "../../drizzle/schema";
import { type Db, param, prepared, preparedPer } from "./client";
import { type Actor, type EventInserted, recordEvent } from "./events";
import { type IdempotencyKey, recordWithWrite, rowInState, type Written, writeBatch } from "./idempotency";

type Statements = Record<string, BatchItem<"sqlite">>;
type Values = Record<string, unknown>;
type Bound = string | Placeholder;

export interface Write<S extends Statements> {
  orgId: string;
  now: number;
  /** The request's Idempotency-Key, if it holds one: its answer is recorded in the same batch. */
  idempotencyKey?: IdempotencyKey;
  /** The row the change writes, and its state once changed: the event and the record need it so. */
  row: { table: WritableTable; id: string; state?: SQL };
  /** The change and any reads after it, by name, in the order they run. */
  statements: S;
  /** Its event, and who made the change; none for a write the API does not publish (a hold). */
  event?: { type: EventType; data: string | SQL; previous?: object | SQL; actor: Actor };
  /**
   * Events of other rows the same write changes (a plan and its first
   * visit), each recorded only if its row is in its state; they do not
   * decide whether the write applied (the first event does).
   */
  alsoEvents?: AlsoEvent[];
  /** The 200 JSON answer: text, or SQL when only the batch knows some of it. */
  body: string | SQL;
  /**
   * The values of the placeholders in the event's data and the body, when
   * those are templates (SQL built once over placeholders, a module's
   * constants): the statements that carry them are then prepared once per
   * template (the row's id and org are bound as `rowId` and `orgId`). For a
   * create only: a row with no `state` to check.
   */
  values?: Values;
}

/** An event of another row than the write's own (Write.alsoEvents). */
export interface AlsoEvent {
  table: WritableTable;
  rowId: string;
  state?: SQL;
  type: EventType;
  data: string | SQL;
  previous?: object | SQL;
  actor: Actor;
}

export interface Committed<S extends Statements> {
  /** Whether the change applied (its row is in its state): else nothing was written. */
  applied: boolean;
  results: { [K in keyof S]: Awaited<S[K]> };
  /** The answer, its record and its event: meaningful only if the change applied. */
  written: Written;
}

/**
 * Runs a write's statements, then its event if it has one (recorded only if the row is in
 * its state), then the record of its answer for the Idempotency-Key (only likewise),
 * in one batch. An answer computed in SQL comes back from that record, else
 * from the event's insert (a template's), else from a read of the row.
 */
export async function commitWrite<S extends Statements>(db: Db, write: Write<S>): Promise<Committed<S>> {
  const { orgId, now, idempotencyKey, row, statements, event, alsoEvents = [], body, values } = write;
  if (values && row.state) throw new Error("commitWrite: templates are for creates, with no state to check");
  // Without an event, a read of the row in its state ($check) tells whether the change applied.
  // An answer computed in SQL comes back from the event's insert, when that can return it.
  const computed = idempotencyKey || typeof body === "string" ? undefined : body;
  const withEvent =
    event &&
    recordEvent(db, {
      orgId,
      now,
      table: row.table,
      rowId: row.id,
      state: row.state,
      ...event,
      values,
      answer: computed,
    });
  const others = alsoEvents.map((also) => recordEvent(db, { orgId, now, ...also, values }));
  const read = computed && !withEvent?.answers ? bodyOf(db, orgId, row, computed, values) : undefined;
  const answer = idempotencyKey
    ? recordWithWrite(db, { idempotencyKey, table: row.table, id: row.id, body, state: row.state }, values)
    : read;
  // A new row's answer, read from it, also tells whether it was written: no check besides.
  const checked = !withEvent && (read === undefined || row.state !== undefined);
  // The write's own statements first, then the write path's, whose names start with "$".
  const results = await batchByName(db, idempotencyKey, {
    ...statements,
    ...(withEvent ? { $event: withEvent.insert } : checked ? { $check: rowCheck(db, orgId, row) } : {}),
    ...Object.fromEntries(others.map((other, i) => [`$event${i + 1}`, other.insert])),
    ...(answer && { $answer: answer }),
  });
  // The event is inserted exactly when the row is in its state: when the change applied.
  const inserted = results.$event as EventInserted | undefined;
  const recorded = inserted && withEvent?.recorded(inserted);
  const [answered] = (results.$answer ?? []) as { body: string | null }[];
  const applied = withEvent
    ? recorded !== undefined
    : ((checked ? results.$check : results.$answer) as unknown[]).length === 1;
  let text = typeof body === "string" ? body : withEvent?.answers ? inserted?.[0]?.answer : answered?.body;
  // Applied but not recorded: the claim was an earlier batch's and had lapsed (taken over after 60 s).
  if (applied && text == null && typeof body !== "string") {
    const [read] = (await db.batch([bodyOf(db, orgId, row, body, values)])) as { body: string }[][];
    text = read?.[0]?.body ?? "";
  }
  return {
    applied,
    results: Object.fromEntries(
      Object.keys(statements).map((name) => [name, results[name]]),
    ) as Committed<S>["results"],
    written: {
      body: text ?? "",
      recorded: idempotencyKey !== undefined && answered?.body != null,
      event: recorded,
      alsoEvents: others.flatMap((other, i) => other.recorded(results[`$event${i + 1}`] as EventInserted) ?? []),
    },
  };
}

/**
 * Runs `items` in their order as one batch (claiming the Idempotency-Key, if
 * any, in it) and returns each result under its item's name.
 */
async function batchByName(
  db: Db,
  idempotencyKey: IdempotencyKey | undefined,
  items: Record<string, BatchItem<"sqlite">>,
): Promise<Record<string, unknown>> {
  const names = Object.keys(items);
  const statements = Object.values(items) as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]];
  const results = (await writeBatch(db, idempotencyKey, statements)) as unknown[];
  return Object.fromEntries(names.map((name, i) => [name, results[i]]));
}

/** The read of the row in its state; of a row with no state to check, prepared once per table. */
const preparedCheck = preparedPer((table: WritableTable) =>
  prepared((templates) => rowInState(templates, table, param("orgId"), param("rowId"))),
);
const rowCheck = (db: Db, orgId: string, { table, id, state }: Write<Statements>["row"]) =>
  state ? rowInState(db, table, orgId, id, state) : preparedCheck(table)(db, { orgId, rowId: id });

const readBody = (db: Db, table: WritableTable, orgId: Bound, id: Bound, body: SQL) =>
  db
    .select({ body: sql<string>`${body}` })
    .from(table)
    .where(and(eq(table.orgId, orgId), eq(table.id, id)));

/** readBody of a template, prepared: the row's org and id bound as `orgId` and `rowId`. */
const preparedBody = preparedPer((body: SQL, table: WritableTable) =>
  prepared((templates) => readBody(templates, table, param("orgId"), param("rowId"), body)),
);

/** The read of the answer computed in SQL: prepared once per template when `values` bind it. */
function bodyOf(db: Db, orgId: string, { table, id }: Write<Statements>["row"], body: SQL, values?: Values) {
  if (!values) return readBody(db, table, orgId, id, body);
  const read = preparedBody(body, table);
  return read(db, { ...values, orgId, rowId: id });
}
