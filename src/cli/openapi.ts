// `npm run openapi`: writes the OpenAPI document of the operations and its
// docs page into src/assets/, which the worker serves (src/openapi/routes.ts).
// test/integration/openapi/generated.node.test.ts fails while they are stale.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { generatedAssets } from "../openapi/document";
import { OPERATIONS } from "../routes";
import { projectRoot } from "./cloudflare";

for (const [name, text] of Object.entries(await generatedAssets(OPERATIONS))) {
  writeFileSync(path.join(projectRoot, "src/assets", name), text);
  console.log(`wrote src/assets/${name}`);
}
