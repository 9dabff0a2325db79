import type { Db } from "./db/client";
import type { HeldKey } from "./db/idempotency";
import type { Schedule } from "./scheduling/schedule";
import type { DeliveryMessage } from "./webhooks/queue";

/** The authenticated org, as the auth middleware read it. */
export interface Org {
  id: string;
  /** Where a phone number written without "+" is read (ISO 3166-1 alpha-2). */
  country: string;
  schedule: Schedule;
  /** No booking of this org lasts longer: the longest slotMinutes it has had. */
  maxBookingMs: number;
  /** The HMAC key of its list cursors (hex); never sent to a client. */
  cursorSecret: string;
}

export interface Bindings {
  DB: D1Database;
  RATE_LIMITER: RateLimit;
  /** Seconds of the rate limiter's window, sent as Retry-After. */
  RATE_LIMIT_PERIOD: string;
  /** The webhook delivery queue (contract 9.3): producer and consumer are this worker. */
  WEBHOOKS: Queue<DeliveryMessage>;
  /** Worker secret: the AES-GCM key of endpoint secrets (base64 of 32 bytes). */
  WEBHOOK_SECRET_KEY?: string;
  /** "true" in `.dev.vars` only: the published development key is accepted. */
  LOCAL_DEVELOPMENT?: string;
}

export interface Variables {
  requestId: string;
  /** Set by the auth middleware only: the org every query is scoped to. */
  orgId: string;
  org: Org;
  db: Db;
  /** The raw JSON body as received (set by the body guard), hashed only for Idempotency-Key matching. */
  rawBody: Uint8Array;
  /** The Idempotency-Key this request holds, if it sent one (set by the idempotency middleware). */
  heldKey?: HeldKey;
  /** Set when a write's own batch recorded its answer for the held key (see writtenResponse). */
  recorded?: boolean;
  /** An unexpected error, kept for the request log (never sent to the client). */
  error: Error;
}

export interface AppEnv {
  Bindings: Bindings;
  Variables: Variables;
}
