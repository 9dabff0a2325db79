// Every request is routed by hono's RegExpRouter (all routes compiled into one
// regular expression) only while that router accepts every route the app
// declares. One ambiguous route (a parameter beside a static segment at the
// same place, e.g. "/retell/:tool" beside "/retell/tools") silently moves the
// whole app to the trie router, which cost a fifth of a simple read's
// JavaScript CPU in the profile (docs/performance.md).
import { RegExpRouter } from "hono/router/reg-exp-router";
import { expect, it } from "vitest";
import app from "../../../src/app";

it("every route the app declares compiles into hono's RegExpRouter", () => {
  const router = new RegExpRouter<string>();
  for (const { method, path } of app.routes) router.add(method, path, `${method} ${path}`);
  // The router compiles on its first match, and throws there if a route is ambiguous.
  const [handlers] = router.match("GET", "/api/v1/accounts/acct_1");
  expect(handlers.map(([name]) => name)).toContain("GET /api/v1/accounts/:id");
});

it("the app itself settles on it", async () => {
  await app.request("/health");
  expect(app.router.name).toBe("SmartRouter + RegExpRouter");
});
