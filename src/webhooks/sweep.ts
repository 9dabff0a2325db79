// The minute's sweep (Cron Trigger): sends to the delivery queue what the
// write path could not (an event whose send failed or whose isolate ended
// first) and what `webhook replay` asked for.
import type { Db } from "../db/client";
import { markEnqueued, unenqueuedEvents } from "../db/events";
import { forgetReplays, pendingReplays, subscribersAt } from "../db/webhooks";
import { type KeyEnv, keyProblem } from "./key";
import { type QueueEnv, sendDeliveries } from "./queue";

/** The write path sends within milliseconds of its commit; an event unsent after this long is the sweep's. */
export const SWEEP_AFTER_MS = 60_000;
const BATCH = 100;
/** wrangler.toml [triggers]: the sweep every minute; the other cron runs the hourly purges. */
export const SWEEP_CRON = "* * * * *";

export async function sweep(env: QueueEnv & KeyEnv, db: Db, now: number) {
  const stale = await unenqueuedEvents(db, now, SWEEP_AFTER_MS, BATCH);
  for (const event of stale) {
    const endpoints = await subscribersAt(db, event.orgId, event.type, event.createdAt);
    await sendDeliveries(
      env,
      endpoints.map((endpoint) => ({ org: event.orgId, event: event.id, endpoint, since: event.createdAt })),
    );
    await markEnqueued(db, event.orgId, event.id, now);
  }
  // Replays, and deliveries parked while the webhook key was unusable, wait for a usable key.
  if (keyProblem(env)) return { events: stale.length, replays: 0 };
  const replays = await pendingReplays(db, BATCH);
  await sendDeliveries(
    env,
    replays.map((r) => ({ org: r.orgId, event: r.eventId, endpoint: r.endpointId, since: r.requestedAt })),
  );
  await forgetReplays(
    db,
    replays.map((r) => r.id),
  );
  return { events: stale.length, replays: replays.length };
}
