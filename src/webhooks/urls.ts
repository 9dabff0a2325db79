// Endpoint URL rules: https, or http to the loopback only.
const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);
export const MAX_URL_LENGTH = 2048;

/** The URL as it will be called, or why it is refused. */
export function checkEndpointUrl(text: string): { url: string } | { error: string } {
  if (text.length > MAX_URL_LENGTH) return { error: `the URL is longer than ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { error: `not an absolute URL: ${text}` };
  }
  if (url.username || url.password) return { error: "the URL must not carry a user name or password" };
  if (text.includes("#")) return { error: "the URL must not have a #fragment" };
  if (url.protocol === "https:") return { url: url.href };
  if (url.protocol === "http:" && LOOPBACK.has(url.hostname)) return { url: url.href };
  if (url.protocol === "http:")
    return { error: "http:// is accepted for localhost, 127.0.0.1 or [::1] only (local development); use https://" };
  return { error: `the URL must start with https:// (got ${url.protocol}//)` };
}
