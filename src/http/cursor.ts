// Opaque keyset cursors for the lists: the last row's (sort time, id), signed
// whole with the org's cursor key (HMAC-SHA-256) together with the filters the
// cursor was issued for. A cursor whose position was edited, that was issued
// for other filters, or for another org does not verify: 422 invalid_cursor
// (docs/api.md, "Lists and cursors"), never a page of something else.
import type { CursorPosition } from "../db/client";
import { constantTimeEqual } from "../lib/api-keys";
import { ApiError } from "./problem";

/** Whose cursor it is: the org's key, and the normalised filters of the list it pages through. */
export interface CursorScope {
  secret: string;
  filters: unknown;
}

const ID = /^[a-z]{2,4}_[0-9a-z]{26}$/;
/** 128 bits of the HMAC: as hard to forge as to guess the key. */
const MAC_BYTES = 16;

const encoder = new TextEncoder();
const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
const fromBase64url = (text: string) =>
  Uint8Array.from(atob(text.replaceAll("-", "+").replaceAll("_", "/")), (c) => c.charCodeAt(0));

// Imported keys by secret, bounded like the auth cache whose orgs they serve.
const keys = new Map<string, Promise<CryptoKey>>();
const MAX_KEYS = 1_000;

function hmacKey(secret: string): Promise<CryptoKey> {
  // An org written by raw SQL, never by the code that gives each org its key.
  if (secret === "") throw new Error("the org has no cursor secret");
  let key = keys.get(secret);
  if (!key) {
    if (keys.size >= MAX_KEYS) keys.delete(keys.keys().next().value as string);
    const raw = Uint8Array.from(secret.match(/../g) ?? [], (h) => Number.parseInt(h, 16));
    key = crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    keys.set(secret, key);
  }
  return key;
}

async function macOf(payload: string, { secret, filters }: CursorScope): Promise<Uint8Array> {
  const signed = encoder.encode(`${payload}.${JSON.stringify(filters)}`);
  return new Uint8Array(await crypto.subtle.sign("HMAC", await hmacKey(secret), signed)).slice(0, MAC_BYTES);
}

/** `base64url(JSON position)` `.` `base64url(MAC)`. */
export async function encodeCursor(position: CursorPosition, scope: CursorScope): Promise<string> {
  const payload = base64url(encoder.encode(JSON.stringify({ t: position.at, i: position.id })));
  return `${payload}.${base64url(await macOf(payload, scope))}`;
}

const invalidCursor = () =>
  new ApiError("validation_failed", "1 field is invalid", {
    errors: [
      {
        path: "cursor",
        code: "invalid_cursor",
        message: "is not a cursor issued for this list; start again without it",
      },
    ],
  });

/** Longer than any cursor issued: refused unread. */
const MAX_CURSOR = 1024;

export async function decodeCursor(token: string, scope: CursorScope): Promise<CursorPosition> {
  if (token.length > MAX_CURSOR) throw invalidCursor();
  const [payload, mac, ...rest] = token.split(".");
  if (!payload || !mac || rest.length > 0 || !/^[A-Za-z0-9_-]+$/.test(payload + mac)) throw invalidCursor();
  // Verified before anything in it is read, and as the text issued: a MAC
  // spelled otherwise (base64url's unused low bits) is not this cursor.
  if (!constantTimeEqual(mac, base64url(await macOf(payload, scope)))) throw invalidCursor();
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(fromBase64url(payload)));
  } catch {
    throw invalidCursor();
  }
  const { t, i } = (parsed ?? {}) as Record<string, unknown>;
  if (!Number.isSafeInteger(t) || typeof i !== "string" || !ID.test(i)) throw invalidCursor();
  return { at: t as number, id: i };
}
