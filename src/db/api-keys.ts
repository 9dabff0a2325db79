import { and, eq, exists, isNull, lt, or } from "drizzle-orm";
import { apiKeys, type KeyRole, orgs } from "../../drizzle/schema";
import { generateApiKey, hashApiKey } from "../lib/api-keys";
import { MINUTE, toIsoOrNull } from "../lib/datetime";
import { newId } from "../lib/ids";
import { scheduleOf } from "../scheduling/schedule";
import { type Catalogue, EMPTY_CATALOGUE } from "../scheduling/visits";
import { catalogueOf, catalogueQueries } from "./catalogue";
import { type Db, inColumnOrder, insertWhere } from "./client";
import type { Org } from "./orgs";

/**
 * The active (not revoked) key with this hash, if any, with what every request
 * of its org may need (the schedule), in the same round trip.
 */
export async function findActiveKey(db: Db, keyHash: string) {
  const [key] = await activeKeyQuery(db, keyHash);
  return key;
}

const activeKeyQuery = (db: Db, keyHash: string) =>
  db
    .select({
      id: apiKeys.id,
      orgId: apiKeys.orgId,
      keyHash: apiKeys.keyHash,
      role: apiKeys.role,
      lastUsedAt: apiKeys.lastUsedAt,
      name: orgs.name,
      timeZone: orgs.timeZone,
      country: orgs.country,
      schedule: orgs.schedule,
      maxSlotMinutes: orgs.maxSlotMinutes,
      cursorSecret: orgs.cursorSecret,
    })
    .from(apiKeys)
    .innerJoin(orgs, eq(orgs.id, apiKeys.orgId))
    .where(and(eq(apiKeys.keyHash, keyHash), isNull(apiKeys.revokedAt)))
    .limit(1);

/**
 * The active key with this hash and, in the same round trip, the catalogue of
 * the org the request names (used only if the key is that org's).
 */
export async function findKeyWithCatalogue(db: Db, keyHash: string, orgId: string) {
  const [[key], serviceRows, technicianRows] = await db.batch([
    activeKeyQuery(db, keyHash),
    ...catalogueQueries(db, orgId),
  ]);
  return key && { key, catalogue: catalogueOf(serviceRows, technicianRows) };
}

export type ActiveKey = NonNullable<Awaited<ReturnType<typeof findActiveKey>>>;

/** The org of an active key, as every request of it sees the org. */
export const orgOfKey = (key: ActiveKey, catalogue: Catalogue = EMPTY_CATALOGUE): Org => ({
  id: key.orgId,
  name: key.name,
  country: key.country,
  schedule: scheduleOf(key.timeZone, key.schedule),
  maxBookingMs: key.maxSlotMinutes * MINUTE,
  cursorSecret: key.cursorSecret,
  catalogue,
});

/** Records use of a key, at most once per `resolutionMs`, so busy keys do not write on every request. */
export async function touchKey(db: Db, keyId: string, now: number, resolutionMs: number) {
  await db
    .update(apiKeys)
    .set({ lastUsedAt: now })
    .where(and(eq(apiKeys.id, keyId), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, now - resolutionMs))));
}

/** Another key of the org (shown once) with its role, or null when the org does not exist. */
export async function createKey(db: Db, orgId: string, role: KeyRole = "office", now = Date.now()) {
  const keyId = newId("key", now);
  const apiKey = generateApiKey();
  const keyHash = await hashApiKey(apiKey);
  // Conditional on the org existing: one statement, nothing written otherwise.
  const row = inColumnOrder(apiKeys, { id: keyId, orgId, keyHash, role, createdAt: now });
  const result = await insertWhere(
    db,
    apiKeys,
    row,
    exists(db.select({ id: orgs.id }).from(orgs).where(eq(orgs.id, orgId))),
  );
  return result.meta.changes === 1 ? { keyId, apiKey, role } : null;
}

/** Revokes a key of the org (revoking a revoked key is not an error); null when the org has no such key. */
export async function revokeKey(db: Db, orgId: string, keyId: string, now = Date.now()) {
  const ofOrg = and(eq(apiKeys.id, keyId), eq(apiKeys.orgId, orgId));
  const [, [key]] = await db.batch([
    db
      .update(apiKeys)
      .set({ revokedAt: now })
      .where(and(ofOrg, isNull(apiKeys.revokedAt))),
    db.select({ id: apiKeys.id }).from(apiKeys).where(ofOrg),
  ]);
  return key ? { keyId, revoked: true as const } : null;
}

/** The org's keys, never their hashes; null when the org does not exist. */
export async function listKeys(db: Db, orgId: string) {
  const [[org], keys] = await db.batch([
    db.select({ id: orgs.id }).from(orgs).where(eq(orgs.id, orgId)),
    db.select().from(apiKeys).where(eq(apiKeys.orgId, orgId)).orderBy(apiKeys.createdAt, apiKeys.id),
  ]);
  if (!org) return null;
  return {
    keys: keys.map((k) => ({
      keyId: k.id,
      role: k.role,
      createdAt: toIsoOrNull(k.createdAt),
      revokedAt: toIsoOrNull(k.revokedAt),
      lastUsedAt: toIsoOrNull(k.lastUsedAt),
    })),
  };
}
