import { and, eq, isNull, lt, or } from "drizzle-orm";
import { apiKeys, orgs } from "../../drizzle/schema";
import type { Db } from "./client";

/**
 * The active (not revoked) key with this hash, if any, with what every request
 * of its org may need (the schedule), in the same round trip.
 */
export async function findActiveKey(db: Db, keyHash: string) {
  const [key] = await db
    .select({
      id: apiKeys.id,
      orgId: apiKeys.orgId,
      keyHash: apiKeys.keyHash,
      lastUsedAt: apiKeys.lastUsedAt,
      timeZone: orgs.timeZone,
      schedule: orgs.schedule,
      maxSlotMinutes: orgs.maxSlotMinutes,
    })
    .from(apiKeys)
    .innerJoin(orgs, eq(orgs.id, apiKeys.orgId))
    .where(and(eq(apiKeys.keyHash, keyHash), isNull(apiKeys.revokedAt)))
    .limit(1);
  return key;
}

/** Records use of a key, at most once per `resolutionMs`, so busy keys do not write on every request. */
export async function touchKey(db: Db, keyId: string, now: number, resolutionMs: number) {
  await db
    .update(apiKeys)
    .set({ lastUsedAt: now })
    .where(and(eq(apiKeys.id, keyId), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, now - resolutionMs))));
}
