// D1 Sessions API (docs/api.md, "Reading your own writes"): every request runs
// in one D1 session; its bookmark comes back in X-D1-Bookmark, and a client
// that sends it on its next request starts that request's session there
// (read-your-writes on replicas).

import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { type WrappedD1, wrapD1 } from "../../support/d1";
import { mcpClient } from "../../support/mcp";
import { call } from "../../support/request";
import { newTenant, type Tenant } from "../../support/tenants";

const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8,64}$/;
let tenant: Tenant;

/** A request as the tenant on the recording binding, sending `bookmark` as X-D1-Bookmark. */
const send = (recorder: WrappedD1, path: string, init: { body?: unknown; bookmark?: string } = {}) =>
  call(tenant, path, {
    body: init.body,
    headers: init.bookmark === undefined ? {} : { "X-D1-Bookmark": init.bookmark },
    bindings: { DB: recorder.db },
  });

beforeAll(async () => {
  tenant = await newTenant("Sessions");
});

describe("D1 sessions and X-D1-Bookmark", () => {
  it("starts a request without a bookmark anywhere (a replica may serve it) and returns the session's bookmark", async () => {
    const recorder = wrapD1(env.DB);
    const response = await send(recorder, "/api/v1/contacts");
    expect(response.status).toBe(200);
    expect(recorder.sessions).toEqual(["first-unconstrained"]);
    expect(response.headers.get("X-D1-Bookmark")).toMatch(BOOKMARK);
  });

  it("round-trips the bookmark: a write's bookmark starts the next read's session, which sees the write", async () => {
    const write = await send(wrapD1(env.DB), "/api/v1/contacts", { body: { firstName: "Bookmarked" } });
    expect(write.status).toBe(200);
    const { id }: { id: string } = write.body;
    const bookmark = write.headers.get("X-D1-Bookmark");
    expect(bookmark).toMatch(BOOKMARK);

    const recorder = wrapD1(env.DB);
    const read = await send(recorder, "/api/v1/contacts?limit=100", { bookmark: bookmark! });
    expect(recorder.sessions).toEqual([bookmark]);
    const { data }: { data: { id: string }[] } = read.body;
    expect(data.map((contact) => contact.id)).toContain(id);
    // Never behind the bookmark the client sent.
    expect(read.headers.get("X-D1-Bookmark")! >= bookmark!).toBe(true);
  });

  it.each([["garbage"], ["0".repeat(500)], ["00000000-00000005-00000000-zz"]])(
    "starts at the primary for an unusable bookmark %#, and still answers",
    async (bookmark) => {
      const recorder = wrapD1(env.DB);
      const response = await send(recorder, "/api/v1/contacts", { bookmark });
      expect(response.status).toBe(200);
      expect(recorder.sessions).toEqual(["first-primary"]);
      expect(response.headers.get("X-D1-Bookmark")).toMatch(BOOKMARK);
    },
  );

  it("returns a bookmark on errors that reached the database too", async () => {
    const response = await call(tenant, "/api/v1/accounts/acct_missing");
    expect(response.status).toBe(404);
    expect(response.headers.get("X-D1-Bookmark")).toMatch(BOOKMARK);
  });

  it("passes the bookmark through MCP tool calls and returns theirs", async () => {
    const first = await call(tenant, "/api/v1/leads", { body: {} });
    const bookmark = first.headers.get("X-D1-Bookmark")!;
    const seen: (string | null)[] = [];
    const recorder = wrapD1(env.DB);
    const client = await mcpClient(tenant, {
      headers: { "X-D1-Bookmark": bookmark },
      bindings: { DB: recorder.db },
      onResponse: (response) => seen.push(response.headers.get("X-D1-Bookmark")),
    });
    const result = await client.callTool({ name: "list_contacts", arguments: { limit: 1 } });
    expect(result.isError).toBeFalsy();
    // Every session the tool call opened started from the client's bookmark.
    expect(recorder.sessions.length).toBeGreaterThan(0);
    expect(new Set(recorder.sessions)).toEqual(new Set([bookmark]));
    expect(seen.at(-1)).toMatch(BOOKMARK);
    expect(seen.at(-1)! >= bookmark).toBe(true);
  });
});
