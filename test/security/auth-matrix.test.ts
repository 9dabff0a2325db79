// Authentication matrix (docs/api.md, "Authentication"): every credential failure —
// missing, empty, whitespace, malformed, over-long, non-ASCII, revoked,
// unknown, another org's, duplicated, sent elsewhere than the two headers —
// on every endpoint (the sample of every operation of the operation samples,
// test/support/operations.ts, over HTTP and as an MCP tool; some requests that
// would otherwise be a 404, 405 or 422, an unknown path, a wrong method and /mcp)
// is a 401 `unauthenticated` with WWW-Authenticate: authentication comes
// before routing and validation. The body may name a
// missing header and says nothing else: all other failures get one and the
// same body and the same header names, so no answer tells whether a key or an
// org exists. A revoked key stops working within the isolate cache's bound.
import { beforeAll, describe, expect, it } from "vitest";
import { createKey, revokeKey } from "../../src/db/api-keys";
import { AUTH_CACHE_TTL_MS } from "../../src/middleware/auth";
import { OPERATIONS as DECLARED } from "../../src/routes";
import { credentialsOf, type ReadResponse } from "../support/http";
import { bookIncident } from "../support/incidents";
import { mcpCall, mcpList } from "../support/mcp";
import { type Fixture, httpRequest, OPERATIONS, pathTemplate, toolArguments } from "../support/operations";
import { expectProblem } from "../support/problem";
import { call } from "../support/request";
import { addAccount, db, newTenant, openTenant, type Tenant } from "../support/tenants";
import { slotIn } from "../support/time";

let a: Tenant;
let b: Tenant;
let revoked: Tenant;
let accountId: string;
let incidentId: string;
let holdId: string;
let canonical: Record<Group, { body: unknown; headerNames: string[] }>;

type Group = "missing key" | "missing org" | "refused";
type HeaderList = [string, string][];

beforeAll(async () => {
  a = await openTenant("Auth matrix A");
  b = await newTenant("Auth matrix B");
  accountId = (await addAccount(a, "Auth Account")).id;
  incidentId = (await bookIncident(a, { phone: "+1 917 555 0134" })).id;
  // A live hold for the whole run (15 minutes): release-hold's sample names it.
  const held = await call(a, "/api/v1/ai-agent/hold-slot", { body: { dateTime: slotIn(30), holdMinutes: 15 } });
  expect(held.status, held.text).toBe(200);
  holdId = held.body.holdId;
  const second = (await createKey(db(), a.orgId))!;
  await revokeKey(db(), a.orgId, second.keyId);
  revoked = { ...a, apiKey: second.apiKey, keyId: second.keyId };
  // One reference answer per group, from the plainest request of each.
  const reference = async (headers: HeaderList) => shapeOf(await call(null, "/api/v1/contacts", { headers }));
  canonical = {
    "missing key": await reference([["X-ORG-ID", a.orgId]]),
    "missing org": await reference([["X-API-KEY", a.apiKey]]),
    refused: await reference([
      ["X-API-KEY", `fsk_${"0".repeat(40)}`],
      ["X-ORG-ID", a.orgId],
    ]),
  };
});

/** A 401's body without its requestId, and the names of its headers. */
function shapeOf(res: ReadResponse) {
  expectProblem(res, 401, "unauthenticated");
  expect(res.headers.get("WWW-Authenticate")).toBe('ApiKey header="X-API-KEY"');
  const { requestId: _, ...body } = res.body;
  return { body, headerNames: [...res.headers.keys()].sort() };
}

/** Bytes of `text` as a client that sends UTF-8 puts them on the wire (header values are bytes, not characters). */
const utf8 = (text: string) => String.fromCharCode(...new TextEncoder().encode(text));
const key = () => a.apiKey;
const body = () => a.apiKey.slice(4);

/** [case, group, headers to send, extra query]. */
const CREDENTIALS: [string, Group, () => HeaderList, string?][] = [
  ["no headers", "missing key", () => []],
  ["no X-API-KEY", "missing key", () => [["X-ORG-ID", a.orgId]]],
  [
    "an empty X-API-KEY",
    "missing key",
    () => [
      ["X-API-KEY", ""],
      ["X-ORG-ID", a.orgId],
    ],
  ],
  [
    "a whitespace-only X-API-KEY",
    "missing key",
    () => [
      ["X-API-KEY", " \t "],
      ["X-ORG-ID", a.orgId],
    ],
  ],
  [
    "the key as a Bearer token",
    "missing key",
    () => [
      ["Authorization", `Bearer ${key()}`],
      ["X-ORG-ID", a.orgId],
    ],
  ],
  ["the key in the query string", "missing key", () => [["X-ORG-ID", a.orgId]], `api_key=${"K"}`],
  ["no X-ORG-ID", "missing org", () => [["X-API-KEY", key()]]],
  [
    "an empty X-ORG-ID",
    "missing org",
    () => [
      ["X-API-KEY", key()],
      ["X-ORG-ID", ""],
    ],
  ],
  [
    "a whitespace-only X-ORG-ID",
    "missing org",
    () => [
      ["X-API-KEY", key()],
      ["X-ORG-ID", "   "],
    ],
  ],
  [
    "a malformed key",
    "refused",
    () => [
      ["X-API-KEY", "not-a-key"],
      ["X-ORG-ID", a.orgId],
    ],
  ],
  [
    "the key without its fsk_ prefix",
    "refused",
    () => [
      ["X-API-KEY", body()],
      ["X-ORG-ID", a.orgId],
    ],
  ],
  [
    "the key with an upper-case prefix",
    "refused",
    () => [
      ["X-API-KEY", `FSK_${body()}`],
      ["X-ORG-ID", a.orgId],
    ],
  ],
  [
    "the key too short for the format",
    "refused",
    () => [
      ["X-API-KEY", key().slice(0, 35)],
      ["X-ORG-ID", a.orgId],
    ],
  ],
  [
    "the key missing its last character",
    "refused",
    () => [
      ["X-API-KEY", key().slice(0, -1)],
      ["X-ORG-ID", a.orgId],
    ],
  ],
  [
    "the key with one character changed",
    "refused",
    () => [
      ["X-API-KEY", `${key().slice(0, -1)}${key().endsWith("a") ? "b" : "a"}`],
      ["X-ORG-ID", a.orgId],
    ],
  ],
  [
    "the key with a character appended",
    "refused",
    () => [
      ["X-API-KEY", `${key()}a`],
      ["X-ORG-ID", a.orgId],
    ],
  ],
  [
    "the key with a space inside",
    "refused",
    () => [
      ["X-API-KEY", `${key().slice(0, 20)} ${key().slice(20)}`],
      ["X-ORG-ID", a.orgId],
    ],
  ],
  [
    "a 10 KB key",
    "refused",
    () => [
      ["X-API-KEY", `fsk_${"a".repeat(10_240)}`],
      ["X-ORG-ID", a.orgId],
    ],
  ],
  [
    "a 10 KB org id",
    "refused",
    () => [
      ["X-API-KEY", key()],
      ["X-ORG-ID", `org_${"a".repeat(10_240)}`],
    ],
  ],
  [
    "a Latin-1 key",
    "refused",
    () => [
      ["X-API-KEY", `fsk_${"é".repeat(40)}`],
      ["X-ORG-ID", a.orgId],
    ],
  ],
  [
    "a key with UTF-8 emoji bytes",
    "refused",
    () => [
      ["X-API-KEY", utf8(`fsk_${"🔑".repeat(10)}${body()}`)],
      ["X-ORG-ID", a.orgId],
    ],
  ],
  [
    "an org id with UTF-8 bytes",
    "refused",
    () => [
      ["X-API-KEY", key()],
      ["X-ORG-ID", utf8(`${a.orgId}ü`)],
    ],
  ],
  [
    "an RTL-override org id",
    "refused",
    () => [
      ["X-API-KEY", key()],
      ["X-ORG-ID", utf8(`org_\u202E${a.orgId.slice(4)}`)],
    ],
  ],
  [
    "SQL in the key",
    "refused",
    () => [
      ["X-API-KEY", "fsk_' OR '1'='1"],
      ["X-ORG-ID", a.orgId],
    ],
  ],
  [
    "SQL in the org id",
    "refused",
    () => [
      ["X-API-KEY", key()],
      ["X-ORG-ID", "org_x' OR '1'='1"],
    ],
  ],
  [
    "an unknown well-formed key",
    "refused",
    () => [
      ["X-API-KEY", `fsk_${"Z".repeat(40)}`],
      ["X-ORG-ID", a.orgId],
    ],
  ],
  [
    "an unknown org",
    "refused",
    () => [
      ["X-API-KEY", key()],
      ["X-ORG-ID", "org_doesnotexist"],
    ],
  ],
  [
    "the org id in upper case",
    "refused",
    () => [
      ["X-API-KEY", key()],
      ["X-ORG-ID", a.orgId.toUpperCase()],
    ],
  ],
  [
    "the demo org's credentials (not provisioned here)",
    "refused",
    () => [
      ["X-API-KEY", `fsk_demo${"0".repeat(28)}`],
      ["X-ORG-ID", "org_demo"],
    ],
  ],
  [
    "a revoked key",
    "refused",
    () => [
      ["X-API-KEY", revoked.apiKey],
      ["X-ORG-ID", a.orgId],
    ],
  ],
  [
    "the key of another org",
    "refused",
    () => [
      ["X-API-KEY", b.apiKey],
      ["X-ORG-ID", a.orgId],
    ],
  ],
  [
    "a key with another org's id",
    "refused",
    () => [
      ["X-API-KEY", key()],
      ["X-ORG-ID", b.orgId],
    ],
  ],
  [
    "the key id instead of the key",
    "refused",
    () => [
      ["X-API-KEY", a.keyId],
      ["X-ORG-ID", a.orgId],
    ],
  ],
  [
    "the key twice",
    "refused",
    () => [
      ["X-API-KEY", key()],
      ["X-API-KEY", key()],
      ["X-ORG-ID", a.orgId],
    ],
  ],
  [
    "two orgs' keys",
    "refused",
    () => [
      ["X-API-KEY", key()],
      ["X-API-KEY", b.apiKey],
      ["X-ORG-ID", a.orgId],
    ],
  ],
  [
    "the org id twice",
    "refused",
    () => [
      ["X-API-KEY", key()],
      ["X-ORG-ID", a.orgId],
      ["X-ORG-ID", a.orgId],
    ],
  ],
  [
    "two org ids",
    "refused",
    () => [
      ["X-API-KEY", key()],
      ["X-ORG-ID", a.orgId],
      ["X-ORG-ID", b.orgId],
    ],
  ],
  [
    "a key header and an empty one",
    "refused",
    () => [
      ["X-API-KEY", key()],
      ["X-API-KEY", ""],
      ["X-ORG-ID", a.orgId],
    ],
  ],
];

const slot = () => slotIn(26);
const UNKNOWN_INCIDENT = "inc_00000000000000000000000000";
const UNKNOWN_HOLD = "hold_00000000000000000000000000";

type Send = (headers: HeaderList, query: string) => Promise<ReadResponse>;
/** [name, send with exactly these headers (and extra query), and for some the status they would get with valid credentials]. */
type Endpoint = [string, Send, (404 | 405 | 422)?];

/** `path` with the extra query of a credential case (`?api_key=…`) added to its own. */
const withQuery = (path: string, query: string) =>
  query && path.includes("?") ? `${path}&${query.slice(1)}` : `${path}${query}`;

/** A's account, incident and hold, for the operation samples. */
const fixtureOfA = (): Fixture => ({
  tenant: a,
  accountId,
  incidentId,
  holdId,
  planId: "plan_00000000000000000000000000",
});

/** The sample of every operation (test/support/operations.ts), over HTTP and as an MCP tool. */
const SAMPLES: Endpoint[] = OPERATIONS.flatMap((op): Endpoint[] => [
  [
    `${op.method} ${pathTemplate(op)}`,
    (h, q) => {
      const { path, body } = httpRequest(op, fixtureOfA());
      return call(null, withQuery(path, q), { headers: h, body });
    },
  ],
  [`MCP tools/call ${op.tool}`, (h) => mcpCall(null, op.tool, toolArguments(op, fixtureOfA()), { headers: h })],
]);

/**
 * Requests besides the samples, most with the status they would get when
 * authenticated: a 404 (an unknown incident or path), a 405 or a 422 (an
 * invalid body, query or phone). The 401 must come first all the same.
 */
const VARIANTS: Endpoint[] = [
  [
    "GET /api/v1/contacts?phone= (an invalid phone: 422)",
    (h, q) => call(null, withQuery("/api/v1/contacts?phone=911", q), { headers: h }),
    422,
  ],
  [
    "POST create-incident (an invalid phone: 422)",
    (h, q) =>
      call(null, `/api/v1/ai-agent/create-incident${q}`, {
        headers: h,
        body: { dateTime: slot(), clientName: "X", insectName: "Y", phone: "911" },
      }),
    422,
  ],
  [
    "POST find-caller (an invalid phone: 422)",
    (h, q) => call(null, `/api/v1/ai-agent/find-caller${q}`, { headers: h, body: { phone: "911" } }),
    422,
  ],
  [
    "POST hold-slot (holdMinutes over 15: 422)",
    (h, q) => call(null, `/api/v1/ai-agent/hold-slot${q}`, { headers: h, body: { dateTime: slot(), holdMinutes: 16 } }),
    422,
  ],
  [
    "POST release-hold {unknown hold id} (422 not_found)",
    (h, q) => call(null, `/api/v1/ai-agent/release-hold${q}`, { headers: h, body: { holdId: UNKNOWN_HOLD } }),
    422,
  ],
  [
    "GET /api/v1/incidents?status=… (an invalid filter: 422)",
    (h, q) => call(null, withQuery("/api/v1/incidents?status=done&cursor=x", q), { headers: h }),
    422,
  ],
  [
    "GET /api/v1/incidents/{unknown id} (404)",
    (h, q) => call(null, `/api/v1/incidents/${UNKNOWN_INCIDENT}${q}`, { headers: h }),
    404,
  ],
  [
    "POST /api/v1/incidents/{unknown id}/cancel (404)",
    (h, q) => call(null, `/api/v1/incidents/${UNKNOWN_INCIDENT}/cancel${q}`, { headers: h, body: {} }),
    404,
  ],
  [
    "POST /api/v1/incidents/{id}/cancel (an invalid body: 422)",
    (h, q) =>
      call(null, `/api/v1/incidents/${incidentId}/cancel${q}`, { headers: h, body: { reason: 5, status: "x" } }),
    422,
  ],
  [
    "POST /api/v1/incidents/{unknown id}/reschedule (404)",
    (h, q) =>
      call(null, `/api/v1/incidents/${UNKNOWN_INCIDENT}/reschedule${q}`, { headers: h, body: { dateTime: slot() } }),
    404,
  ],
  [
    "POST /api/v1/incidents/{id}/reschedule (a naive date-time: 422)",
    (h, q) =>
      call(null, `/api/v1/incidents/${incidentId}/reschedule${q}`, {
        headers: h,
        body: { dateTime: "2026-11-23T14:00:00" },
      }),
    422,
  ],
  [
    "GET /api/v1/events?type=… (an unknown type: 422)",
    (h, q) => call(null, withQuery("/api/v1/events?type=lead.deleted&limit=0", q), { headers: h }),
    422,
  ],
  ["an unknown path", (h, q) => call(null, `/api/v1/no-such-thing${q}`, { headers: h }), 404],
  [
    "an unknown path under incidents",
    (h, q) => call(null, `/api/v1/incidents/${incidentId}/delete${q}`, { headers: h }),
    404,
  ],
  ["a wrong method", (h, q) => call(null, `/api/v1/leads${q}`, { method: "DELETE", headers: h }), 405],
  [
    "a wrong method on an incident",
    (h, q) => call(null, `/api/v1/incidents/${incidentId}${q}`, { method: "DELETE", headers: h }),
    405,
  ],
  ["GET on cancel (405)", (h, q) => call(null, `/api/v1/incidents/${incidentId}/cancel${q}`, { headers: h }), 405],
  [
    "PUT on reschedule (405)",
    (h, q) => call(null, `/api/v1/incidents/${incidentId}/reschedule${q}`, { method: "PUT", headers: h, body: {} }),
    405,
  ],
  ["MCP tools/list", (h) => mcpList(null, { headers: h })],
  [
    "MCP tools/call cancel_incident {unknown id}",
    (h) => mcpCall(null, "cancel_incident", { id: UNKNOWN_INCIDENT }, { headers: h }),
  ],
  [
    "MCP tools/call release_hold {unknown hold id}",
    (h) => mcpCall(null, "release_hold", { holdId: UNKNOWN_HOLD }, { headers: h }),
  ],
];
/** Every endpoint: every operation (over HTTP and MCP), some with a request that would otherwise be a 404, 405 or 422, an unknown path, a wrong method and the tool list. */
const ENDPOINTS: Endpoint[] = [...SAMPLES, ...VARIANTS];
/** With valid credentials this one opens an event stream that does not end: refusals only. */
const MCP_STREAM: Endpoint = [
  "MCP GET (event stream)",
  (h) => call(null, "/mcp", { headers: [...h, ["Accept", "text/event-stream"]] }),
];

const queryOf = (extra: string | undefined) =>
  extra === undefined ? "" : `?${extra.replace("K", encodeURIComponent(a.apiKey))}`;

const REFUSING = [...ENDPOINTS, MCP_STREAM];

describe(`authentication matrix: ${CREDENTIALS.length} credentials × ${REFUSING.length} endpoints = ${CREDENTIALS.length * REFUSING.length} refused requests`, () => {
  it("holds every declared operation (src/routes), as the operation samples reach them", () => {
    const reached = OPERATIONS.map((op) => `${op.method} ${pathTemplate(op)}`).sort();
    expect(reached).toEqual(DECLARED.map((op) => `${op.method.toUpperCase()} ${op.path}`).sort());
    for (const op of OPERATIONS)
      expect(ENDPOINTS.map(([name]) => name)).toEqual(
        expect.arrayContaining([`${op.method} ${pathTemplate(op)}`, `MCP tools/call ${op.tool}`]),
      );
  });

  it("gets the 404, 405 or 422 it is there for with valid credentials (so its 401 is the auth's, not the route's)", async () => {
    const valid = Object.entries(credentialsOf(a)) as HeaderList;
    for (const [name, send, otherwise] of ENDPOINTS) {
      if (otherwise === undefined) continue;
      const res = await send(valid, "");
      expect(res.status, `${name}: ${res.text}`).toBe(otherwise);
    }
  });

  it.each(CREDENTIALS.map(([name, group, headers, extra]) => [name, group, headers, extra] as const))(
    "%s → 401 (%s) on every endpoint",
    async (_name, group, headers, extra) => {
      for (const [endpoint, send] of REFUSING) {
        const res = await send(headers(), queryOf(extra));
        expect(shapeOf(res), `${endpoint}: ${res.text}`).toEqual(canonical[group]);
      }
    },
  );

  it("names the missing header and otherwise says the same thing in every group", () => {
    const { detail: missingKey, ...keyBody } = canonical["missing key"].body as Record<string, unknown>;
    const { detail: missingOrg, ...orgBody } = canonical["missing org"].body as Record<string, unknown>;
    const { detail: refused, ...refusedBody } = canonical.refused.body as Record<string, unknown>;
    expect(missingKey).toContain("X-API-KEY");
    expect(missingOrg).toContain("X-ORG-ID");
    expect(keyBody).toEqual(refusedBody);
    expect(orgBody).toEqual(refusedBody);
    expect(refused).toEqual(expect.any(String));
    // The generic detail gives nothing away about which of the two was wrong.
    expect(String(refused)).not.toMatch(/revoked|unknown|not found|does not exist|expired|another/i);
    expect(canonical["missing key"].headerNames).toEqual(canonical.refused.headerNames);
    expect(canonical["missing org"].headerNames).toEqual(canonical.refused.headerNames);
  });

  it.each([
    [
      "lower-case header names",
      (t: Tenant): HeaderList => [
        ["x-api-key", t.apiKey],
        ["x-org-id", t.orgId],
      ],
    ],
    [
      "mixed-case header names",
      (t: Tenant): HeaderList => [
        ["X-Api-Key", t.apiKey],
        ["x-Org-Id", t.orgId],
      ],
    ],
  ])("accepts %s (HTTP header names are case-insensitive) on every endpoint", async (_name, headers) => {
    for (const [endpoint, send] of ENDPOINTS) {
      const res = await send(headers(a), "");
      expect(res.status, `${endpoint}: ${res.text}`).not.toBe(401);
      expect(res.status, `${endpoint}: ${res.text}`).toBeLessThan(500);
    }
  });
});

describe("revocation", () => {
  it(`stops a key on every endpoint within the isolate cache bound (${AUTH_CACHE_TTL_MS} ms)`, async () => {
    const tenant = await newTenant("Revoked soon");
    const fresh = (await createKey(db(), tenant.orgId))!;
    const headers = Object.entries(credentialsOf({ ...tenant, apiKey: fresh.apiKey })) as HeaderList;
    // Used on every endpoint first, so that every cache that could hold it does.
    for (const [endpoint, send] of ENDPOINTS) expect((await send(headers, "")).status, endpoint).not.toBe(401);
    await revokeKey(db(), tenant.orgId, fresh.keyId);
    const revokedAt = Date.now();
    // The cache is per key, not per endpoint: poll one operation and /mcp. Every
    // answer that still honours the key must come from a request sent within the bound.
    for (const [endpoint, send] of ENDPOINTS.filter(
      ([name]) => name === "GET /api/v1/contacts" || name === "MCP tools/list",
    )) {
      for (;;) {
        const sentAt = Date.now();
        const { status } = await send(headers, "");
        if (status === 401) break;
        expect(status, endpoint).toBe(200);
        expect(sentAt - revokedAt, `${endpoint} still honours the revoked key`).toBeLessThanOrEqual(
          AUTH_CACHE_TTL_MS + 100,
        );
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    // Refused for good, with the same body as any other refused key; the org's other key still works.
    for (const [endpoint, send] of ENDPOINTS)
      expect(shapeOf(await send(headers, "")), endpoint).toEqual(canonical.refused);
    expect((await call(tenant, "/api/v1/contacts")).status).toBe(200);
  }, 15_000);
});
