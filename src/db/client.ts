import { type DrizzleD1Database, drizzle } from "drizzle-orm/d1";

/** What queries need of D1: a binding or a session of it (the Sessions API). */
export type D1Client = Pick<D1Database, "prepare" | "batch">;

/** Drizzle over D1; `$client` is the binding or session itself, for batches of raw SQL (drizzle cannot batch those). */
export type Db = DrizzleD1Database & { $client: D1Client };

export const createDb = (d1: D1Client): Db => drizzle(d1 as D1Database);
