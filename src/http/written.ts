// The answer of a write (src/db/write.ts): its 200 JSON body, whether its
// batch recorded that answer for the request's Idempotency-Key (so the
// idempotency middleware has nothing left to do), and its event, sent to the
// webhook delivery queue once the answer is on its way.
import type { Context } from "hono";
import type { Written } from "../db/idempotency";
import type { AppEnv } from "../env";
import { enqueueEvent } from "../webhooks/queue";

/**
 * The 200 JSON answer of a write; `recorded` tells the middleware above that
 * the write's batch stored it. The event the batch recorded goes to the
 * delivery queue once the answer is on its way (a failed send is the sweep's).
 */
export function writtenResponse(c: Context<AppEnv>, { body, recorded, event, alsoEvents = [] }: Written): Response {
  if (recorded) c.set("recorded", true);
  for (const recordedEvent of event ? [event, ...alsoEvents] : alsoEvents) {
    if (recordedEvent.endpoints.length === 0) continue;
    c.executionCtx.waitUntil(
      enqueueEvent(c.env, c.get("db"), recordedEvent, Date.now()).catch((error) =>
        console.error(JSON.stringify({ webhook: "enqueue failed", eventId: recordedEvent.id, error: String(error) })),
      ),
    );
  }
  return c.body(body, 200, { "Content-Type": "application/json" });
}
