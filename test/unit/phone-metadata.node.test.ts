// The worker parses the phone metadata from src/lib/phone-metadata.ts
// (src/lib/phones.ts): the installed libphonenumber-js's own, without what
// only formatting reads, and every number must normalise as with the whole.
import { readFileSync } from "node:fs";
import path from "node:path";
import {
  type CountryCode,
  getCountries,
  getCountryCallingCode,
  type MetadataJson,
  parsePhoneNumberFromString,
} from "libphonenumber-js/core";
import examples from "libphonenumber-js/examples.mobile.json" with { type: "json" };
import installed from "libphonenumber-js/metadata.min.json" with { type: "json" };
import { expect, it } from "vitest";
import { parsingMetadata, phoneMetadataModule } from "../../src/cli/phone-metadata-module";
import METADATA from "../../src/lib/phone-metadata";
import { normalizePhone } from "../../src/lib/phones";

const whole = installed as unknown as MetadataJson;
const trimmed = JSON.parse(METADATA) as MetadataJson;

it("src/lib/phone-metadata.ts is the installed metadata, trimmed (else run npm run phone-metadata)", () => {
  const file = path.resolve(import.meta.dirname, "../../src/lib/phone-metadata.ts");
  expect(readFileSync(file, "utf8") === phoneMetadataModule(), "stale: run npm run phone-metadata").toBe(true);
  expect(trimmed).toEqual(parsingMetadata());
  expect(METADATA.length).toBeLessThan(JSON.stringify(whole).length / 2);
});

/** The answer with the whole metadata: the number as E.164 when the library finds it valid. */
function wholeE164(text: string, country: string): string | null {
  const parsed = parsePhoneNumberFromString(text, country as CountryCode, whole);
  return parsed?.isValid() ? parsed.number : null;
}

/** A deterministic stream of digits (a linear congruential generator). */
function digits(seed: number): (n: number) => string {
  let state = seed;
  return (n) => {
    let out = "";
    for (let i = 0; i < n; i++) {
      state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
      out += String(state % 10);
    }
    return out;
  };
}

it("normalises every number alike with the trimmed metadata (the worker's normalizePhone) and the whole", () => {
  const countries = getCountries(whole);
  const random = digits(7);
  const cases: [string, string][] = [];
  for (const country of countries) {
    const example = (examples as Record<string, string>)[country];
    if (example) {
      const number = parsePhoneNumberFromString(example, country, whole);
      expect(number?.isValid(), `${country}'s example`).toBe(true);
      // The forms a caller writes: national (with its prefix), international, E.164, bare, with the US's exit code.
      const forms = [number!.formatNational(), number!.formatInternational(), number!.number, example];
      forms.push(`011 ${number!.formatInternational().slice(1)}`);
      for (const text of forms) for (const reader of [country, "US", "GB", "DE"]) cases.push([text, reader]);
    }
    const code = getCountryCallingCode(country, whole);
    for (let n = 4; n <= 14; n++) {
      cases.push([random(n), country], [`0${random(n)}`, country], [`+${code}${random(n)}`, country]);
      cases.push([`+${code} ${random(2)} ${random(n)}`, "US"]);
    }
  }
  let valid = 0;
  for (const [text, country] of cases) {
    const expected = wholeE164(text, country);
    if (expected) valid++;
    expect(normalizePhone(text, country), `${text} read in ${country}`).toBe(expected);
  }
  // The corpus reaches both answers, in every country.
  expect(countries.length).toBeGreaterThan(240);
  expect(valid).toBeGreaterThan(countries.length * 10);
  expect(cases.length - valid).toBeGreaterThan(countries.length * 10);
});
