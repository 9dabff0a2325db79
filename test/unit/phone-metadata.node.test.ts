// The worker parses the phone metadata from src/lib/phone-metadata.ts
// (src/lib/phones.ts): it must be the installed libphonenumber-js's own.
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { phoneMetadataModule } from "../../src/cli/phone-metadata-module";
import METADATA from "../../src/lib/phone-metadata";

it("src/lib/phone-metadata.ts is the installed metadata (else run npm run phone-metadata)", async () => {
  const file = path.resolve(import.meta.dirname, "../../src/lib/phone-metadata.ts");
  expect(readFileSync(file, "utf8") === phoneMetadataModule(), "stale: run npm run phone-metadata").toBe(true);
  const installed = (await import("libphonenumber-js/metadata.min.json", { with: { type: "json" } })).default;
  expect(JSON.parse(METADATA)).toEqual(installed);
});
