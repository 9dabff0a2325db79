// Endpoint secrets are stored as AES-GCM ciphertext under the Worker secret
// WEBHOOK_SECRET_KEY (base64 of 32 bytes; `wrangler secret put`), with the
// endpoint id as additional data, so a ciphertext copied to another endpoint's
// row does not decrypt. `.dev.vars` (never deployed) holds a documented
// default key and LOCAL_DEVELOPMENT=true; the default is refused anywhere
// else, so a deploy that forgot the secret never signs with a published key.
import { fromBase64, toBase64 } from "./signature";

/** The local-development key of `.dev.vars`: public, so never accepted outside local development. */
export const DEV_WEBHOOK_KEY = "ZGV2LW9ubHktd2ViaG9vay1rZXktY2hhbmdlLW1lISE=";

export interface KeyEnv {
  WEBHOOK_SECRET_KEY?: string;
  LOCAL_DEVELOPMENT?: string;
}

/** Why the key cannot be used (for a log line or a CLI error), or undefined when it can. */
export function keyProblem(env: KeyEnv): string | undefined {
  const key = env.WEBHOOK_SECRET_KEY;
  if (!key) return "WEBHOOK_SECRET_KEY is not set (wrangler secret put WEBHOOK_SECRET_KEY)";
  if (key === DEV_WEBHOOK_KEY && env.LOCAL_DEVELOPMENT !== "true")
    return "WEBHOOK_SECRET_KEY is the published local-development default; set your own with wrangler secret put WEBHOOK_SECRET_KEY";
  try {
    if (fromBase64(key).length === 32) return undefined;
  } catch {}
  return "WEBHOOK_SECRET_KEY must be the base64 of 32 random bytes (openssl rand -base64 32)";
}

const keys = new Map<string, Promise<CryptoKey>>();

const importKey = (key: string) => {
  let imported = keys.get(key);
  if (!imported) {
    imported = crypto.subtle.importKey("raw", fromBase64(key), "AES-GCM", false, ["encrypt", "decrypt"]);
    keys.set(key, imported);
  }
  return imported;
};

/** `v1.` + base64(12-byte IV) + `.` + base64(ciphertext and tag). */
export async function encryptSecret(key: string, endpointId: string, secret: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: new TextEncoder().encode(endpointId) },
    await importKey(key),
    new TextEncoder().encode(secret),
  );
  return `v1.${toBase64(iv)}.${toBase64(new Uint8Array(sealed))}`;
}

export async function decryptSecret(key: string, endpointId: string, ciphertext: string): Promise<string> {
  const [version, iv, sealed] = ciphertext.split(".");
  if (version !== "v1" || !iv || !sealed) throw new Error("unknown secret ciphertext format");
  const opened = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: fromBase64(iv), additionalData: new TextEncoder().encode(endpointId) },
    await importKey(key),
    fromBase64(sealed),
  );
  return new TextDecoder().decode(opened);
}
