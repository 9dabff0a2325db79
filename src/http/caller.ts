// The caller of a call (docs/api.md, "The caller of a call"): the number the
// voice platform — never the model — reports, read from the platform's
// envelope or the X-Caller-Phone header, and what an agent key's call is bound
// to. Whose records a bound call reaches is a condition of the SQL that reads
// them (ofCaller in src/db/incidents.ts); this module only says who the caller is.
import type { Context } from "hono";
import type { KeyRole } from "../../drizzle/schema";
import type { AppEnv, CallOrigin, Org } from "../env";
import { normalizePhone } from "../lib/phones";
import { ApiError } from "./problem";

const CALL_ID = /^[\x20-\x7e]{1,128}$/;

/** A reported call id: 1 to 128 printable ASCII characters, else none (never a 422). */
const callIdOf = (value: unknown): string | null => (typeof value === "string" && CALL_ID.test(value) ? value : null);

/**
 * Numbers this isolate has read as callers', by org, country and text: a call
 * reports its caller on each of its requests, and parsing a number costs more
 * than the rest of a bound request's checks. Kept per org, so that no org's
 * timing tells whom another org's agents talk to; at most CALLERS_KEPT, then forgotten.
 */
const callers = new Map<string, string | null>();
const CALLERS_KEPT = 1_000;

/** A reported number as E.164, read in the org's country; null when it is not a valid number. */
export function callerNumber(org: Pick<Org, "id" | "country">, text: string): string | null {
  const key = `${org.id} ${org.country} ${text}`;
  const known = callers.get(key);
  if (known !== undefined) return known;
  const phone = normalizePhone(text, org.country);
  if (callers.size >= CALLERS_KEPT) callers.clear();
  callers.set(key, phone);
  return phone;
}

/** The first reported number that parses to a valid one, in the org's country; none else (a withheld number, "anonymous"). */
function firstNumber(reported: unknown[], org: Org): string | null {
  for (const value of reported) {
    const phone = typeof value === "string" && value.length <= 40 ? callerNumber(org, value) : null;
    if (phone) return phone;
  }
  return null;
}

/**
 * Where a request came from: the platform's own call id and numbers (its
 * envelope) first, then the X-Call-Id and X-Caller-Phone headers.
 */
export function originOf(
  c: Context<AppEnv>,
  channel: CallOrigin["channel"],
  envelope: { callId?: unknown; numbers?: unknown[] } = {},
): CallOrigin {
  const header = c.req.header("X-Caller-Phone");
  const numbers = [...(envelope.numbers ?? []), ...(header === undefined ? [] : [header.trim()])];
  return {
    channel,
    callId: callIdOf(envelope.callId) ?? callIdOf(c.req.header("X-Call-Id")),
    callerPhone: numbers.length === 0 ? null : firstNumber(numbers, c.get("org")),
  };
}

/**
 * The number an agent key's call is bound to; undefined for office and read
 * keys, which are not bound. An agent call without a caller is 403
 * caller_unknown.
 */
export function boundCaller(c: Context<AppEnv>): string | undefined {
  const { role, callerPhone } = c.get("actor");
  if (role !== "agent") return undefined;
  if (callerPhone === null)
    throw new ApiError(
      "caller_unknown",
      "This agent key reaches a caller's visits only: the call reported no caller's number (Vapi or Retell envelope, or X-Caller-Phone)",
    );
  return callerPhone;
}

/** A bound call naming another number than its caller's. */
export const callerMismatch = () =>
  new ApiError("caller_mismatch", "An agent key reaches only the caller's own records: phone must be the caller's");

/** A key whose role may not call the operation: says nothing about any record. */
export const forbidden = (role: KeyRole) =>
  new ApiError("forbidden", `A key of role ${role} may not call this operation`, { members: { role } });
