import { and, eq, exists, isNull, lt, lte, or, type Placeholder, type SQL } from "drizzle-orm";
import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
import { idempotencyKeys, type WritableTable } from "../../drizzle/schema";
import { type Db, param, prepared, preparedPer, violatesUnique } from "./client";
import type { RecordedEvent } from "./events";

type Bound = string | Placeholder;

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
export const ABANDONED_CLAIM_MS = 60_000;

/**
 * The Idempotency-Key of a request, and its claim, made at `claimedAt`. The
 * claim is not taken before the operation runs: it goes into the batch that
 * writes (writeBatch), or with the outcome when nothing is written
 * (recordOutcome), so a first attempt costs no round trip of its own. A
 * write records its outcome in its own batch (recordWithWrite) only while the
 * claim is still this one, so no takeover of a lapsed claim can repeat a
 * committed write — a claim still without an outcome wrote nothing.
 */
export interface IdempotencyKey {
  orgId: string;
  key: string;
  claimedAt: number;
  /** SHA-256 of the request (method, path, query, body hash): the same key with another request is a reuse. */
  requestHash: string;
  /** Whether a committed batch holds the claim (a write's batch that refused, e.g. a full slot, still claims). */
  claimed?: boolean;
}

/**
 * A write's batch found the key taken by a record (an earlier or a concurrent
 * request's): the batch was rolled back, nothing of it applied. The
 * Idempotency-Key middleware answers from that record; should it not, the
 * error renderer tells the client to retry (409 idempotency_in_progress).
 */
export class KeyTaken extends Error {
  constructor() {
    super("the Idempotency-Key is taken by another request's record");
  }
}

/** What a write answered, and whether its batch recorded that answer for `idempotencyKey`. */
export interface Written {
  body: string;
  recorded: boolean;
  /** The event the write's batch recorded (docs/webhooks.md, "Events"), for the write path to send to the delivery queue. */
  event?: RecordedEvent;
  /** Events of other rows the write changed (src/db/write.ts, alsoEvents), for the delivery queue too. */
  alsoEvents?: RecordedEvent[];
}

/** The record of the request's key, whoever made it. */
const recordOf = ({ orgId, key }: IdempotencyKey) =>
  and(eq(idempotencyKeys.orgId, orgId), eq(idempotencyKeys.key, key));

/**
 * Removes the key's record if it has lapsed — past 24 h, or a claim without
 * an outcome abandoned for 60 s (whatever request made it) — so that the
 * claim after it in the same batch takes the key over.
 */
const removeLapsed = (db: Db, idempotencyKey: IdempotencyKey) =>
  db
    .delete(idempotencyKeys)
    .where(
      and(
        recordOf(idempotencyKey),
        or(
          lte(idempotencyKeys.createdAt, idempotencyKey.claimedAt - IDEMPOTENCY_TTL_MS),
          and(
            isNull(idempotencyKeys.status),
            lte(idempotencyKeys.claimedAt, idempotencyKey.claimedAt - ABANDONED_CLAIM_MS),
          ),
        ),
      ),
    );

/**
 * The claim, as the first statements of a batch: a lapsed record of the key
 * is removed, then the claim is inserted. A record that still holds the key
 * makes the INSERT fail (the primary key), and with it the whole batch.
 */
function claimStatements(db: Db, idempotencyKey: IdempotencyKey) {
  const { orgId, key, claimedAt: now, requestHash } = idempotencyKey;
  return [
    removeLapsed(db, idempotencyKey),
    db.insert(idempotencyKeys).values({ orgId, key, requestHash, createdAt: now, claimedAt: now }),
  ] as const;
}

/**
 * A write's batch, in one round trip: with a key not yet claimed, the claim
 * goes first (claimStatements), so a first attempt claims, writes and records
 * its outcome at once, and a key another request holds aborts the whole
 * batch (KeyTaken). Once claimed (a change decided again), batches go as they are.
 */
export async function writeBatch<T extends readonly [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]>(
  db: Db,
  idempotencyKey: IdempotencyKey | undefined,
  statements: T,
): Promise<BatchResponse<T>> {
  if (!idempotencyKey || idempotencyKey.claimed) return db.batch(statements);
  try {
    const results = await db.batch([...claimStatements(db, idempotencyKey), ...statements]);
    idempotencyKey.claimed = true;
    return results.slice(2) as unknown as BatchResponse<T>;
  } catch (error) {
    if (violatesUnique(error, "idempotency_keys.org_id, idempotency_keys.key")) throw new KeyTaken();
    throw error;
  }
}

/** The record that holds the key, if any. */
export async function keyRecord(db: Db, idempotencyKey: IdempotencyKey) {
  const [record] = await db.select().from(idempotencyKeys).where(recordOf(idempotencyKey));
  return record;
}

/** The key's record while it is still this request's claim, without an outcome. */
const claimedBy = (idempotencyKey: IdempotencyKey) =>
  and(
    recordOf(idempotencyKey),
    eq(idempotencyKeys.claimedAt, idempotencyKey.claimedAt),
    isNull(idempotencyKeys.status),
  );

export interface WriteRecord {
  idempotencyKey: IdempotencyKey;
  /** The table the write inserted or changed row `id` in. */
  table: WritableTable;
  id: string;
  /** For a change: the row's state once changed (else the row's existence is the test). */
  state?: SQL;
  /** The 200 JSON body: text, or an SQL expression when only the batch knows some of it. */
  body: string | SQL;
}

/**
 * The statement, for a write's own batch, that records the write's 200 JSON
 * response for `idempotencyKey` if and only if row `id` now exists (in `state`), and returns the
 * recorded body: the write and the record of its outcome commit together or
 * not at all, and a replay returns exactly what this request answered.
 */
export function recordWithWrite(db: Db, record: WriteRecord, values?: Record<string, unknown>) {
  const { idempotencyKey, table, id, body } = record;
  if (values && typeof body !== "string") {
    const { orgId, key, claimedAt } = idempotencyKey;
    return preparedRecord(body, table)(db, { ...values, orgId, key, claimedAt, rowId: id });
  }
  return recordStatement(db, record);
}

/** Row `id` of the org in `table`, if it is in `state`: what tells that a write applied. */
export const rowInState = (db: Db, table: WritableTable, orgId: Bound, id: Bound, state?: SQL) =>
  db
    .select({ id: table.id })
    .from(table)
    .where(and(eq(table.orgId, orgId), eq(table.id, id), state));

function recordStatement(db: Db, { idempotencyKey, table, id, body, state }: WriteRecord) {
  const written = rowInState(db, table, idempotencyKey.orgId, id, state);
  return db
    .update(idempotencyKeys)
    .set({ status: 200, contentType: "application/json", body })
    .where(and(claimedBy(idempotencyKey), exists(written)))
    .returning({ body: idempotencyKeys.body });
}

/** recordWithWrite of a body that is a template (SQL over placeholders), prepared once per template. */
const preparedRecord = preparedPer((body: SQL, table: WritableTable) =>
  prepared((templates) =>
    recordStatement(templates, {
      idempotencyKey: {
        orgId: param("orgId"),
        key: param("key"),
        claimedAt: param("claimedAt"),
      } as unknown as IdempotencyKey,
      table,
      id: param("rowId") as unknown as string,
      body,
    }),
  ),
);

export interface Outcome {
  status: number;
  contentType: string;
  body: string;
}

/**
 * Records the outcome of an operation that wrote nothing (a read, a refusal),
 * in one round trip: for a key this request's batch claimed, on its claim;
 * else claim and outcome together, unless a record holds the key, which then
 * comes back (in the same batch) for the middleware to answer from.
 */
export async function recordOutcome(db: Db, idempotencyKey: IdempotencyKey, outcome: Outcome) {
  if (idempotencyKey.claimed) {
    await db.update(idempotencyKeys).set(outcome).where(claimedBy(idempotencyKey));
    return { stored: true as const };
  }
  const { orgId, key, claimedAt: now, requestHash } = idempotencyKey;
  const [, inserted, [record]] = await db.batch([
    removeLapsed(db, idempotencyKey),
    db
      .insert(idempotencyKeys)
      .values({ orgId, key, requestHash, createdAt: now, claimedAt: now, ...outcome })
      .onConflictDoNothing()
      .returning({ key: idempotencyKeys.key }),
    db.select().from(idempotencyKeys).where(recordOf(idempotencyKey)),
  ]);
  return inserted.length === 1 ? { stored: true as const } : { stored: false as const, record };
}

export async function releaseKey(db: Db, idempotencyKey: IdempotencyKey) {
  await db.delete(idempotencyKeys).where(claimedBy(idempotencyKey));
}

/** The purge of expired records, run by the Cron Trigger through the created_at index. */
export async function purgeExpiredKeys(db: Db, now: number) {
  await db.delete(idempotencyKeys).where(lt(idempotencyKeys.createdAt, now - IDEMPOTENCY_TTL_MS));
}
