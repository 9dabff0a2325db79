// Authentication (docs/api.md, "Authentication"): both headers, a key that
// hashes to an active key of the org named by X-ORG-ID. Every failure is the
// same 401, so a caller cannot tell a wrong key from a wrong org or a revoked
// key.
import { createMiddleware } from "hono/factory";
import type { KeyRole } from "../../drizzle/schema";
import { findKeyWithCatalogue, orgOfKey, touchKey } from "../db/api-keys";
import type { Db } from "../db/client";
import type { AppEnv, Org } from "../env";
import { originOf } from "../http/caller";
import { ApiError } from "../http/problem";
import { API_KEY_PATTERN, constantTimeEqual, hashApiKey } from "../lib/api-keys";

const ORG_ID_PATTERN = /^org_[A-Za-z0-9]{1,64}$/;
// last_used_at is a hint for operators, not an audit log: writing it at most
// once a minute per key keeps busy keys from writing on every request.
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * How long an isolate trusts a key it has verified without asking D1 again:
 * the longest a revoked key (or a changed schedule, service or technician) can go on being honoured
 * by an isolate that saw it just before (docs/api.md, "Authentication": within
 * 3 seconds).
 */
export const AUTH_CACHE_TTL_MS = 3_000;
/** Bounds the isolate's memory whatever the number of keys in use. */
const AUTH_CACHE_MAX_KEYS = 1_000;

interface Verified {
  keyId: string;
  role: KeyRole;
  org: Org;
  lastUsedAt: number | null;
  expiresAt: number;
}

// By the key as sent: hashing it on every request was the largest CPU cost of
// authentication (docs/performance.md). The isolate holds a key it was sent
// for at most 3 s, in memory only; D1 holds hashes, never keys. Only successes
// are cached: a new key works at once, and a failure costs the caller a D1
// read, as before.
const verified = new Map<string, Verified>();

async function verify(db: Db, key: string, orgId: string, now: number) {
  const cached = verified.get(key);
  if (cached && cached.expiresAt > now) return cached;
  verified.delete(key);
  // The lookup is by SHA-256 of the key: timing of the index search can reveal
  // at most a hash prefix, which says nothing about the key itself.
  const keyHash = await hashApiKey(key);
  const found = await findKeyWithCatalogue(db, keyHash, orgId);
  if (!found || !constantTimeEqual(found.key.keyHash, keyHash) || !constantTimeEqual(found.key.orgId, orgId))
    return undefined;
  const entry: Verified = {
    keyId: found.key.id,
    role: found.key.role,
    org: orgOfKey(found.key, found.catalogue),
    lastUsedAt: found.key.lastUsedAt,
    expiresAt: now + AUTH_CACHE_TTL_MS,
  };
  // Maps iterate in insertion order: the first key is the oldest entry.
  if (verified.size >= AUTH_CACHE_MAX_KEYS) verified.delete(verified.keys().next().value as string);
  verified.set(key, entry);
  return entry;
}

const unauthenticated = (detail = "Send a valid X-API-KEY and the X-ORG-ID it belongs to") =>
  new ApiError("unauthenticated", detail, { headers: { "WWW-Authenticate": 'ApiKey header="X-API-KEY"' } });

export const auth = createMiddleware<AppEnv>(async function auth(c, next) {
  const key = c.req.header("X-API-KEY")?.trim();
  const orgId = c.req.header("X-ORG-ID")?.trim();
  if (!key) throw unauthenticated("The X-API-KEY header is missing");
  if (!orgId) throw unauthenticated("The X-ORG-ID header is missing");
  if (!API_KEY_PATTERN.test(key) || !ORG_ID_PATTERN.test(orgId)) throw unauthenticated();

  const now = Date.now();
  const found = await verify(c.get("db"), key, orgId, now);
  if (!found || !constantTimeEqual(found.org.id, orgId)) throw unauthenticated();
  c.set("orgId", found.org.id);
  c.set("org", found.org);
  // A tool call's origin is read by its transport from the platform's envelope (src/http/tools.ts).
  c.set("actor", { keyId: found.keyId, role: found.role, ...originOf(c, "http") });
  if (found.lastUsedAt === null || found.lastUsedAt < now - LAST_USED_RESOLUTION_MS) {
    found.lastUsedAt = now;
    // Off the response path; a failed hint write must not fail the request.
    c.executionCtx.waitUntil(touchKey(c.get("db"), found.keyId, now, LAST_USED_RESOLUTION_MS).catch(() => {}));
  }
  await next();
});
