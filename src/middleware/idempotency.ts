// Idempotency-Key (docs/api.md, "Retries"; after Stripe and the IETF draft). Runs after
// body validation, so invalid requests are never recorded. The key is not
// claimed before the operation: a write claims it in its own batch, beside
// the write and the record of its answer (src/db/write.ts), so a
// first attempt takes no round trip of its own and a write is never committed
// without its outcome; a key taken by a record aborts that batch (KeyTaken),
// and the answer comes from the record. Outcomes without a write (reads,
// refusals) are recorded afterwards, claim and outcome in one statement. Only
// outcomes of the operation itself are recorded (2xx and 409
// slot_unavailable); a claim left without one is released, so that a retry
// runs afresh.

import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { type IdempotencyKey, KeyTaken, keyRecord, recordOutcome, releaseKey } from "../db/idempotency";
import type { AppEnv } from "../env";
import { ApiError, keyInProgress, problemResponse, validationFailed } from "../http/problem";
import { sha256Hex } from "../lib/hash";

const KEY = /^[\x20-\x7e]{1,255}$/;

type KeyRecord = Awaited<ReturnType<typeof keyRecord>>;

export const idempotency = createMiddleware<AppEnv>(async function idempotency(c, next) {
  const key = c.req.header("Idempotency-Key");
  if (key === undefined) return next();
  if (!KEY.test(key)) {
    throw validationFailed([
      { path: "Idempotency-Key", code: "invalid_format", message: "must be 1 to 255 printable ASCII characters" },
    ]);
  }
  const url = new URL(c.req.url);
  const bodyHash = await sha256Hex(c.get("rawBody") ?? new Uint8Array());
  // A bound call's caller is part of its request: another caller's retry with the key never replays this answer.
  const { role, callerPhone } = c.get("actor");
  const bound = role === "agent" ? ` ${callerPhone}` : "";
  const requestHash = await sha256Hex(`${c.req.method} ${url.pathname}${url.search} ${bodyHash}${bound}`);
  const db = c.get("db");
  const orgId = c.get("orgId");
  const idempotencyKey: IdempotencyKey = { orgId, key, claimedAt: Date.now(), requestHash };
  c.set("idempotencyKey", idempotencyKey);
  await next();

  // c.error is what the operation threw, already rendered by onError.
  if (c.error instanceof KeyTaken) {
    answerFromRecord(c, idempotencyKey, await keyRecord(db, idempotencyKey));
    return;
  }
  // A write recorded its response in its own batch: nothing is left to do.
  if (c.get("recorded")) return;
  const { status } = c.res;
  const isOutcome =
    (status >= 200 && status < 300) || (c.error instanceof ApiError && c.error.code === "slot_unavailable");
  if (isOutcome) {
    const outcome = {
      status,
      contentType: c.res.headers.get("Content-Type") ?? "application/json",
      body: await c.res.clone().text(),
    };
    const recorded = await recordOutcome(db, idempotencyKey, outcome);
    if (!recorded.stored) answerFromRecord(c, idempotencyKey, recorded.record);
  } else if (idempotencyKey.claimed) {
    await releaseKey(db, idempotencyKey);
  } else if (status < 500) {
    // The operation refused without writing (e.g. 404): a record of the key, if any, is the answer.
    const record = await keyRecord(db, idempotencyKey);
    if (record) answerFromRecord(c, idempotencyKey, record);
  }
});

/**
 * The answer when a record holds the key — a replay, a reuse (422) or a
 * request still running (409) — in place of the operation's response, none
 * of whose headers (a Retry-After, say) may carry over: hono builds and sets
 * a response on top of the current one's headers, so that one goes first.
 */
function answerFromRecord(c: Context<AppEnv>, idempotencyKey: IdempotencyKey, record: KeyRecord) {
  c.res = undefined;
  c.res = answerFrom(c, idempotencyKey, record);
}

function answerFrom(c: Context<AppEnv>, idempotencyKey: IdempotencyKey, record: KeyRecord): Response {
  if (record && record.requestHash !== idempotencyKey.requestHash) {
    return problemResponse(
      c,
      new ApiError("idempotency_key_reused", "This Idempotency-Key was used for a different request"),
    );
  }
  // Gone since (released or purged) or without an outcome yet: the client retries.
  if (!record || record.status === null) return problemResponse(c, keyInProgress());
  return c.body(record.body ?? "", record.status as 200, {
    "Content-Type": record.contentType ?? "application/json",
    "Idempotent-Replayed": "true",
  });
}
