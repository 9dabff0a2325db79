import { type DrizzleD1Database, drizzle } from "drizzle-orm/d1";

/** Drizzle over D1; `$client` is the binding itself, for batches of raw SQL (drizzle cannot batch those). */
export type Db = DrizzleD1Database & { $client: D1Database };

export const createDb = (d1: D1Database): Db => drizzle(d1);
