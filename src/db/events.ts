// The outbox (docs/webhooks.md, "Events"). A change's batch also runs recordEvent's
// statement: the event row, inserted only if the change is in place (so the
// change and its event commit together or not at all), which returns the
// endpoints subscribed to it, for the write path to send to the delivery queue.
import { and, eq, getTableName, gt, isNull, lt, type Placeholder, SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import {
  type Channel,
  type EventType,
  events,
  type KeyRole,
  type WritableTable,
  webhookEndpoints,
} from "../../drizzle/schema";
import { toIso } from "../lib/datetime";
import { newId } from "../lib/ids";
import { type Db, insertWhere, keptPer, pageOf, param, prepared, preparedPer } from "./client";

export const EVENT_RETENTION_MS = 30 * 86_400_000;

/** Who made a change (docs/api.md, "Who made each change"): every event carries it as `actor`. */
export interface Actor {
  keyId: string | null;
  role: KeyRole | null;
  channel: Channel;
  /** The platform's id of the call, when one was reported. */
  callId: string | null;
  /** The caller's number (E.164) the platform reported, whatever the key's role. */
  callerPhone: string | null;
}

/** The actor of a change made without a key: by the admin CLI, the cron or a plan. */
export const actorOf = (channel: "cli" | "cron" | "plan"): Actor => ({
  keyId: null,
  role: null,
  channel,
  callId: null,
  callerPhone: null,
});

/** An event recorded by a committed change: what the write path sends to the delivery queue. */
export interface RecordedEvent {
  orgId: string;
  id: string;
  createdAt: number;
  /** The endpoints subscribed to it when it was recorded (none: nothing to send). */
  endpoints: string[];
}

export interface EventRecord {
  orgId: string;
  type: EventType;
  now: number;
  /** The row the change wrote, and its state once changed: the event is recorded only if it is so. */
  table: WritableTable;
  rowId: string;
  state?: SQL;
  /** The resource after the change, as JSON text or as SQL that computes it in the batch. */
  data: string | SQL;
  /** What changed, as it was: an object, or SQL computing its JSON in the batch. */
  previous?: object | SQL;
  /** Who made the change. */
  actor: Actor;
  /**
   * The values of the placeholders in `data`, when it is a template: SQL
   * built once, over placeholders only (a module's constant). Its insert is
   * then prepared once per template, and bound with these.
   */
  values?: Record<string, unknown>;
  /**
   * With a template: the write's answer, a template over the same values
   * (always with the same `data`), which the insert then also returns.
   */
  answer?: SQL;
}

/** Text of an event's SQL, and any value of it: as given, a placeholder, or SQL (a column of the statement's rows). */
type Text = string | Placeholder | SQL;
type Part = Text | number;

/** Enabled endpoints of the org subscribed to `type`. */
const subscribedTo = (orgId: Text, type: Text) =>
  and(
    eq(webhookEndpoints.orgId, orgId),
    eq(webhookEndpoints.status, "enabled"),
    sql`EXISTS (SELECT 1 FROM json_each(${webhookEndpoints.events}) WHERE value = ${type})`,
  );

type Value<T> = T | Placeholder;

interface EventValues {
  table: WritableTable;
  id: Value<string>;
  orgId: Value<string>;
  type: Value<EventType>;
  now: Value<number>;
  timestamp: Value<string>;
  /** JSON text of the Actor. */
  actor: Value<string>;
  rowId: Value<string>;
  data: Value<string> | SQL;
  /** JSON text, or SQL computing it. */
  previous?: Value<string> | SQL;
  state?: SQL;
}

/**
 * An event's body as the outbox keeps it and webhooks send it
 * (docs/webhooks.md, "Events"), in SQL; `actor`, `data` and `previous` are JSON.
 */
export const eventBody = (e: { id: Text; type: Text; timestamp: Text; actor: Text; data: Text; previous?: Text }) =>
  sql`json_object('id', ${e.id}, 'type', ${e.type}, 'timestamp', ${e.timestamp}, 'actor', json(${e.actor}), 'data', json(${e.data})${
    e.previous === undefined ? sql`` : sql`, 'previous', json(${e.previous})`
  })`;

/** The ids of the endpoints subscribed to an event, a JSON array in SQL: what an event's insert returns. */
export const subscriberIds = (orgId: Text, type: Text) =>
  sql<string>`(SELECT json_group_array(${webhookEndpoints.id}) FROM ${webhookEndpoints} WHERE ${subscribedTo(orgId, type)})`;

/**
 * What an event's insert returns: one row if the event was recorded, none if
 * not; the subscribers' ids, and the write's answer if it was asked for.
 */
export type EventInserted = { endpoints: string; answer?: string }[];

/** An event's enqueued_at, in SQL: NULL while an endpoint of the org is subscribed to it (the queue's to send), else `now`, nothing to send. */
export const enqueuedAt = (orgId: Text, type: Text, now: Part) =>
  sql`CASE WHEN EXISTS (SELECT 1 FROM ${webhookEndpoints} WHERE ${subscribedTo(orgId, type)}) THEN NULL ELSE ${now} END`;

/** The insert of an event (only if row `rowId` is in `state`), returning its subscribers' ids and `answer`. */
function eventInsert(db: Db, e: EventValues, answer?: SQL) {
  const changed = sql`EXISTS (SELECT 1 FROM ${e.table} WHERE ${and(eq(e.table.orgId, e.orgId), eq(e.table.id, e.rowId), e.state)})`;
  const insert = insertWhere(
    db,
    events,
    {
      seq: sql`NULL`,
      id: e.id,
      orgId: e.orgId,
      type: e.type,
      createdAt: e.now,
      body: eventBody(e),
      enqueuedAt: enqueuedAt(e.orgId, e.type, e.now),
    },
    changed,
  );
  const endpoints = subscriberIds(e.orgId, e.type);
  return insert.returning(answer ? { endpoints, answer: sql<string>`${answer}` } : { endpoints });
}

const insertOfText = keptPer((_key: string, table: WritableTable, previous: boolean) =>
  prepared((templates) => eventInsert(templates, placeholdersOf(table, undefined, previous))),
);
const insertOfTemplate = preparedPer((data: SQL, table: WritableTable, previous: boolean) =>
  prepared((templates) => eventInsert(templates, placeholdersOf(table, data, previous))),
);
const insertAnswering = preparedPer((answer: SQL, data: SQL, table: WritableTable, previous: boolean) =>
  prepared((templates) => eventInsert(templates, placeholdersOf(table, data, previous), answer)),
);

/** The event's values as placeholders, bound by name; its data a placeholder of its own, or a template. */
const placeholdersOf = (table: WritableTable, data: SQL | undefined, previous: boolean): EventValues => ({
  table,
  id: param("eventId"),
  orgId: param("orgId"),
  type: param("type"),
  now: param("now"),
  timestamp: param("timestamp"),
  actor: param("actor"),
  rowId: param("rowId"),
  data: data ?? param("data"),
  previous: previous ? param("previous") : undefined,
});

/** The prepared insert of an event of JSON text (one per table), or of a template (one per template or answer). */
function preparedInsert(table: WritableTable, template: SQL | undefined, previous: boolean, answer?: SQL) {
  if (template && answer) return insertAnswering(answer, template, table, previous);
  if (template) return insertOfTemplate(template, table, previous);
  return insertOfText(`${getTableName(table)} ${previous}`, table, previous);
}

/**
 * The statement a change's batch runs to record its event: the insert (only
 * if row `rowId` is in `state`), which returns the subscribed endpoints' ids
 * (and, of a template given `answer`, the answer: then `answers`); `recorded`
 * turns its result into the event the write path sends (none: the change did
 * not apply). An event about a row with no state to check (every create), of
 * JSON text or of a template, is a prepared statement, built once per table,
 * template or answer.
 */
export function recordEvent(db: Db, record: EventRecord) {
  const { orgId, type, now, table, rowId, state, data, previous, actor, values: templateValues, answer } = record;
  const id = newId("evt", now);
  const values = { id, orgId, type, now, timestamp: toIso(now), actor: JSON.stringify(actor), rowId };
  const previousJson = previous === undefined || previous instanceof SQL ? previous : JSON.stringify(previous);
  const template = templateValues && (data as SQL);
  let insert: BatchItem<"sqlite">;
  // Whether the insert returns the answer: only a template's does.
  let answers = false;
  if ((template || typeof data === "string") && state === undefined && !(previousJson instanceof SQL)) {
    const { id: eventId, ...event } = values;
    const bound = { ...templateValues, ...event, eventId, data: template ? undefined : data, previous: previousJson };
    answers = template !== undefined && answer !== undefined;
    insert = preparedInsert(table, template, previousJson !== undefined, answers ? answer : undefined)(db, bound);
  } else insert = eventInsert(db, { table, ...values, data, previous: previousJson, state });
  /** The event as recorded, from its insert's result: none if it was not (its change did not apply). */
  const recorded = (inserted: EventInserted): RecordedEvent | undefined =>
    inserted.length === 1
      ? { orgId, id, createdAt: now, endpoints: JSON.parse(inserted[0]!.endpoints) as string[] }
      : undefined;
  return { insert, recorded, answers };
}

/** Marks an event sent to the delivery queue, so that the sweep leaves it alone. */
export async function markEnqueued(db: Db, orgId: string, id: string, now: number) {
  await db
    .update(events)
    .set({ enqueuedAt: now })
    .where(and(eq(events.orgId, orgId), eq(events.id, id)));
}

/** Events recorded with subscribers more than `olderThanMs` ago that never reached the queue, oldest first. */
export async function unenqueuedEvents(db: Db, now: number, olderThanMs: number, limit: number) {
  return db
    .select({ orgId: events.orgId, id: events.id, type: events.type, createdAt: events.createdAt })
    .from(events)
    .where(and(isNull(events.enqueuedAt), lt(events.createdAt, now - olderThanMs)))
    .orderBy(events.createdAt)
    .limit(limit);
}

export interface EventPageQuery {
  orgId: string;
  type?: EventType;
  /** The seq of the last event already seen (0: from the start). */
  after: number;
  limit: number;
}

/** One page in commit order (seq), read by keyset from (org, seq) or (org, type, seq). */
export async function listEvents(db: Db, { orgId, type, after, limit }: EventPageQuery) {
  const rows = await db
    .select({ seq: events.seq, id: events.id, body: events.body })
    .from(events)
    .where(and(eq(events.orgId, orgId), type === undefined ? undefined : eq(events.type, type), gt(events.seq, after)))
    .orderBy(events.seq)
    .limit(limit + 1);
  return pageOf(rows, limit);
}

/** The hourly purge: events older than 30 days. */
export async function purgeEvents(db: Db, now: number) {
  await db.delete(events).where(lt(events.createdAt, now - EVENT_RETENTION_MS));
}
