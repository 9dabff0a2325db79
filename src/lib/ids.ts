// Opaque, time-sortable ids: `<prefix>_` + 10 chars of millisecond time + 16
// random chars (80 bits), both in Crockford base32 lowercase, whose alphabet is
// in ASCII order, so ids of one prefix sort by creation time.
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

export type IdPrefix = "org" | "key" | "lead" | "ct" | "acct" | "inc" | "evt" | "ep" | "svc" | "tech" | "hold" | "plan";

export function newId(prefix: IdPrefix, now = Date.now()): string {
  let time = "";
  for (let t = now, i = 0; i < 10; i++, t = Math.floor(t / 32)) time = ALPHABET[t % 32] + time;
  const random = crypto.getRandomValues(new Uint8Array(16));
  let tail = "";
  for (const byte of random) tail += ALPHABET[byte & 31];
  return `${prefix}_${time}${tail}`;
}
