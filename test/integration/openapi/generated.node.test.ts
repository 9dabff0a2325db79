// The worker serves the OpenAPI document and its docs page as generated ahead
// of time (src/openapi/routes.ts): the committed files must be what the
// operations declare now.
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { generatedAssets } from "../../../src/openapi/document";
import { OPERATIONS } from "../../../src/routes";

const ASSETS = path.resolve(import.meta.dirname, "../../../src/assets");

it("src/assets/ holds the generated document and page (else run npm run openapi)", async () => {
  for (const [name, text] of Object.entries(await generatedAssets(OPERATIONS)))
    expect(readFileSync(path.join(ASSETS, name), "utf8") === text, `${name} is stale: run npm run openapi`).toBe(true);
});
