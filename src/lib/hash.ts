const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

function hex(bytes: Uint8Array): string {
  let text = "";
  for (const b of bytes) text += HEX[b];
  return text;
}

/** Lowercase hex of `size` random bytes. */
export const randomHex = (size: number): string => hex(crypto.getRandomValues(new Uint8Array(size)));

/** Lowercase hex SHA-256 of a string (as UTF-8) or of bytes. */
export async function sha256Hex(data: string | Uint8Array): Promise<string> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return hex(new Uint8Array(digest));
}
