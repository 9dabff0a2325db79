// Requests for the security suites (isolation, authentication, mass
// assignment): through the worker's fetch handler with the real bindings, with
// any headers, read whole (status, headers and raw text) so that a test can
// search every byte. Not SELF: with vitest-pool-workers 0.15.1 each SELF.fetch
// in a file costs more than the one before (7 ms, then 21, then 39 per request
// after 100, 200 requests), which would make these matrices slow and would
// blur the timing of the revocation test; app.fetch stays at about 1 ms.
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import app from "../src/app";
import type { Tenant } from "./helpers";
import { type ReadResponse, readResponse } from "./read-response";

const HOUR = 3_600_000;

/** The start of the hour `hours` after the next full hour from `now`, as ISO: a slot of an around-the-clock hourly schedule. */
export const slotIn = (hours: number, now = Date.now()) =>
  new Date(Math.ceil(now / HOUR) * HOUR + hours * HOUR).toISOString();

export const credentialsOf = (tenant: Tenant) => ({ "X-API-KEY": tenant.apiKey, "X-ORG-ID": tenant.orgId });

export interface Sent {
  method?: string;
  headers?: HeadersInit;
  json?: unknown;
}

/** One request through the worker with exactly these headers (plus Content-Type for a JSON body). */
export async function request(path: string, sent: Sent = {}): Promise<ReadResponse> {
  const headers = new Headers(sent.headers);
  if (sent.json !== undefined && !headers.has("Content-Type")) headers.set("Content-Type", "application/json");
  const ctx = createExecutionContext();
  const response = await app.fetch(
    new Request(`https://api.test${path}`, {
      method: sent.method ?? (sent.json === undefined ? "GET" : "POST"),
      headers,
      body: sent.json === undefined ? undefined : JSON.stringify(sent.json),
    }),
    env,
    ctx,
  );
  const read = await readResponse(response);
  await waitOnExecutionContext(ctx);
  return read;
}

/** A JSON-RPC tools/call to /mcp (stateless Streamable HTTP, JSON response) with these headers. */
export function mcpCall(
  headers: HeadersInit,
  tool: string,
  args: Record<string, unknown>,
  extra: Record<string, string> = {},
) {
  const all = new Headers(headers);
  all.set("Accept", "application/json, text/event-stream");
  for (const [name, value] of Object.entries(extra)) all.set(name, value);
  return request("/mcp", {
    headers: all,
    json: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: tool, arguments: args } },
  });
}

/** A JSON-RPC tools/list to /mcp with these headers. */
export function mcpList(headers: HeadersInit) {
  const all = new Headers(headers);
  all.set("Accept", "application/json, text/event-stream");
  return request("/mcp", { headers: all, json: { jsonrpc: "2.0", id: 1, method: "tools/list" } });
}

/** The operation's answer inside a tools/call result: the problem document of a failed call, else the result. */
export function toolAnswer(res: ReadResponse): {
  isError: boolean;
  status: number;
  body: Record<string, unknown> & { [k: string]: unknown };
} {
  const result = res.body?.result;
  if (!result) throw new Error(`not a tools/call result: ${res.status} ${res.text}`);
  const body = JSON.parse(result.content[0].text);
  return { isError: result.isError === true, status: result.isError ? body.status : 200, body };
}

/** Every byte a client receives: status line, headers and body. */
export const everything = (res: ReadResponse) =>
  `${res.status}\n${[...res.headers].map(([k, v]) => `${k}: ${v}`).join("\n")}\n\n${res.text}`;
