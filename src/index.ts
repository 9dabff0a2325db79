import app from "./app";
import { decideDueVisits } from "./availability/due-visits";
import { createDb } from "./db/client";
import { purgeEvents } from "./db/events";
import { sweepHolds } from "./db/holds";
import { purgeExpiredKeys } from "./db/idempotency";
import { purgeWebhooks } from "./db/webhooks";
import type { Bindings } from "./env";
import { deliverBatch } from "./webhooks/deliver";
import { type DeliveryMessage, enqueueEvent } from "./webhooks/queue";
import { SWEEP_CRON, sweep } from "./webhooks/sweep";

// Only handlers may be exported here (workerd refuses other exports).

export default {
  fetch: app.fetch,
  // Requests never depend on the purges: an expired Idempotency-Key record is
  // treated as absent whether or not it was purged yet, an expired hold as
  // lapsed whether or not it was deleted.
  scheduled(controller, env, ctx) {
    const db = createDb(env.DB);
    const now = controller.scheduledTime;
    // Every trigger (the minute's too) decides the plans' visits now due (docs/api.md, "Plans"):
    // a run overlapping another decides nothing twice.
    ctx.waitUntil(
      decideDueVisits(db, now, { enqueue: (event) => enqueueEvent(env, db, event, Date.now()) }).catch((error) =>
        console.error(JSON.stringify({ plans: "deciding due visits failed", error: String(error) })),
      ),
    );
    if (controller.cron === SWEEP_CRON) {
      ctx.waitUntil(sweep(env, db, now));
      return;
    }
    ctx.waitUntil(
      Promise.all([purgeExpiredKeys(db, now), purgeEvents(db, now), purgeWebhooks(db, now), sweepHolds(db, now)]),
    );
  },
  queue: (batch, env) => deliverBatch(batch, env),
} satisfies ExportedHandler<Bindings, DeliveryMessage>;
