import { and, eq, isNull, lt } from "drizzle-orm";
import { idempotencyKeys } from "../../drizzle/schema";
import type { D1Client, Db } from "./client";

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
export const ABANDONED_CLAIM_MS = 60_000;

// Claims the key in one statement: a new key is inserted; an expired record,
// or a claim abandoned for 60 s (whatever request made it: it has lapsed), is
// taken over. Anything else is left alone, and no row comes back.
const CLAIM = `
INSERT INTO idempotency_keys (org_id, key, request_hash, created_at, claimed_at)
VALUES (?1, ?2, ?3, ?4, ?4)
ON CONFLICT (org_id, key) DO UPDATE SET
  request_hash = excluded.request_hash, created_at = excluded.created_at, claimed_at = excluded.claimed_at,
  status = NULL, content_type = NULL, body = NULL
WHERE idempotency_keys.created_at <= ?4 - ?5
   OR (idempotency_keys.status IS NULL AND idempotency_keys.claimed_at <= ?4 - ?6)
RETURNING claimed_at`;

/** True when this request now holds the key; else the record that holds it. */
export async function claimKey(db: Db, orgId: string, key: string, requestHash: string, now: number) {
  const claimed = await db.$client
    .prepare(CLAIM)
    .bind(orgId, key, requestHash, now, IDEMPOTENCY_TTL_MS, ABANDONED_CLAIM_MS)
    .first();
  if (claimed) return { claimed: true as const };
  const [record] = await db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.orgId, orgId), eq(idempotencyKeys.key, key)));
  // Gone between the two statements (purged or released): report it as running, the client retries.
  return { claimed: false as const, record };
}

/**
 * A key this request holds. `stored` turns true once a write has stored its
 * response in its own batch (storedWithWrite): then the middleware has
 * nothing left to store, and no takeover of a lapsed claim can repeat a
 * committed write — a claim still without an outcome wrote nothing.
 */
export interface HeldKey {
  orgId: string;
  key: string;
  claimedAt: number;
  stored: boolean;
}

/** A piece of the stored body that only SQL knows: `text` is replaced by the value of `sql` (with `params`). */
export interface Fill {
  text: string;
  sql: string;
  params: unknown[];
}

/**
 * The statement, for a write's own batch, that stores the write's 200 JSON
 * response for `held` if and only if row `id` of `table` now exists: the
 * write and the record of its outcome commit together or not at all.
 */
export function storedWithWrite(
  d1: D1Client,
  held: HeldKey,
  table: "leads" | "contacts" | "incidents",
  id: string,
  body: string,
  fills: Fill[] = [],
) {
  const bodySql = fills.reduce((expression, fill) => `replace(${expression}, ?, ${fill.sql})`, "?");
  return d1
    .prepare(
      `UPDATE idempotency_keys SET status = 200, content_type = 'application/json', body = ${bodySql}
       WHERE org_id = ? AND key = ? AND claimed_at = ? AND status IS NULL AND EXISTS (SELECT 1 FROM ${table} WHERE org_id = ? AND id = ?)`,
    )
    .bind(
      body,
      ...fills.flatMap((fill) => [fill.text, ...fill.params]),
      held.orgId,
      held.key,
      held.claimedAt,
      held.orgId,
      id,
    );
}

const heldBy = (orgId: string, key: string, claimedAt: number) =>
  and(
    eq(idempotencyKeys.orgId, orgId),
    eq(idempotencyKeys.key, key),
    eq(idempotencyKeys.claimedAt, claimedAt),
    isNull(idempotencyKeys.status),
  );

export async function storeOutcome(
  db: Db,
  orgId: string,
  key: string,
  claimedAt: number,
  outcome: { status: number; contentType: string; body: string },
) {
  await db
    .update(idempotencyKeys)
    .set(outcome)
    .where(heldBy(orgId, key, claimedAt));
}

export async function releaseKey(db: Db, orgId: string, key: string, claimedAt: number) {
  await db.delete(idempotencyKeys).where(heldBy(orgId, key, claimedAt));
}

/** The purge of expired records, run by the Cron Trigger through the created_at index. */
export async function purgeExpiredKeys(db: Db, now: number) {
  await db.delete(idempotencyKeys).where(lt(idempotencyKeys.createdAt, now - IDEMPOTENCY_TTL_MS));
}
