// API keys: `fsk_` + 40 base62 characters (~238 bits), recognisable to secret
// scanners. Only the SHA-256 of a key is stored: keys are high-entropy random
// strings, so a fast hash is enough (no password-style stretching needed) and
// a lookup by hash cannot be turned into a guess of the key.
import { sha256Hex } from "./hash";

const BASE62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const KEY_BODY_LENGTH = 40;

export const API_KEY_PATTERN = /^fsk_[A-Za-z0-9]{32,128}$/;

export function generateApiKey(): string {
  let body = "";
  while (body.length < KEY_BODY_LENGTH) {
    for (const byte of crypto.getRandomValues(new Uint8Array(64))) {
      // 248 = 4 × 62: rejecting larger bytes keeps every character equally likely.
      if (byte < 248 && body.length < KEY_BODY_LENGTH) body += BASE62[byte % 62];
    }
  }
  return `fsk_${body}`;
}

export const hashApiKey = (key: string): Promise<string> => sha256Hex(key);

/**
 * Compares two strings in time that depends only on their lengths: every
 * UTF-16 code unit of the longer is read (one past the end is NaN, which
 * `| 0` makes 0), with no allocation on a request's path.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0);
  return diff === 0;
}
