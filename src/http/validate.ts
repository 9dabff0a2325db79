// The one validator wrapper: zod schemas checked by @hono/zod-validator, and
// every failing field reported in `errors[]` entries (docs/api.md, "Errors").
import { zValidator } from "@hono/zod-validator";
import type { Context, MiddlewareHandler, Next } from "hono";
import type * as z from "zod/v4";
import type { Org } from "../db/orgs";
import { normalizePhone } from "../lib/phones";
import { chooseService, normalisePostalCode, type VisitRequest, visitOf } from "../scheduling/visits";
import { CALLERS_PHONE } from "../schemas/common";
import { ApiError, type FieldError, validationFailed } from "./problem";

type Issue = z.core.$ZodIssue;

/**
 * Validates `target` against the schema `schemaOf` builds, on the first
 * request that needs it (schemas are not built at startup).
 */
export function validate<Target extends "json" | "query" | "param">(target: Target, schemaOf: () => z.ZodType) {
  let validator: MiddlewareHandler | undefined;
  return function validation(c: Context, next: Next) {
    validator ??= validatorOf(target, schemaOf());
    return validator(c, next);
  };
}

/**
 * Runs the body, query and path validators of an operation together, so that
 * one 422 lists every failing field of all three (docs/api.md, "Validation").
 */
export function validateAll(checks: (MiddlewareHandler | undefined)[]): MiddlewareHandler {
  const present = checks.filter((check) => check !== undefined);
  return async function validateInput(c: Context, next: Next) {
    const errors: FieldError[] = [];
    for (const check of present) {
      try {
        await check(c, async () => {});
      } catch (error) {
        if (!(error instanceof ApiError && error.code === "validation_failed" && error.extra.errors)) throw error;
        errors.push(...error.extra.errors);
      }
    }
    if (errors.length > 0) throw validationFailed(errors);
    await next();
  };
}

function validatorOf(target: "json" | "query" | "param", schema: z.ZodType): MiddlewareHandler {
  const known = fieldNames(schema);
  const phoneSchema = (schema._zod.def as { shape?: Record<string, z.ZodType> }).shape?.phone;
  const callersPhone = phoneSchema !== undefined && CALLERS_PHONE.has(phoneSchema);
  return zValidator(target, schema, (result, c) => {
    const errors = result.success ? [] : toFieldErrors(result.error.issues, result.data, known);
    if (target === "query") errors.push(...emptyValues(c, errors));
    // A `phone` (a number to match or store) is read in the org's country, so
    // the schema cannot check it: it is checked here, with the other fields,
    // before anything else (the Idempotency-Key included) looks at the request.
    const phone = known.includes("phone") ? (result.data as Record<string, unknown>)?.phone : undefined;
    const country = (c.get("org") as { country: string } | undefined)?.country;
    if (typeof phone === "string" && phone.trim() !== "" && country && !errors.some((e) => e.path === "phone")) {
      if (normalizePhone(phone.trim(), country) === null) errors.push(INVALID_PHONE);
    }
    // Only an agent key may leave out the caller's phone: its call's caller stands in.
    const absent = phone === undefined || phone === null || (typeof phone === "string" && phone.trim() === "");
    const role = (c.get("actor") as { role: string } | undefined)?.role;
    if (callersPhone && absent && role !== "agent" && !errors.some((e) => e.path === "phone"))
      errors.push({ path: "phone", code: "required", message: "is required" });
    if (errors.length > 0) throw validationFailed(errors);
  });
}

/**
 * A query parameter sent with an empty (or blank) value: an empty filter is a
 * client bug (a template with nothing to put in), never a request for the
 * whole list (docs/api.md, "Validation").
 */
function emptyValues(c: Context, reported: FieldError[]): FieldError[] {
  return Object.entries(c.req.queries())
    .filter(([name, values]) => values.some((v) => v.trim() === "") && !reported.some((e) => e.path === name))
    .map(([path]) => ({ path, code: "empty_value", message: "is empty; leave the parameter out instead" }));
}

const INVALID_PHONE: FieldError = { path: "phone", code: "invalid_phone", message: "is not a valid phone number" };

/** The `errors[]` entries of a 422; `input` (the unparsed value) tells a missing field from a mistyped one. */
export function toFieldErrors(issues: readonly Issue[], input: unknown, known: readonly string[] = []): FieldError[] {
  return issues.flatMap((issue): FieldError[] => {
    const path = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => {
        const match = known.find((name) => squash(name) === squash(key));
        const hint = match ? `; did you mean '${match}'?` : "";
        return { path: path ? `${path}.${key}` : key, code: "unknown_field", message: `unknown field${hint}` };
      });
    }
    return [{ path, ...describe(issue, valueAt(input, issue.path)) }];
  });
}

/** A field name with case, `_` and `-` ignored: `client_name`, `Client-Name` and `clientName` are one name. */
const squash = (name: string) => name.replace(/[_-]/g, "").toLowerCase();

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path)
    value = value !== null && typeof value === "object" ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  return value;
}

function describe(issue: Issue, value: unknown): { code: string; message: string } {
  switch (issue.code) {
    case "invalid_type":
      // Explicit null means absent (docs/api.md, "Conventions").
      if (value === undefined || value === null) return { code: "required", message: "is required" };
      // Only a repeated query parameter arrives as an array where a string is expected.
      if (Array.isArray(value) && issue.expected === "string" && value.every((v) => typeof v === "string")) {
        return { code: "invalid_type", message: "must be given once" };
      }
      return { code: "invalid_type", message: `must be ${article(issue.expected)}` };
    case "too_big":
      return issue.origin === "string"
        ? { code: "too_long", message: `must be at most ${issue.maximum} characters` }
        : { code: "out_of_range", message: `must be at most ${issue.maximum}` };
    case "too_small":
      return issue.origin === "string"
        ? { code: "too_short", message: `must be at least ${issue.minimum} characters` }
        : { code: "out_of_range", message: `must be at least ${issue.minimum}` };
    case "custom":
      return { code: String(issue.params?.code ?? "invalid"), message: issue.message };
    case "invalid_format":
      return { code: "invalid_format", message: issue.message };
    default:
      // A required choice (an enum) left out is missing, as any other required field.
      if (value === undefined || value === null) return { code: "required", message: "is required" };
      return { code: "invalid_value", message: issue.message };
  }
}

function article(expected: string): string {
  const names: Record<string, string> = {
    int: "an integer",
    number: "a number",
    string: "a string",
    object: "an object",
    array: "an array",
    boolean: "a boolean",
  };
  return names[expected] ?? expected;
}

/** Top-level field names of an object schema (through any transform), for did-you-mean hints. */
function fieldNames(schema: z.ZodType): string[] {
  let def = schema._zod.def as { shape?: Record<string, unknown>; in?: z.ZodType };
  while (!def.shape && def.in) def = def.in._zod.def as typeof def;
  return Object.keys(def.shape ?? {});
}

/**
 * A phone to match or store (docs/api.md, "Phone numbers") as E.164, read in the org's
 * country when written without "+"; 422 `invalid_phone` when it is no valid
 * number (which `validate` has already refused).
 */
export function e164OrFail(text: string, country: string, path = "phone"): string {
  const e164 = normalizePhone(text, country);
  if (e164 === null) throw validationFailed([{ ...INVALID_PHONE, path }]);
  return e164;
}

/**
 * The visit a request asks about (docs/api.md, "Services and technicians"):
 * its service (`serviceId`, else by `insectName`, else the default) and
 * place. 422 `not_found` on serviceId when it names no active service of the org.
 */
export function requestOrFail(
  org: Org,
  request: { serviceId?: string | null; insectName?: string | null; postalCode?: string | null },
): VisitRequest {
  const service = chooseService(org.catalogue.services, request);
  if (service === undefined)
    throw validationFailed([
      { path: "serviceId", code: "not_found", message: "is no active service of your organisation" },
    ]);
  return {
    schedule: org.schedule,
    visit: visitOf(org.schedule, service),
    technicians: org.catalogue.technicians,
    postalCode: request.postalCode ? normalisePostalCode(request.postalCode) : null,
  };
}
