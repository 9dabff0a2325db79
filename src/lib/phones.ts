// Phone numbers (docs/api.md, "Phone numbers"): normalised to E.164 by
// libphonenumber-js, never by hand-written rules. A number written without "+"
// is read in the organisation's country. The "min" metadata set, without its
// formatting rules, keeps the worker small (10 KB gzip against 50 KB for
// "max"); it validates a number by its country's lengths and leading digits,
// which is what finding a caller needs. It is kept as text and parsed on the
// first number (src/lib/phone-metadata.ts), not at every isolate's startup.
import {
  type CountryCode,
  isSupportedCountry,
  type MetadataJson,
  parsePhoneNumberFromString,
} from "libphonenumber-js/core";
import { once } from "./once";
import METADATA from "./phone-metadata";

const metadata = once(() => JSON.parse(METADATA) as MetadataJson);

/** An ISO 3166-1 alpha-2 code the phone library supports (upper case). */
export const isPhoneCountry = (code: string): boolean =>
  /^[A-Z]{2}$/.test(code) && isSupportedCountry(code as CountryCode, metadata());

/** `text` as E.164 (`+19175550134`) when it is a valid number, read in `country` without "+"; else null. */
export function normalizePhone(text: string, country: string): string | null {
  if (!isPhoneCountry(country)) return null;
  const parsed = parsePhoneNumberFromString(text, country as CountryCode, metadata());
  return parsed?.isValid() ? parsed.number : null;
}

/** The E.164 columns stored beside a record's free-text phone fields (null where a field is absent or no number). */
export function phoneColumnsOf(
  record: { mobilePhone?: string | null; businessPhone?: string | null },
  country: string,
): { mobileE164: string | null; businessE164: string | null } {
  return {
    mobileE164: record.mobilePhone ? normalizePhone(record.mobilePhone, country) : null,
    businessE164: record.businessPhone ? normalizePhone(record.businessPhone, country) : null,
  };
}
