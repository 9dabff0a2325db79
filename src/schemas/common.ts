// Field builders shared by the request schemas, each a function: schemas are
// built on first use (src/lib/once.ts), never at startup. Strings are trimmed;
// an empty string or explicit null means "absent" and comes out as null.
import * as z from "zod/v4";
import { parseDateOrDateTime, parseDateTime } from "../lib/datetime";

// A lone surrogate or a NUL could not be read back as written (docs/api.md, "Conventions").
const isCleanText = (value: string) => value.isWellFormed() && !value.includes("\0");
// Factories, not shared objects: zod mutates the options it is given.
const cleanText = () => ({
  message: "must be well-formed Unicode without NUL characters",
  params: { code: "invalid_string" },
});

/**
 * A trimmed string of at most `max` UTF-16 code units (JavaScript's `length`:
 * an emoji counts 2), well-formed and without NUL. zod's own `max` counts code
 * points (as JSON Schema's maxLength, which the document keeps); the refine
 * counts units, and runs only when `max` passed, so one error is reported.
 */
const text = (max: number) =>
  z
    .string()
    .trim()
    .max(max, { abort: true })
    .refine((v) => v.length <= max, {
      message: `must be at most ${max} characters (UTF-16 code units)`,
      params: { code: "too_long" },
      abort: true,
    })
    .refine(isCleanText, cleanText());

/** An optional trimmed string of at most `max` characters; absent, null and "" come out as null. */
export const optionalText = (max: number) =>
  text(max)
    .nullish()
    .transform((v) => v || null);

/**
 * The schemas of a `phone` that only an agent key may leave out (it is then
 * the call's caller, docs/api.md "The caller of a call"): optional in the
 * schema, required of any other key by the validator (src/http/validate.ts).
 */
export const CALLERS_PHONE = new WeakSet<z.ZodType>();

export function callersPhone(description: string) {
  const schema = optionalText(LIMITS.phone).meta({ description, example: "+19175550134" });
  CALLERS_PHONE.add(schema);
  return schema;
}

/** A required trimmed string; "" and null are refused as missing. */
export const requiredText = (max: number) =>
  text(max).refine((v) => v !== "", { message: "is required", params: { code: "required" } });

// Deliberately plain: one "@", no spaces, a dot in the domain. Full RFC 5322
// would accept addresses no mail system delivers to.
const EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;

export const optionalEmail = () =>
  text(LIMITS.email)
    .refine((v) => v === "" || EMAIL.test(v), {
      message: "must be an email address",
      params: { code: "invalid_format" },
    })
    .nullish()
    .transform((v) => v || null);

export const optionalCode = () =>
  z
    .number()
    .int()
    .min(0)
    .max(2147483647)
    .nullish()
    .transform((v) => v ?? null);

const badDateTime = (message = "must be an RFC 3339 date-time with a zone, like 2026-11-23T14:00:00Z") => ({
  message,
  params: { code: "invalid_format" },
});

/** An RFC 3339 date-time with a zone, as epoch milliseconds. */
export const dateTime = () =>
  z
    .string()
    .trim()
    .refine((v) => parseDateTime(v) !== null, badDateTime())
    .meta({ format: "date-time", description: "RFC 3339 with a zone (Z or ±HH:MM)", example: "2026-11-23T14:00:00Z" })
    .transform((v) => parseDateTime(v) as number);

/** An optional RFC 3339 date-time or plain date, as epoch milliseconds or null. */
export const optionalDateOrDateTime = () =>
  z
    .string()
    .trim()
    .refine(
      (v) => v === "" || parseDateOrDateTime(v) !== null,
      badDateTime("must be an RFC 3339 date-time with a zone or a date YYYY-MM-DD"),
    )
    .nullish()
    .transform((v) => (v ? (parseDateOrDateTime(v) as number) : null));

export const LIMITS = {
  name: 200,
  email: 320,
  phone: 40,
  street: 500,
  postalCode: 20,
  notes: 2000,
  reason: 500,
} as const;

/** An optional query filter, trimmed (an empty value is refused by the query validator, src/http/validate.ts). */
export const queryText = (max: number) => text(max).optional();

/** An optional date-time query filter, as epoch milliseconds. */
export const queryDateTime = () =>
  z
    .string()
    .trim()
    .refine((v) => parseDateTime(v) !== null, badDateTime())
    .optional()
    .meta({ format: "date-time", description: "RFC 3339 with a zone (Z or ±HH:MM)", example: "2026-11-23T14:00:00Z" })
    .transform((v) => (v === undefined ? undefined : (parseDateTime(v) as number)));

/** The `cursor` query parameter of a list. */
export const cursorParam = () =>
  // No max here: a longer cursor is no cursor, refused as invalid_cursor by src/http/cursor.ts.
  z.string().optional().meta({
    maxLength: 1024,
    description: "The nextCursor of the previous page",
    example: "eyJ0IjoxNzk1NDU0MjQ1MTIzLCJpIjoiY3RfMDFtODFxbjV6M2tyZWJ6NHBzeTRjMjY0ZTgifQ.ypeBEsobvcr6wjGzmiPcTQ",
  });

/** The `{id}` of a path. */
export const idParam = (description: string, example: string) =>
  z.object({ id: z.string().meta({ description, example }) });

/** The postal-address fields shared by leads, contacts and accounts. */
export const addressFields = () => ({
  buildingLocation: optionalText(LIMITS.name),
  street1: optionalText(LIMITS.street),
  street2: optionalText(LIMITS.street),
  city: optionalText(LIMITS.name),
  postalCode: optionalText(LIMITS.postalCode),
  state: optionalText(LIMITS.name),
  country: optionalText(LIMITS.name),
});

export const phoneFields = () => ({
  mobilePhone: optionalText(LIMITS.phone),
  businessPhone: optionalText(LIMITS.phone),
});

/**
 * An optional integer query parameter: validated as the text a query value
 * is (so `limit=007` and `limit=1e2` keep their answers), documented as the
 * integer it means, with its bounds and default, for generated clients.
 */
export const queryInteger = ({
  min,
  max,
  default: fallback,
  example,
}: Record<"min" | "max" | "default" | "example", number>) =>
  z
    .string()
    .regex(/^\d{1,6}$/, "must be an integer")
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))
    .optional()
    .transform((v) => v ?? fallback)
    .meta({
      override: ({ jsonSchema }) => {
        for (const key of Object.keys(jsonSchema)) delete jsonSchema[key as keyof typeof jsonSchema];
        Object.assign(jsonSchema, { type: "integer", minimum: min, maximum: max, default: fallback, example });
      },
    });

// Building blocks of the response schemas (each resource's file declares its
// own, once, built on first use like the request schemas).

/** A UTC date-time as every response writes it. */
export const isoOut = () => z.string().meta({ format: "date-time", example: "2026-11-23T14:00:00.000Z" });

/** A string member that is null when absent. */
export const textOut = () => z.string().nullable();

/** The postal-address members of leads, contacts and accounts. */
export const addressOut = () => ({
  buildingLocation: textOut(),
  street1: textOut(),
  street2: textOut(),
  city: textOut(),
  postalCode: textOut(),
  state: textOut(),
  country: textOut(),
});

/** A keyset page of `item`s. */
export const pageOf = (item: z.ZodType, id: string) =>
  z.object({ data: z.array(item), hasMore: z.boolean(), nextCursor: z.string().nullable() }).meta({ id });
