// Standard Webhooks signatures (https://www.standardwebhooks.com): a secret is
// "whsec_" + base64 of its bytes; a signature is "v1," + base64 of
// HMAC-SHA256(secret bytes, "{id}.{timestamp}.{body}"); several are sent
// space-separated while a rotated secret still signs.

export const SECRET_PREFIX = "whsec_";

export const toBase64 = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes));
export const fromBase64 = (text: string): Uint8Array => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

/** A new endpoint secret: 32 random bytes in the Standard Webhooks form. */
export const newSecret = (): string => SECRET_PREFIX + toBase64(crypto.getRandomValues(new Uint8Array(32)));

/** The `v1,…` signature of one message under one secret. */
export async function sign(secret: string, id: string, timestamp: number, body: string): Promise<string> {
  const bytes = fromBase64(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret);
  const key = await crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${id}.${timestamp}.${body}`));
  return `v1,${toBase64(new Uint8Array(mac))}`;
}

/** The Standard Webhooks headers of one delivery, signed under every secret given. */
export async function webhookHeaders(secrets: string[], id: string, timestamp: number, body: string) {
  const signatures = await Promise.all(secrets.map((secret) => sign(secret, id, timestamp, body)));
  return {
    "Content-Type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signatures.join(" "),
  };
}
