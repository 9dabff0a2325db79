// RFC 9457 problem details: the one error type the app throws and the one
// place it is rendered. Anything that is not an ApiError becomes a generic 500
// that reveals nothing but the request id.
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { KeyTaken } from "../db/idempotency";
import type { AppEnv } from "../env";
import { PROBLEMS, type ProblemCode } from "./errors";

export interface FieldError {
  path: string;
  code: string;
  message: string;
}

/** A problem type (errors.ts); its status and title come from there. */
export class ApiError extends Error {
  readonly status: ContentfulStatusCode;

  constructor(
    readonly code: ProblemCode,
    readonly detail?: string,
    readonly extra: { errors?: FieldError[]; headers?: Record<string, string>; members?: Record<string, unknown> } = {},
  ) {
    super(detail ?? code);
    this.status = PROBLEMS[code].status;
  }
}

export const validationFailed = (errors: FieldError[]) =>
  new ApiError("validation_failed", `${errors.length} field${errors.length === 1 ? " is" : "s are"} invalid`, {
    errors,
  });

export function problemResponse(c: Context<AppEnv>, error: ApiError): Response {
  const body = {
    type: `/problems/${error.code}`,
    title: PROBLEMS[error.code].title,
    status: error.status,
    code: error.code,
    ...(error.detail ? { detail: error.detail } : {}),
    requestId: c.get("requestId"),
    ...(error.extra.errors ? { errors: error.extra.errors } : {}),
    ...error.extra.members,
  };
  return c.body(JSON.stringify(body), error.status, {
    "Content-Type": "application/problem+json",
    ...error.extra.headers,
  });
}

/** 409: a request with the key is still running (or its record is gone): the client retries. */
export const keyInProgress = () =>
  new ApiError("idempotency_in_progress", "A request with this Idempotency-Key is still running; retry shortly", {
    headers: { "Retry-After": "1" },
  });

/** 409 slot_unavailable with `reason` and `alternatives` (docs/api.md, "Book"): nothing was stored. */
export const slotUnavailable = (reason: string, alternatives: object[], extra: { holdExpired?: true } = {}) =>
  new ApiError("slot_unavailable", "The slot at dateTime cannot be booked; see reason and alternatives", {
    members: { reason, alternatives, ...extra },
  });

/** 409 hold_limit_reached (docs/api.md, "Holding a slot"): 100 live holds already. */
export const holdLimitReached = () =>
  new ApiError("hold_limit_reached", "Your organisation has 100 live holds; release one (or let one expire) and retry");

/** The app's onError: known errors keep their shape, the rest become a bare 500. */
export function renderError(err: Error, c: Context<AppEnv>): Response {
  if (err instanceof ApiError) return problemResponse(c, err);
  if (err instanceof KeyTaken) return problemResponse(c, keyInProgress());
  if (isD1Unavailable(err)) {
    return problemResponse(
      c,
      new ApiError("unavailable", "The database is temporarily unavailable; retry shortly", {
        headers: { "Retry-After": "1" },
      }),
    );
  }
  if (isSchemaBehind(err)) {
    // Logged: an operator must see it, and it outlasting a deploy means a migration was not applied.
    c.set("error", err);
    return problemResponse(
      c,
      new ApiError("unavailable", "The service is being updated; retry shortly", {
        headers: { "Retry-After": String(SCHEMA_RETRY_AFTER_SECONDS) },
      }),
    );
  }
  c.set("error", err);
  return problemResponse(c, new ApiError("internal_error"));
}

// D1 reports overload and lost connections with these phrases; they are worth
// a retry, unlike a bug (https://developers.cloudflare.com/d1/observability/debug-d1/).
const RETRYABLE =
  /D1_ERROR.*(overloaded|Network connection lost|reset because its code was updated|storage caused object to be reset|Cannot resolve D1 DB due to transient issue)/i;

function isD1Unavailable(err: Error): boolean {
  const text = `${err.message} ${err.cause instanceof Error ? err.cause.message : ""}`;
  return RETRYABLE.test(text);
}

// A deploy applies pending migrations, then deploys the code; a request that
// meets a table or column the code expects but D1 does not have yet is served
// in that window (or while a migration is still missing): a retryable 503.
const SCHEMA_BEHIND = /D1_ERROR.*(no such (table|column)|has no column named)/i;
const SCHEMA_RETRY_AFTER_SECONDS = 5;

function isSchemaBehind(err: Error): boolean {
  return SCHEMA_BEHIND.test(`${err.message} ${err.cause instanceof Error ? err.cause.message : ""}`);
}
