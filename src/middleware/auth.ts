// Contract section 2: both headers, a key that hashes to an active key of the
// org named by X-ORG-ID. Every failure is the same 401, so a caller cannot
// tell a wrong key from a wrong org or a revoked key.
import { createMiddleware } from "hono/factory";
import { findActiveKey, touchKey } from "../db/api-keys";
import type { AppEnv } from "../env";
import { ApiError } from "../http/problem";
import { API_KEY_PATTERN, constantTimeEqual, hashApiKey } from "../lib/api-keys";
import { scheduleOf } from "../scheduling/schedule";

const ORG_ID_PATTERN = /^org_[A-Za-z0-9]{1,64}$/;
// last_used_at is a hint for operators, not an audit log: writing it at most
// once a minute per key keeps busy keys from writing on every request.
const LAST_USED_RESOLUTION_MS = 60_000;

const unauthenticated = (detail = "Send a valid X-API-KEY and the X-ORG-ID it belongs to") =>
  new ApiError(401, "unauthenticated", detail, { headers: { "WWW-Authenticate": 'ApiKey header="X-API-KEY"' } });

export const auth = createMiddleware<AppEnv>(async function auth(c, next) {
  const key = c.req.header("X-API-KEY")?.trim();
  const orgId = c.req.header("X-ORG-ID")?.trim();
  if (!key) throw unauthenticated("The X-API-KEY header is missing");
  if (!orgId) throw unauthenticated("The X-ORG-ID header is missing");
  if (!API_KEY_PATTERN.test(key) || !ORG_ID_PATTERN.test(orgId)) throw unauthenticated();

  // The lookup is by SHA-256 of the key: timing of the index search can reveal
  // at most a hash prefix, which says nothing about the key itself.
  const keyHash = await hashApiKey(key);
  const found = await findActiveKey(c.var.db, keyHash);
  if (!found || !(constantTimeEqual(found.keyHash, keyHash) && constantTimeEqual(found.orgId, orgId))) {
    throw unauthenticated();
  }
  c.set("orgId", found.orgId);
  c.set("org", {
    id: found.orgId,
    schedule: scheduleOf(found.timeZone, found.schedule),
    maxBookingMs: found.maxSlotMinutes * 60_000,
  });
  const now = Date.now();
  if (found.lastUsedAt === null || found.lastUsedAt < now - LAST_USED_RESOLUTION_MS) {
    // Off the response path; a failed hint write must not fail the request.
    c.executionCtx.waitUntil(touchKey(c.var.db, found.id, now, LAST_USED_RESOLUTION_MS).catch(() => {}));
  }
  await next();
});
