// The dispatch board's page (docs/api.md, "The dispatch board"): public, as
// the page holds no data — its script calls GET /api/v1/board with the
// credentials the user enters. The HTML, script and style are modules loaded
// by their first request: no isolate reads them at startup.
import { Hono } from "hono";
import type { AppEnv } from "../env";
import { methodNotAllowed } from "../http/method-not-allowed";

/** Only this origin's script, style, images and API; no frame, no form submission, no base. */
export const BOARD_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const PAGE_HEADERS = {
  "Content-Security-Policy": BOARD_CSP,
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "X-Content-Type-Options": "nosniff",
  "Cache-Control": "no-cache",
};

const ASSETS = {
  "/board": { type: "text/html; charset=utf-8", body: async () => (await import("./page")).BOARD_HTML },
  "/board.js": { type: "text/javascript; charset=utf-8", body: async () => (await import("./script")).BOARD_JS },
  "/board.css": { type: "text/css; charset=utf-8", body: async () => (await import("./style")).BOARD_CSS },
  "/board.svg": { type: "image/svg+xml", body: async () => (await import("./page")).BOARD_ICON },
};

export function boardRoutes() {
  const routes = new Hono<AppEnv>();
  for (const [path, asset] of Object.entries(ASSETS))
    routes
      .get(path, async (c) => c.body(await asset.body(), 200, { ...PAGE_HEADERS, "Content-Type": asset.type }))
      .all(path, methodNotAllowed("GET"));
  return routes;
}
