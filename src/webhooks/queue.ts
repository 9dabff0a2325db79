// The write path and the sweep send one message per (event, endpoint) to the
// delivery queue; the consumer (deliver.ts) makes one attempt per message.
import type { Db } from "../db/client";
import { markEnqueued, type RecordedEvent } from "../db/events";

export interface DeliveryMessage {
  org: string;
  event: string;
  endpoint: string;
  /** Attempts logged from this time on count towards this delivery (a replay starts again at 1). */
  since: number;
}

export interface QueueEnv {
  WEBHOOKS: Queue<DeliveryMessage>;
}

/** Sends an event to the delivery queue for each of its endpoints, then marks it sent (else the sweep sends it). */
export async function enqueueEvent(env: QueueEnv, db: Db, event: RecordedEvent, now: number) {
  await sendDeliveries(
    env,
    event.endpoints.map((endpoint) => ({ org: event.orgId, event: event.id, endpoint, since: event.createdAt })),
  );
  await markEnqueued(db, event.orgId, event.id, now);
}

/** sendBatch takes at most 100 messages. */
export async function sendDeliveries(env: QueueEnv, messages: DeliveryMessage[]) {
  for (let i = 0; i < messages.length; i += 100) {
    await env.WEBHOOKS.sendBatch(messages.slice(i, i + 100).map((body) => ({ body, contentType: "json" as const })));
  }
}
