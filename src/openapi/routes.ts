import { type Context, Hono } from "hono";
import type { AppEnv } from "../env";
import { methodNotAllowed } from "../http/method-not-allowed";
import { readAsset } from "../lib/assets";

// Generated ahead of time from document.ts (`npm run openapi`) and read as
// static assets: zod-openapi, the document and its page stay out of the bundle.
const asset = (c: Context<AppEnv>, file: string) => readAsset(c.env.ASSETS, file, c.req.url);

/** The OpenAPI document and the docs page: public, unauthenticated, not rate limited. */
export function docsRoutes() {
  return new Hono<AppEnv>()
    .get("/api/v1/openapi.json", async (c) => c.json(await (await asset(c, "/openapi.json")).json<object>()))
    .all("/api/v1/openapi.json", methodNotAllowed("GET"))
    .get("/docs", async (c) => c.html(await (await asset(c, "/docs.html")).text()))
    .all("/docs", methodNotAllowed("GET"));
}
