// Idempotency-Key (contract 7, after Stripe and the IETF draft). Runs after
// body validation, so invalid requests are never recorded; records only the
// outcomes of the operation itself (2xx and 409 slot_unavailable) and
// releases the key otherwise, so that a retry runs afresh. A write records
// its response in the write's own batch (recordWithWrite): a write is never
// committed without its outcome, so a retry can never repeat it. Outcomes
// without a write (reads, refusals) are stored here, afterwards.

import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { claimKey, type HeldKey, releaseKey, storeOutcome, type Written } from "../db/idempotency";
import type { AppEnv } from "../env";
import { ApiError, validationFailed } from "../http/problem";
import { sha256Hex } from "../lib/hash";
import { enqueueEvent } from "../webhooks/queue";

const KEY = /^[\x20-\x7e]{1,255}$/;

export const idempotency = createMiddleware<AppEnv>(async function idempotency(c, next) {
  const key = c.req.header("Idempotency-Key");
  if (key === undefined) return next();
  if (!KEY.test(key)) {
    throw validationFailed([
      { path: "Idempotency-Key", code: "invalid_format", message: "must be 1 to 255 printable ASCII characters" },
    ]);
  }
  const url = new URL(c.req.url);
  const bodyHash = await sha256Hex(c.var.rawBody ?? new Uint8Array());
  const requestHash = await sha256Hex(`${c.req.method} ${url.pathname}${url.search} ${bodyHash}`);
  const now = Date.now();
  const { db, orgId } = c.var;
  const held: HeldKey = { orgId, key, claimedAt: now };
  const claim = await claimKey(db, held, requestHash);
  if (!claim.claimed) {
    const record = claim.record;
    if (record && record.requestHash !== requestHash) {
      throw new ApiError("idempotency_key_reused", "This Idempotency-Key was used for a different request");
    }
    if (!record || record.status === null) {
      throw new ApiError(
        "idempotency_in_progress",
        "A request with this Idempotency-Key is still running; retry shortly",
        {
          headers: { "Retry-After": "1" },
        },
      );
    }
    return c.body(record.body ?? "", record.status as 200, {
      "Content-Type": record.contentType ?? "application/json",
      "Idempotent-Replayed": "true",
    });
  }

  c.set("heldKey", held);
  await next();
  // A write recorded its response in its own batch: nothing is left to do.
  if (c.var.recorded) return;
  const { status } = c.res;
  // c.error is what the operation threw, already rendered by onError.
  const isOutcome =
    (status >= 200 && status < 300) || (c.error instanceof ApiError && c.error.code === "slot_unavailable");
  if (isOutcome) {
    const body = await c.res.clone().text();
    await storeOutcome(db, held, {
      status,
      contentType: c.res.headers.get("Content-Type") ?? "application/json",
      body,
    });
  } else {
    await releaseKey(db, held);
  }
});

/**
 * The 200 JSON answer of a write; `recorded` tells the middleware above that
 * the write's batch stored it. The event the batch recorded goes to the
 * delivery queue once the answer is on its way (a failed send is the sweep's).
 */
export function writtenResponse(c: Context<AppEnv>, { body, recorded, event }: Written): Response {
  if (recorded) c.set("recorded", true);
  if (event && event.endpoints.length > 0) {
    c.executionCtx.waitUntil(
      enqueueEvent(c.env, c.var.db, event, Date.now()).catch((error) =>
        console.error(JSON.stringify({ webhook: "enqueue failed", eventId: event.id, error: String(error) })),
      ),
    );
  }
  return c.body(body, 200, { "Content-Type": "application/json" });
}
