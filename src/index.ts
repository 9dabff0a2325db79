import app from "./app";
import { createDb } from "./db/client";
import { purgeExpiredKeys } from "./db/idempotency";
import type { Bindings } from "./env";

export default {
  fetch: app.fetch,
  // Hourly (wrangler.toml [triggers]): expired Idempotency-Key records go by
  // their created_at index. Requests never depend on it: an expired record is
  // treated as absent whether or not it was purged yet.
  scheduled(controller, env, ctx) {
    ctx.waitUntil(purgeExpiredKeys(createDb(env.DB), controller.scheduledTime));
  },
} satisfies ExportedHandler<Bindings>;
