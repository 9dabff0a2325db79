import { Hono } from "hono";
import type { AppEnv } from "../env";
import { methodNotAllowed } from "../http/method-not-allowed";
import type { Operation } from "../http/operation";

/** The OpenAPI document of `operations` and the docs page: public, unauthenticated, not rate limited. */
export function docsRoutes(operations: readonly Operation[]) {
  // The document and the page are modules loaded by their first request: no isolate builds them at startup.
  const document = async () => (await import("./document")).openApiDocument(operations);
  return new Hono<AppEnv>()
    .get("/api/v1/openapi.json", async (c) => c.json(await document()))
    .all("/api/v1/openapi.json", methodNotAllowed("GET"))
    .get("/docs", async (c) => {
      const { renderDocsPage } = await import("./docs-page");
      return c.html(renderDocsPage((await document()) as unknown as Record<string, unknown>));
    })
    .all("/docs", methodNotAllowed("GET"));
}
