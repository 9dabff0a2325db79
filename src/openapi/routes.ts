import { type Context, Hono } from "hono";
import type { AppEnv } from "../env";
import { methodNotAllowed } from "../http/method-not-allowed";
import { readAsset } from "../lib/assets";

type Json = Record<string, unknown>;

// Generated ahead of time from document.ts (`npm run openapi`) and read as a
// static asset: zod-openapi and the document stay out of the worker's bundle.
const document = async (c: Context<AppEnv>) => (await readAsset(c.env.ASSETS, "/openapi.json", c.req.url)).json<Json>();

/** The OpenAPI document and the docs page: public, unauthenticated, not rate limited. */
export function docsRoutes() {
  return new Hono<AppEnv>()
    .get("/api/v1/openapi.json", async (c) => c.json(await document(c)))
    .all("/api/v1/openapi.json", methodNotAllowed("GET"))
    .get("/docs", async (c) => {
      // A module loaded by its first request: no isolate loads it at startup.
      const { renderDocsPage } = await import("./docs-page");
      return c.html(renderDocsPage(await document(c)));
    })
    .all("/docs", methodNotAllowed("GET"));
}
