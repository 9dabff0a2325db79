import type { Db } from "./db/client";

export interface Bindings {
  DB: D1Database;
}

export interface Variables {
  requestId: string;
  /** Set by the auth middleware only: the org every query is scoped to. */
  orgId: string;
  db: Db;
  /** An unexpected error, kept for the request log (never sent to the client). */
  error: Error;
}

export interface AppEnv {
  Bindings: Bindings;
  Variables: Variables;
}
