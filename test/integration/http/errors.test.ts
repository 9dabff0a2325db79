import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { everyMatching, everyTrip, wrapD1 } from "../../support/d1";
import { isProblem } from "../../support/problem";
import { call } from "../../support/request";
import { newTenant, type Tenant } from "../../support/tenants";

let t: Tenant;
beforeAll(async () => {
  t = await newTenant();
});

describe("problem responses", () => {
  it.each([
    ["unknown path", "/api/v1/nope", {}, 404, "not_found"],
    ["unknown path outside the API", "/nope", {}, 404, "not_found"],
    ["wrong method", "/api/v1/leads", { method: "GET" }, 405, "method_not_allowed"],
    [
      "non-JSON media type",
      "/api/v1/leads",
      { rawBody: "{}", headers: { "Content-Type": "text/plain" } },
      415,
      "unsupported_media_type",
    ],
    ["no media type", "/api/v1/leads", { rawBody: "{}" }, 415, "unsupported_media_type"],
    ["body over 64 KiB", "/api/v1/leads", { body: { firstName: "x".repeat(70_000) } }, 413, "payload_too_large"],
    [
      "malformed JSON",
      "/api/v1/leads",
      { rawBody: "{not json", headers: { "Content-Type": "application/json" } },
      400,
      "malformed_json",
    ],
    ["a JSON array", "/api/v1/contacts", { body: [1, 2] }, 400, "malformed_json"],
    ["a JSON string", "/api/v1/contacts", { body: "x" }, 400, "malformed_json"],
    [
      "invalid UTF-8",
      "/api/v1/leads",
      {
        rawBody: new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
        headers: { "Content-Type": "application/json" },
      },
      400,
      "malformed_json",
    ],
    ["a failing field", "/api/v1/leads", { body: { rating: "high" } }, 422, "validation_failed"],
  ] as const)("%s → %i %s", async (_case, path, options, status, code) => {
    const res = await call(t, path, options);
    expect(res.status).toBe(status);
    expect(res.headers.get("Content-Type")).toBe("application/problem+json");
    expect(isProblem(res.body)).toBe(true);
    expect(res.body).toMatchObject({ status, code });
    expect(res.body.requestId).toBe(res.headers.get("X-Request-Id"));
  });

  it("names the allowed methods on a 405", async () => {
    const res = await call(t, "/api/v1/contacts", { method: "DELETE" });
    expect(res.status).toBe(405);
    expect(res.headers.get("Allow")).toBe("GET, POST, HEAD");
  });

  it("accepts application/json with a charset and +json media types", async () => {
    const a = await call(t, "/api/v1/leads", {
      rawBody: "{}",
      headers: { "Content-Type": "application/json; charset=utf-8" },
    });
    const b = await call(t, "/api/v1/leads", {
      rawBody: "{}",
      headers: { "Content-Type": "application/merge-patch+json" },
    });
    expect([a.status, b.status]).toEqual([200, 200]);
  });

  it("checks the media type before the size and the size before the syntax", async () => {
    const big = "x".repeat(70_000);
    expect((await call(t, "/api/v1/leads", { rawBody: big, headers: { "Content-Type": "text/plain" } })).status).toBe(
      415,
    );
    expect(
      (await call(t, "/api/v1/leads", { rawBody: big, headers: { "Content-Type": "application/json" } })).status,
    ).toBe(413);
  });

  it("counts the bytes that arrive, whatever Content-Length says", async () => {
    const chunk = new TextEncoder().encode(`{"firstName":"${"x".repeat(40_000)}`);
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(chunk);
        controller.enqueue(chunk);
        controller.close();
      },
    });
    const res = await call(t, "/api/v1/leads", { rawBody: stream, headers: { "Content-Type": "application/json" } });
    expect(res.status).toBe(413);
  });
});

describe("request ids", () => {
  it("echoes a sane client id in the header and the error body", async () => {
    const res = await call(null, "/api/v1/leads", { headers: { "X-Request-Id": "call-42.retry:1" } });
    expect(res.headers.get("X-Request-Id")).toBe("call-42.retry:1");
    expect(res.body.requestId).toBe("call-42.retry:1");
  });

  it.each(["has space", "x".repeat(129), "<script>", ""])(
    "replaces the unsafe id %j with a generated one",
    async (sent) => {
      const res = await call(null, "/health", { headers: { "X-Request-Id": sent } });
      const id = res.headers.get("X-Request-Id");
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
    },
  );
});

describe("unexpected failures", () => {
  it("answer 500 with nothing internal in the body", async () => {
    // A failure D1 does not call transient (a missing table is 503: see unmigrated.test.ts).
    const error = () => new Error("D1_ERROR: UNIQUE constraint failed: leads.id: SQLITE_CONSTRAINT");
    const failing = wrapD1(env.DB, { fail: everyMatching(/insert into "leads"/i), error });
    const res = await call(t, "/api/v1/leads", { body: {}, bindings: { DB: failing.db } });
    expect(failing.failed()).toHaveLength(1);
    expect(res.status).toBe(500);
    expect(res.body).toEqual({
      type: "/problems/internal_error",
      title: "Internal server error",
      status: 500,
      code: "internal_error",
      requestId: res.headers.get("X-Request-Id"),
    });
  });
});

describe("database unavailable", () => {
  it.each(["D1_ERROR: Network connection lost.", "D1_ERROR: D1 DB is overloaded. Too many requests queued."])(
    "%s → 503 with Retry-After, nothing internal",
    async (message) => {
      // Every round trip fails with D1's bare message.
      const failing = wrapD1(env.DB, { fail: everyTrip, error: () => new Error(message) });
      const res = await call(t, "/api/v1/contacts", { bindings: { DB: failing.db } });
      expect(failing.failed().length).toBeGreaterThan(0);
      expect(res.status).toBe(503);
      expect(res.headers.get("Retry-After")).toBe("1");
      expect(res.body).toMatchObject({ status: 503, code: "unavailable" });
      expect(res.text).not.toContain("D1_ERROR");
    },
  );
});
