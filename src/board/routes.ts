// The dispatch board's page (docs/api.md, "The dispatch board"): public, as
// the page holds no data — its script calls GET /api/v1/board with the
// credentials the user enters. The HTML, script, style and icon are static
// assets (src/assets/, wrangler.toml [assets]), outside the worker's bundle;
// the worker serves them through the ASSETS binding with the page's headers.
import { Hono } from "hono";
import type { AppEnv } from "../env";
import { methodNotAllowed } from "../http/method-not-allowed";
import { readAsset } from "../lib/assets";

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
  "/board": { file: "/board.html", type: "text/html; charset=utf-8" },
  "/board.js": { file: "/board.js", type: "text/javascript; charset=utf-8" },
  "/board.css": { file: "/board.css", type: "text/css; charset=utf-8" },
  "/board.svg": { file: "/board.svg", type: "image/svg+xml" },
};

export function boardRoutes() {
  const routes = new Hono<AppEnv>();
  for (const [path, { file, type }] of Object.entries(ASSETS))
    routes
      .get(path, async (c) => {
        const asset = await readAsset(c.env.ASSETS, file, c.req.url);
        return c.body(asset.body!, 200, { ...PAGE_HEADERS, "Content-Type": type });
      })
      .all(path, methodNotAllowed("GET"));
  return routes;
}
