import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";

// A client's own id is kept when it is safe to echo into headers and logs.
const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export const requestId = createMiddleware<AppEnv>(async function requestId(c, next) {
  const sent = c.req.header("X-Request-Id");
  const id = sent && SANE_ID.test(sent) ? sent : crypto.randomUUID();
  c.set("requestId", id);
  await next();
  c.res.headers.set("X-Request-Id", id);
});
