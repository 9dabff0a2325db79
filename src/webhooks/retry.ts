// The retry schedule (docs/webhooks.md, "Retries"): 8 attempts in all, the n-th
// retry after RETRY_DELAYS_S[n - 1] seconds, or after the receiver's longer
// Retry-After (at most 12 h, the longest delay a Cloudflare Queue accepts).

export const RETRY_DELAYS_S = [5, 300, 1800, 7200, 18000, 36000, 36000] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_S.length + 1;
export const MAX_DELAY_S = 12 * 3600;

/** Retry-After as seconds from `now` (delta-seconds or an HTTP date); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const at = Date.parse(text);
  return Number.isNaN(at) || !/[a-z]/i.test(text) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** Seconds until the next attempt after failed attempt `attempt` (1-based), or null when it was the last. */
export function retryDelay(attempt: number, retryAfter?: number): number | null {
  const scheduled = RETRY_DELAYS_S[attempt - 1];
  if (scheduled === undefined) return null;
  return Math.min(MAX_DELAY_S, Math.max(scheduled, retryAfter ?? 0));
}
