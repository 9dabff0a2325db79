// The part of a request both sides of the tests share: how a call is written
// (credentials, a JSON or raw body, headers) and how its answer is read. It
// imports neither the worker nor cloudflare:test, so the Node-side e2e suites
// (real HTTP to `wrangler dev`) use it as well as request.ts (app.fetch).

/** What authenticates a call: an org id and one of its API keys. */
export interface Credentials {
  orgId: string;
  apiKey: string;
}

export const credentialsOf = (tenant: Credentials) => ({ "X-API-KEY": tenant.apiKey, "X-ORG-ID": tenant.orgId });

export interface RequestOptions {
  /** Defaults to POST when there is a body, else GET. */
  method?: string;
  /** Sent as JSON, with Content-Type: application/json. */
  body?: unknown;
  /** Sent verbatim, with no Content-Type of its own (a string body gets fetch's text/plain). */
  rawBody?: BodyInit;
  /** Set after the credentials and the JSON Content-Type, so they can replace either; a list may repeat a name. */
  headers?: HeadersInit;
}

/** Headers as name-value pairs, a repeated name kept as sent. */
export const headerList = (init: HeadersInit | undefined): [string, string][] =>
  init === undefined
    ? []
    : Array.isArray(init)
      ? init.map(([name, value]) => [name!, value!])
      : init instanceof Headers
        ? [...init]
        : Object.entries(init);

/** `extra` over `base`: a name `extra` sends replaces every value `base` has for it. */
export function withHeaders(base: HeadersInit | undefined, extra: HeadersInit | undefined): [string, string][] {
  const sent = headerList(extra);
  const names = new Set(sent.map(([name]) => name.toLowerCase()));
  return [...headerList(base).filter(([name]) => !names.has(name.toLowerCase())), ...sent];
}

/** The request a call sends: as `tenant` (no credentials when null), to `url`. */
export function toRequest(url: string, tenant: Credentials | null, options: RequestOptions = {}): Request {
  const base = {
    ...(tenant ? credentialsOf(tenant) : {}),
    ...(options.body === undefined ? {} : { "Content-Type": "application/json" }),
  };
  const headers = new Headers(withHeaders(base, options.headers));
  const hasBody = options.body !== undefined || options.rawBody !== undefined;
  return new Request(url, {
    method: options.method ?? (hasBody ? "POST" : "GET"),
    headers,
    body: options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
  });
}

export interface ReadResponse {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
  body: any;
}

/** Status, headers, the raw text, and the body parsed as JSON (null when empty or not JSON). */
export async function readResponse(response: Response): Promise<ReadResponse> {
  const text = await response.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  return { status: response.status, headers: response.headers, text, body };
}

/** Every byte a client receives: status line, headers and body. */
export const everything = (res: ReadResponse) =>
  `${res.status}\n${[...res.headers].map(([k, v]) => `${k}: ${v}`).join("\n")}\n\n${res.text}`;
