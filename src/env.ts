import type { Channel, KeyRole } from "../drizzle/schema";
import type { Db } from "./db/client";
import type { Actor } from "./db/events";
import type { IdempotencyKey } from "./db/idempotency";
import type { Org } from "./db/orgs";
import type { DeliveryMessage } from "./webhooks/queue";

export interface Bindings {
  DB: D1Database;
  RATE_LIMITER: RateLimit;
  /** Seconds of the rate limiter's window, sent as Retry-After. */
  RATE_LIMIT_PERIOD: string;
  /** The webhook delivery queue (docs/webhooks.md, "Retries"): producer and consumer are this worker. */
  WEBHOOKS: Queue<DeliveryMessage>;
  /** The files of src/assets/ (wrangler.toml [assets]): the board's files, the OpenAPI document and its page. */
  ASSETS: Fetcher;
  /** Worker secret: the AES-GCM key of endpoint secrets (base64 of 32 bytes). */
  WEBHOOK_SECRET_KEY?: string;
  /** "true" in `.dev.vars` only: the published development key is accepted. */
  LOCAL_DEVELOPMENT?: string;
}

/** Where a request or tool call came from (docs/api.md, "The caller of a call"). */
export interface CallOrigin {
  channel: Channel;
  callId: string | null;
  /** The caller's number as reported, E.164; null when none parsed. */
  callerPhone: string | null;
}

export interface Variables {
  requestId: string;
  /** Set by the auth middleware only: the org every query is scoped to. */
  orgId: string;
  org: Org;
  /** Set by the auth middleware: the key, its role and where the call came from; every event records it. */
  actor: Actor & { keyId: string; role: KeyRole };
  db: Db;
  /** The raw JSON body as received (set by the body reader), hashed only for Idempotency-Key matching. */
  rawBody: Uint8Array;
  /** The Idempotency-Key this request holds, if it sent one (set by the idempotency middleware). */
  idempotencyKey?: IdempotencyKey;
  /** Set when a write's own batch recorded its answer for the idempotency key (see writtenResponse). */
  recorded?: boolean;
  /** An unexpected error, kept for the request log (never sent to the client). */
  error: Error;
}

export type { Org };

export interface AppEnv {
  Bindings: Bindings;
  Variables: Variables;
}
