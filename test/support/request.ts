// The one way integration and security tests talk to the worker: its Hono app's
// fetch handler with the real bindings (D1, the rate limiter), any of which a
// test may replace, in an execution context whose waitUntil work is awaited.
// Not SELF: with vitest-pool-workers 0.15.1 each SELF.fetch in a file costs
// more than the one before (7 ms, then 21, then 39 per request after 100, 200
// requests), which makes the matrices and fuzz suites slow and blurs the timing
// of the revocation tests; app.fetch stays at about 1 ms.
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import app from "../../src/app";
import { type Credentials, type ReadResponse, type RequestOptions, readResponse, toRequest } from "./http";

/** Bindings a test replaces for one request. */
export interface Bindings {
  DB?: D1Database;
  RATE_LIMITER?: RateLimit;
}

export interface CallOptions extends RequestOptions {
  bindings?: Bindings;
}

/** One request through the app, with `bindings` in place of the real ones; returns the response once its waitUntil work is done. */
export async function fetchApp(request: Request, bindings: Bindings = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await app.fetch(request, { ...env, ...bindings }, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

/** Calls the worker as `tenant` (no credentials when null) and reads the whole answer. */
export async function call(tenant: Credentials | null, path: string, options: CallOptions = {}): Promise<ReadResponse> {
  const { bindings, ...sent } = options;
  return readResponse(await fetchApp(toRequest(`https://api.test${path}`, tenant, sent), bindings));
}
