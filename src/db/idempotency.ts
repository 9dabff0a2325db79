import { and, eq, exists, isNull, lt, lte, or, type SQL } from "drizzle-orm";
import { type contacts, idempotencyKeys, type incidents, type leads } from "../../drizzle/schema";
import type { Db } from "./client";
import type { RecordedEvent } from "./events";

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
export const ABANDONED_CLAIM_MS = 60_000;

/**
 * A key this request holds: the claim made at `claimedAt`. A write records
 * its outcome in its own batch (recordWithWrite) only while the claim is
 * still this one, so no takeover of a lapsed claim can repeat a committed
 * write — a claim still without an outcome wrote nothing.
 */
export interface HeldKey {
  orgId: string;
  key: string;
  claimedAt: number;
}

/** What a write answered, and whether its batch recorded that answer for `held`. */
export interface Written {
  body: string;
  recorded: boolean;
  /** The event the write's batch recorded (contract 9.1), for the write path to send to the delivery queue. */
  event?: RecordedEvent;
}

/**
 * Claims the key in one statement: a new key is inserted; an expired record,
 * or a claim abandoned for 60 s (whatever request made it: it has lapsed), is
 * taken over. Anything else is left alone, and no row comes back: then the
 * record that holds the key is returned.
 */
export async function claimKey(db: Db, held: HeldKey, requestHash: string) {
  const { orgId, key, claimedAt: now } = held;
  const [claimed] = await db
    .insert(idempotencyKeys)
    .values({ orgId, key, requestHash, createdAt: now, claimedAt: now })
    .onConflictDoUpdate({
      target: [idempotencyKeys.orgId, idempotencyKeys.key],
      set: { requestHash, createdAt: now, claimedAt: now, status: null, contentType: null, body: null },
      setWhere: or(
        lte(idempotencyKeys.createdAt, now - IDEMPOTENCY_TTL_MS),
        and(isNull(idempotencyKeys.status), lte(idempotencyKeys.claimedAt, now - ABANDONED_CLAIM_MS)),
      ),
    })
    .returning({ claimedAt: idempotencyKeys.claimedAt });
  if (claimed) return { claimed: true as const };
  const [record] = await db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.orgId, orgId), eq(idempotencyKeys.key, key)));
  // Gone between the two statements (purged or released): report it as running, the client retries.
  return { claimed: false as const, record };
}

const heldBy = ({ orgId, key, claimedAt }: HeldKey) =>
  and(
    eq(idempotencyKeys.orgId, orgId),
    eq(idempotencyKeys.key, key),
    eq(idempotencyKeys.claimedAt, claimedAt),
    isNull(idempotencyKeys.status),
  );

export interface WriteRecord {
  held: HeldKey;
  /** The table the write inserted or changed row `id` in. */
  table: typeof leads | typeof contacts | typeof incidents;
  id: string;
  /** For a change: the row's state once changed (else the row's existence is the test). */
  state?: SQL;
  /** The 200 JSON body: text, or an SQL expression when only the batch knows some of it. */
  body: string | SQL;
}

/**
 * The statement, for a write's own batch, that records the write's 200 JSON
 * response for `held` if and only if row `id` now exists (in `state`), and returns the
 * recorded body: the write and the record of its outcome commit together or
 * not at all, and a replay returns exactly what this request answered.
 */
export function recordWithWrite(db: Db, { held, table, id, body, state }: WriteRecord) {
  const written = db
    .select({ id: table.id })
    .from(table)
    .where(and(eq(table.orgId, held.orgId), eq(table.id, id), state));
  return db
    .update(idempotencyKeys)
    .set({ status: 200, contentType: "application/json", body })
    .where(and(heldBy(held), exists(written)))
    .returning({ body: idempotencyKeys.body });
}

export async function storeOutcome(
  db: Db,
  held: HeldKey,
  outcome: { status: number; contentType: string; body: string },
) {
  await db.update(idempotencyKeys).set(outcome).where(heldBy(held));
}

export async function releaseKey(db: Db, held: HeldKey) {
  await db.delete(idempotencyKeys).where(heldBy(held));
}

/** The purge of expired records, run by the Cron Trigger through the created_at index. */
export async function purgeExpiredKeys(db: Db, now: number) {
  await db.delete(idempotencyKeys).where(lt(idempotencyKeys.createdAt, now - IDEMPOTENCY_TTL_MS));
}
