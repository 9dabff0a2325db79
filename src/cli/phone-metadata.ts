// `npm run phone-metadata`: writes libphonenumber-js's "min" metadata into
// src/lib/phone-metadata.ts as text, which src/lib/phones.ts parses on first
// use. test/unit/phone-metadata.node.test.ts fails while it is stale (after
// an upgrade of libphonenumber-js).
import { writeFileSync } from "node:fs";
import path from "node:path";
import { projectRoot } from "./cloudflare";
import { phoneMetadataModule } from "./phone-metadata-module";

const file = path.join(projectRoot, "src/lib/phone-metadata.ts");
writeFileSync(file, phoneMetadataModule());
console.log(`wrote ${path.relative(projectRoot, file)}`);
