import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { it, vi } from "vitest";
import app from "../../src/app";
import { newTenant } from "../helpers";

it("timing", async () => {
  const t = await newTenant();
  const h = { "X-API-KEY": t.apiKey, "X-ORG-ID": t.orgId, "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
  const out: string[] = [];
  vi.spyOn(console, "log").mockImplementation(() => {});
  for (const args of [{ rating: "x" }, { firstName: "y" }, []]) {
    const t0 = performance.now();
    let txt = "";
    for (let i = 0; i < 100; i++) {
      const ctx = createExecutionContext();
      const r = await app.fetch(new Request("https://api.test/mcp", { method: "POST", headers: h, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "create_lead", arguments: args } }) }), env, ctx);
      txt = `${r.status} ${await r.text()}`;
      await waitOnExecutionContext(ctx);
    }
    out.push(`mcp ${(performance.now() - t0) / 100}ms ${txt.slice(0, 300)}`);
  }
  console.warn(out.join("\n"));
}, 120_000);
