import { and, eq, isNull, sql } from "drizzle-orm";
import { apiKeys, orgs } from "../../drizzle/schema";
import type { Db } from "../db/client";
import { generateApiKey, hashApiKey } from "../lib/api-keys";
import { toIsoOrNull } from "../lib/datetime";
import { newId } from "../lib/ids";
import { CliError } from "./errors";

export function assertTimeZone(timeZone: string): void {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone });
  } catch {
    throw new CliError(`unknown IANA time zone: ${timeZone}`);
  }
}

/** A new org and its first key, written together. */
export async function createOrg(db: Db, name: string, timeZone: string, now = Date.now()) {
  if (!name.trim() || name.length > 200) throw new CliError("--name must be 1 to 200 characters");
  assertTimeZone(timeZone);
  const orgId = newId("org", now);
  const keyId = newId("key", now);
  const apiKey = generateApiKey();
  await db.batch([
    db.insert(orgs).values({ id: orgId, name: name.trim(), timeZone, createdAt: now }),
    db.insert(apiKeys).values({ id: keyId, orgId, keyHash: await hashApiKey(apiKey), createdAt: now }),
  ]);
  return { orgId, keyId, apiKey };
}

export async function createKey(db: Db, orgId: string, now = Date.now()) {
  const keyId = newId("key", now);
  const apiKey = generateApiKey();
  const keyHash = await hashApiKey(apiKey);
  // Conditional on the org existing: one statement, nothing written otherwise.
  const result = await db.run(sql`
    INSERT INTO ${apiKeys} (id, org_id, key_hash, created_at)
    SELECT ${keyId}, ${orgId}, ${keyHash}, ${now} WHERE EXISTS (SELECT 1 FROM ${orgs} WHERE ${orgs.id} = ${orgId})`);
  if (result.meta.changes !== 1) throw new CliError(`unknown org: ${orgId}`);
  return { keyId, apiKey };
}

/** Revokes a key of the org; revoking an already revoked key is not an error. */
export async function revokeKey(db: Db, orgId: string, keyId: string, now = Date.now()) {
  const [, [key]] = await db.batch([
    db
      .update(apiKeys)
      .set({ revokedAt: now })
      .where(and(eq(apiKeys.id, keyId), eq(apiKeys.orgId, orgId), isNull(apiKeys.revokedAt))),
    db
      .select({ id: apiKeys.id })
      .from(apiKeys)
      .where(and(eq(apiKeys.id, keyId), eq(apiKeys.orgId, orgId))),
  ]);
  if (!key) throw new CliError(`org ${orgId} has no key ${keyId}`);
  return { keyId, revoked: true as const };
}

export async function listKeys(db: Db, orgId: string) {
  const [[org], keys] = await db.batch([
    db.select({ id: orgs.id }).from(orgs).where(eq(orgs.id, orgId)),
    db.select().from(apiKeys).where(eq(apiKeys.orgId, orgId)).orderBy(apiKeys.createdAt, apiKeys.id),
  ]);
  if (!org) throw new CliError(`unknown org: ${orgId}`);
  return {
    keys: keys.map((k) => ({
      keyId: k.id,
      createdAt: toIsoOrNull(k.createdAt),
      revokedAt: toIsoOrNull(k.revokedAt),
      lastUsedAt: toIsoOrNull(k.lastUsedAt),
    })),
  };
}

export async function assertOrgExists(db: Db, orgId: string) {
  const [org] = await db.select({ id: orgs.id }).from(orgs).where(eq(orgs.id, orgId));
  if (!org) throw new CliError(`unknown org: ${orgId}`);
}
