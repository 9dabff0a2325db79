// The queue consumer (docs/webhooks.md, "Retries"): one attempt per message,
// all messages of a batch at once, each acknowledged or retried on its own, so
// a slow receiver (15 s at most) holds up no other endpoint's delivery. Every
// attempt is logged as a row of `webhook deliveries` and as a JSON line — never
// with the secret, the URL or more than 1 KiB of the response.

import type { DeliveryStatus } from "../../drizzle/schema";
import { createDb, type Db } from "../db/client";
import { deliveryTarget, logAttempt, parkDeliveries } from "../db/webhooks";
import { decryptSecret, type KeyEnv, keyProblem } from "./key";
import type { DeliveryMessage } from "./queue";
import { MAX_ATTEMPTS, parseRetryAfter, retryDelay } from "./retry";
import { webhookHeaders } from "./signature";

export const TIMEOUT_MS = 15_000;
const MAX_ERROR_BYTES = 1024;
/** Should D1 fail while parking a batch (below), the queue brings it back after this long. */
const KEY_WAIT_S = 300;

export interface DeliveryEnv extends KeyEnv {
  DB: D1Database;
}

export async function deliverBatch(batch: MessageBatch<DeliveryMessage>, env: DeliveryEnv) {
  const db = createDb(env.DB);
  const problem = keyProblem(env);
  if (problem) {
    // Nothing can be signed: the deliveries wait in D1, not in the queue,
    // whose retries (max_retries) would run out in hours and end in the
    // dead-letter queue. The sweep sends them once the key is usable.
    console.error(JSON.stringify({ webhook: "paused", error: problem, messages: batch.messages.length }));
    try {
      await parkDeliveries(
        db,
        batch.messages.map((message) => message.body),
      );
      batch.ackAll();
    } catch {
      batch.retryAll({ delaySeconds: KEY_WAIT_S });
    }
    return;
  }
  await Promise.all(
    batch.messages.map(async (message) => {
      try {
        const delay = await attempt(db, env.WEBHOOK_SECRET_KEY!, message.body);
        if (delay === null) message.ack();
        else message.retry({ delaySeconds: delay });
      } catch (error) {
        // D1 failed around the attempt: try the message again shortly.
        console.error(JSON.stringify({ webhook: "error", event: message.body.event, error: String(error) }));
        message.retry({ delaySeconds: 5 });
      }
    }),
  );
}

interface Outcome {
  status: DeliveryStatus;
  httpStatus: number | null;
  error: string | null;
  /** Seconds to the next attempt; null for none. */
  retryIn: number | null;
  disable: boolean;
}

/** Makes one attempt; answers the delay before the next one, or null when the delivery is over. */
async function attempt(db: Db, key: string, message: DeliveryMessage): Promise<number | null> {
  const { org: orgId, event: eventId, endpoint: endpointId, since } = message;
  const started = Date.now();
  const target = await deliveryTarget(db, { orgId, eventId, endpointId, since }, started);
  // Gone (removed, purged) or disabled since it was queued, or (a duplicate
  // message) its attempts are spent: nothing more is sent.
  if (target?.endpoint.status !== "enabled" || target.attempts >= MAX_ATTEMPTS) return null;
  const number = target.attempts + 1;
  const secrets = await Promise.all(target.ciphertexts.map((c) => decryptSecret(key, endpointId, c))).catch(
    () => undefined,
  );
  const sent = Date.now();
  const outcome = secrets
    ? await post(
        target.endpoint.url,
        await webhookHeaders(secrets, eventId, Math.floor(started / 1000), target.body),
        target.body,
        number,
        sent,
      )
    : // Sent unsigned it would be refused anyway; the log says what to do.
      failure(number, null, "the endpoint's secret does not decrypt (WEBHOOK_SECRET_KEY changed?): rotate its secret");
  const durationMs = Date.now() - sent;
  await logAttempt(db, { orgId, eventId, endpointId, attempt: number, durationMs, at: sent, ...outcome });
  console.log(
    JSON.stringify({
      webhook: "attempt",
      orgId,
      eventId,
      endpointId,
      attempt: number,
      status: outcome.status,
      httpStatus: outcome.httpStatus,
      durationMs,
      ...(outcome.error ? { error: outcome.error } : {}),
    }),
  );
  return outcome.retryIn;
}

async function post(url: string, headers: HeadersInit, body: string, number: number, now: number): Promise<Outcome> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers,
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
    const reason = timedOut
      ? `timed out after ${TIMEOUT_MS / 1000} s`
      : `network error: ${String(error).slice(0, 200)}`;
    return failure(number, null, reason);
  }
  if (response.ok) {
    await response.body?.cancel();
    return { status: "delivered", httpStatus: response.status, error: null, retryIn: null, disable: false };
  }
  const text = await head(response);
  const error = `HTTP ${response.status}${text ? `: ${text}` : ""}`;
  if (response.status === 410) {
    return { status: "failed", httpStatus: 410, error: `${error} (endpoint disabled)`, retryIn: null, disable: true };
  }
  return failure(number, response.status, error, parseRetryAfter(response.headers.get("Retry-After"), now));
}

function failure(number: number, httpStatus: number | null, error: string, retryAfter?: number): Outcome {
  const retryIn = number >= MAX_ATTEMPTS ? null : retryDelay(number, retryAfter);
  return { status: retryIn === null ? "failed" : "retrying", httpStatus, error, retryIn, disable: false };
}

/** At most the first 1 KiB of a response body, as text. */
async function head(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < MAX_ERROR_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  const bytes = new Uint8Array(await new Blob(chunks).arrayBuffer());
  return new TextDecoder().decode(bytes.slice(0, MAX_ERROR_BYTES)).trim();
}
