// Reads a POST body the way docs/api.md ("Errors") orders the checks: media type
// (415), size (413), JSON syntax (400). The text is handed to the validator
// through Hono's body cache, so the body is read only once.
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { ApiError } from "./problem";

export const MAX_BODY_BYTES = 64 * 1024;
// How much of an oversized streamed body is read and dropped before its 413 (see discardRest).
const DISCARD_BYTES = 4 * 1024 * 1024;
// The same rule Hono's json validator uses to decide a body is JSON.
const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;
// Stateless between calls (no `stream` option), so one serves every request.
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

export const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * A request's JSON object body, checked in the order of docs/api.md
 * ("Errors"): 415 unless JSON, 413 past `limit` bytes, 400 unless UTF-8 JSON
 * of an object.
 */
export async function readJsonObject(request: Request, limit: number) {
  const mediaType = (request.headers.get("Content-Type") ?? "").split(";")[0]!.trim();
  if (!JSON_MEDIA_TYPE.test(mediaType)) {
    throw new ApiError("unsupported_media_type", "Send the body as application/json");
  }
  const bytes = await readCapped(request, limit);
  let text: string;
  let parsed: unknown;
  try {
    text = UTF8.decode(bytes);
    parsed = JSON.parse(text);
  } catch {
    throw new ApiError("malformed_json", "The body is not valid UTF-8 JSON");
  }
  if (!isJsonObject(parsed)) throw new ApiError("malformed_json", "The body must be a JSON object");
  return { bytes, text, parsed };
}

export const jsonBody = createMiddleware<AppEnv>(async function jsonBody(c, next) {
  const { bytes, text } = await readJsonObject(c.req.raw, MAX_BODY_BYTES);
  useBody(c, text, bytes);
  await next();
});

/**
 * The body a route reads: `text` for its validators, `bytes` for the
 * Idempotency-Key's fingerprint. Hono's c.req.json() parses the cached text
 * (a cached object would go through JSON.stringify first, turning 1e999's
 * Infinity into a silent null).
 */
export function useBody(c: Context<AppEnv>, text: string, bytes: Uint8Array) {
  (c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve(text);
  c.set("rawBody", bytes);
}

/**
 * The body's bytes, refusing (413) past `limit`: on its Content-Length before
 * reading, or, sent without one (chunked), as soon as more than `limit` arrive.
 */
export async function readCapped(request: Request, limit: number): Promise<Uint8Array> {
  const tooLarge = () => new ApiError("payload_too_large", `The body must be at most ${limit} bytes`);
  const declared = request.headers.get("Content-Length");
  if (Number(declared ?? 0) > limit) throw tooLarge();
  if (!request.body) return new Uint8Array();
  // A declared length frames the body (the runtime ends it there), so it is read in one call.
  if (declared !== null) {
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.byteLength > limit) throw tooLarge();
    return bytes;
  }
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await discardRest(reader, DISCARD_BYTES);
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/**
 * Reads and drops the rest of a body, at most `budget` more bytes, then cancels what is left.
 * Under `wrangler dev`, a request body left half-read (cancelled or not) breaks the kept-alive
 * connection: the client's next request on it gets the dev proxy's plain-text 503, or no answer
 * for a GET (docs/operations.md, "Running locally"; test/e2e/keep-alive.e2e.test.ts). A body
 * refused on its Content-Length alone is never started, and does not trip it.
 */
async function discardRest(reader: ReadableStreamDefaultReader<Uint8Array>, budget: number): Promise<void> {
  try {
    for (let left = budget; left > 0; ) {
      const { done, value } = await reader.read();
      if (done) return;
      left -= value.byteLength;
    }
    await reader.cancel();
  } catch {
    // The client went away mid-body: the 413 stands.
  }
}
