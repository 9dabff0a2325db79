// The catalogue of problems (docs/api.md, "Errors"): status, code, title and the
// text the OpenAPI document gives each. The renderer (problem.ts) and the
// document (openapi/document.ts) both read it, so the two cannot disagree.
import type { ContentfulStatusCode } from "hono/utils/http-status";

export interface ProblemEntry {
  status: ContentfulStatusCode;
  title: string;
  /** When it happens, for the OpenAPI document. */
  description: string;
  /** Response headers the problem always carries. */
  headers?: readonly "Retry-After"[];
}

export const PROBLEMS = {
  malformed_json: {
    status: 400,
    title: "Malformed JSON body",
    description: "the body is not UTF-8 JSON, or not a JSON object",
  },
  unauthenticated: {
    status: 401,
    title: "Authentication required",
    description: "a header missing or empty, an unknown or revoked key, or a key of another organisation",
  },
  forbidden: {
    status: 403,
    title: "Forbidden for this key's role",
    description: "the key's role may not call this operation; see role (office, agent or read)",
  },
  caller_mismatch: {
    status: 403,
    title: "Not the caller's",
    description: "an agent key named a phone other than its call's caller; nothing was read",
  },
  caller_unknown: {
    status: 403,
    title: "Caller unknown",
    description: "an agent key's call reported no valid caller's number, which this operation is bound to",
  },
  not_found: { status: 404, title: "Not found", description: "no such path" },
  account_not_found: {
    status: 404,
    title: "Account not found",
    description: "no account with this id in your organisation",
  },
  incident_not_found: {
    status: 404,
    title: "Incident not found",
    description: "no incident with this id in your organisation",
  },
  plan_not_found: {
    status: 404,
    title: "Plan not found",
    description: "no plan with this id in your organisation",
  },
  method_not_allowed: {
    status: 405,
    title: "Method not allowed",
    description: "a known path with another method; see Allow",
  },
  slot_unavailable: {
    status: 409,
    title: "Slot unavailable",
    description: "the slot cannot be booked; nothing stored; see reason and alternatives",
  },
  hold_limit_reached: {
    status: 409,
    title: "Too many live holds",
    description: "the organisation has 100 live holds; release one or let it expire, then retry",
  },
  incident_not_changeable: {
    status: 409,
    title: "Incident cannot be changed",
    description:
      "the incident is cancelled, closed, or started (or, to close it, not started); nothing changed; see reason",
  },
  idempotency_in_progress: {
    status: 409,
    title: "Request with this Idempotency-Key in progress",
    description: "a request with the same Idempotency-Key is still running",
    headers: ["Retry-After"],
  },
  payload_too_large: { status: 413, title: "Payload too large", description: "the body is over 64 KiB" },
  unsupported_media_type: {
    status: 415,
    title: "Unsupported media type",
    description: "the body is not application/json",
  },
  validation_failed: {
    status: 422,
    title: "Request validation failed",
    description: "every failing field in `errors[]`",
  },
  idempotency_key_reused: {
    status: 422,
    title: "Idempotency-Key reused for a different request",
    description: "the same Idempotency-Key was sent with a different request",
  },
  rate_limited: {
    status: 429,
    title: "Rate limit exceeded",
    description: "over the organisation's rate limit; see Retry-After",
    headers: ["Retry-After"],
  },
  internal_error: {
    status: 500,
    title: "Internal server error",
    description: "unexpected; the body holds only the requestId",
  },
  unavailable: {
    status: 503,
    title: "Service unavailable",
    description:
      "the database is overloaded or unreachable, or behind the code (a migration not applied yet); see Retry-After",
    headers: ["Retry-After"],
  },
} as const satisfies Record<string, ProblemEntry>;

export type ProblemCode = keyof typeof PROBLEMS;

/** Problems any authenticated operation can answer, whatever it does. */
export const EVERY_OPERATION: ProblemCode[] = ["unauthenticated", "rate_limited", "internal_error", "unavailable"];
/** Problems of reading and validating a JSON body, and of Idempotency-Key (every POST). */
export const WITH_BODY: ProblemCode[] = [
  "malformed_json",
  "idempotency_in_progress",
  "payload_too_large",
  "unsupported_media_type",
  "validation_failed",
  "idempotency_key_reused",
];
