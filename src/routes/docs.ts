import { Hono } from "hono";
import type { AppEnv } from "../env";
import { methodNotAllowed } from "../http/method-not-allowed";
import { renderDocsPage } from "../openapi/docs-page";
import { openApiDocument } from "../openapi/document";

/** The OpenAPI document and the docs page: public, unauthenticated, not rate limited. */
export const docs = new Hono<AppEnv>()
  .get("/api/v1/openapi.json", (c) => c.json(openApiDocument()))
  .all("/api/v1/openapi.json", methodNotAllowed("GET"))
  .get("/docs", (c) => c.html(renderDocsPage(openApiDocument() as unknown as Record<string, unknown>)))
  .all("/docs", methodNotAllowed("GET"));
