// `npm run openapi`: writes the OpenAPI document of the operations to
// src/assets/openapi.json, which the worker serves (src/openapi/routes.ts).
// test/integration/openapi/generated.node.test.ts fails while it is stale.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { OPENAPI_ASSET, openApiJson } from "../openapi/document";
import { OPERATIONS } from "../routes";
import { projectRoot } from "./cloudflare";

const file = path.join(projectRoot, OPENAPI_ASSET);
writeFileSync(file, openApiJson(OPERATIONS));
console.log(`wrote ${path.relative(projectRoot, file)}`);
