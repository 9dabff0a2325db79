// The worker serves the OpenAPI document as generated ahead of time
// (src/openapi/routes.ts): the committed file must be what the operations
// declare now.
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { OPENAPI_ASSET, openApiJson } from "../../../src/openapi/document";
import { OPERATIONS } from "../../../src/routes";

it(`${OPENAPI_ASSET} is the document of the operations (else run npm run openapi)`, () => {
  const committed = readFileSync(path.resolve(import.meta.dirname, "../../..", OPENAPI_ASSET), "utf8");
  expect(committed === openApiJson(OPERATIONS), "stale: run npm run openapi").toBe(true);
});
