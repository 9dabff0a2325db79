// One D1 session per request (the D1 Sessions API): its reads may be served by
// the nearest read replica, its writes go to the primary, and every query of
// the session sees the ones before it. The session's bookmark goes back in
// `X-D1-Bookmark`; a client that sends it on its next request reads at least
// that far, so it always sees its own writes, whichever replica answers.
import { createMiddleware } from "hono/factory";
import { BOOKMARK_HEADER, createDb } from "../db/client";
import type { AppEnv } from "../env";

// D1 bookmarks are hex groups, e.g. 0000000a-00000002-00004f7d-<hash>.
const BOOKMARK_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8,64}$/;

/**
 * Where the session starts: at the client's bookmark; anywhere without one (a
 * replica is fine for a first read); at the primary when the header is present
 * but unusable, since the primary is never behind any bookmark the client
 * could have meant. A bad bookmark costs latency, never correctness or a 400.
 */
function sessionStart(bookmark: string | undefined): string {
  if (bookmark === undefined) return "first-unconstrained";
  return BOOKMARK_PATTERN.test(bookmark) ? bookmark : "first-primary";
}

export const database = createMiddleware<AppEnv>(async function database(c, next) {
  const sent = c.req.header(BOOKMARK_HEADER)?.trim();
  const start = sessionStart(sent);
  const session = c.env.DB.withSession(start);
  c.set("db", createDb(session));
  try {
    await next();
  } finally {
    // Only authenticated callers get one: on a 401 its presence would tell a
    // key that needed a lookup from one the isolate knows (docs/api.md,
    // "Authentication": one uniform 401). A request's tool calls run in its session.
    // With no query run, a usable bookmark the client sent is still where it stands.
    const bookmark = session.getBookmark() ?? (start === sent ? sent : null);
    if (c.get("orgId") !== undefined && bookmark !== null) c.res.headers.set(BOOKMARK_HEADER, bookmark);
  }
});
