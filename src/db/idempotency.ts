import { and, eq, isNull, lt } from "drizzle-orm";
import { idempotencyKeys } from "../../drizzle/schema";
import type { Db } from "./client";

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
  const claimed = await db.$client.prepare(CLAIM).bind(orgId, key, requestHash, now, IDEMPOTENCY_TTL_MS, ABANDONED_CLAIM_MS).first();
  if (claimed) return { claimed: true as const };
  const [record] = await db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.orgId, orgId), eq(idempotencyKeys.key, key)));
  // Gone between the two statements (purged or released): report it as running, the client retries.
  return { claimed: false as const, record };
}

const heldBy = (orgId: string, key: string, claimedAt: number) =>
  and(eq(idempotencyKeys.orgId, orgId), eq(idempotencyKeys.key, key), eq(idempotencyKeys.claimedAt, claimedAt), isNull(idempotencyKeys.status));

export async function storeOutcome(db: Db, orgId: string, key: string, claimedAt: number, outcome: { status: number; contentType: string; body: string }) {
  await db.update(idempotencyKeys).set(outcome).where(heldBy(orgId, key, claimedAt));
}

export async function releaseKey(db: Db, orgId: string, key: string, claimedAt: number) {
  await db.delete(idempotencyKeys).where(heldBy(orgId, key, claimedAt));
}

/** The purge of expired records, run by the Cron Trigger through the created_at index. */
export async function purgeExpiredKeys(db: Db, now: number) {
  await db.delete(idempotencyKeys).where(lt(idempotencyKeys.createdAt, now - IDEMPOTENCY_TTL_MS));
}
