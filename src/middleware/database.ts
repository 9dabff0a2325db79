import { createMiddleware } from "hono/factory";
import { createDb } from "../db/client";
import type { AppEnv } from "../env";

export const database = createMiddleware<AppEnv>(async function database(c, next) {
  c.set("db", createDb(c.env.DB));
  await next();
});
