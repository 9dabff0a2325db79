// The page GET /board and its script, style and icon (docs/api.md, "The
// dispatch board"): public, with a strict Content-Security-Policy, nothing
// inline and nothing from another origin. The page's behaviour in a browser
// is test/e2e/board.e2e.test.ts's.
import { describe, expect, it } from "vitest";
import { expectProblem } from "../../support/problem";
import { call } from "../../support/request";

const ASSETS = [
  ["/board", "text/html; charset=utf-8"],
  ["/board.js", "text/javascript; charset=utf-8"],
  ["/board.css", "text/css; charset=utf-8"],
  ["/board.svg", "image/svg+xml"],
] as const;

describe("GET /board", () => {
  it.each(ASSETS)("%s: 200 %s without credentials, with the page's security headers", async (path, type) => {
    const res = await call(null, path);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("Content-Type")).toBe(type);
    const csp = res.headers.get("Content-Security-Policy")!;
    expect(csp).toMatch(/(^|; )default-src 'self'(;|$)/);
    expect(csp).toMatch(/(^|; )script-src 'self'(;|$)/);
    expect(csp).toMatch(/(^|; )style-src 'self'(;|$)/);
    expect(csp).toMatch(/(^|; )frame-ancestors 'none'(;|$)/);
    expect(csp).not.toMatch(/unsafe|https?:|\*/);
    expect(res.headers.get("X-Frame-Options")).toBe("DENY");
    expect(res.headers.get("Referrer-Policy")).toBe("no-referrer");
    expect(res.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(res.headers.get("X-Request-Id")).toBeTruthy();
  });

  it("the page has no inline script or style and loads nothing from another origin", async () => {
    const { text } = await call(null, "/board");
    expect(text).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(text).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    expect(text).toContain('<script src="/board.js" defer></script>');
    expect(text).toContain('<link rel="stylesheet" href="/board.css">');
    for (const path of ["/board", "/board.js", "/board.css"])
      expect((await call(null, path)).text).not.toMatch(
        /(src|href)=["']?(https?:)?\/\/|url\(|@import|https?:\/\/(?!www\.w3\.org)/,
      );
  });

  it("the key is no form field: no input has a name, so no submission can put it in a URL", async () => {
    const { text } = await call(null, "/board");
    expect(text).toMatch(/<input id="api-key" type="password"/);
    expect(text).not.toMatch(/<input[^>]*\sname=/);
  });

  it("HEAD is served; other methods are 405 with Allow", async () => {
    expect((await call(null, "/board", { method: "HEAD" })).status).toBe(200);
    const res = await call(null, "/board", { method: "POST", body: {} });
    expectProblem(res, 405, "method_not_allowed");
    expect(res.headers.get("Allow")).toBe("GET, HEAD");
  });
});
