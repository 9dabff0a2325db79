import { describe, expect, it } from "vitest";
import { call } from "../../support/request";

describe("GET /health", () => {
  it("answers without auth and reveals nothing else", async () => {
    const res = await call(null, "/health");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "ok" });
    expect(res.headers.get("X-Request-Id")).toBeTruthy();
  });
});
