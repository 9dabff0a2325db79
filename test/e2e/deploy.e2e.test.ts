// `wrangler deploy --dry-run` on the repository as committed: what a dashboard
// build runs, minus the upload. It must bundle with no file edited and no id
// (offline: a dry run provisions nothing and calls no API), and the bundle it
// would upload must stay within the cold-start budget (test/bench/coldstart.ts), minified,
// with a source map that leads errors in Workers Logs back to src/.
import fs from "node:fs";
import { SourceMap } from "node:module";
import os from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GZIP_BUDGET_BYTES } from "../bench/coldstart";
import { ROOT, type RunResult, run } from "./harness";

const outdir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-e2e-deploy-"));
const metafile = path.join(outdir, "meta.json");
let result: RunResult;

beforeAll(async () => {
  result = await run("npx", ["wrangler", "deploy", "--dry-run", "--outdir", outdir, "--metafile", metafile], 120_000);
}, 150_000);
afterAll(() => fs.rmSync(outdir, { recursive: true, force: true }));

describe("wrangler deploy --dry-run", () => {
  it("bundles the worker as committed, with its D1 database, queue and rate limiter bound by name", () => {
    const output = result.stdout + result.stderr;
    expect(result.code, output).toBe(0);
    expect(output).toMatch(/--dry-run: exiting now/);
    expect(output).toMatch(/env\.DB \(field-service\)\s+D1 Database/);
    expect(output).toMatch(/env\.WEBHOOKS \(field-service-webhooks\)\s+Queue/);
    expect(output).toMatch(/env\.RATE_LIMITER/);
    expect(output).not.toMatch(/WARNING|database_id/);
    expect(fs.readdirSync(outdir)).toContain("index.js");
  });

  it(`uploads at most ${GZIP_BUDGET_BYTES / 1024} KiB gzip, minified, without ajv, zod's other locales or temporal-polyfill`, () => {
    expect(result.code, result.stderr).toBe(0);
    const bundle = fs.readFileSync(path.join(outdir, "index.js"));
    const gzip = gzipSync(bundle).length;
    console.log(`bundle: ${bundle.length} bytes, ${gzip} gzip (budget ${GZIP_BUDGET_BYTES})`);
    expect(gzip).toBeLessThanOrEqual(GZIP_BUDGET_BYTES);
    expect(bundle.toString("utf8").split("\n").length).toBeLessThan(1_000);
    // What the bundle holds: the inputs with bytes in its output (the metafile lists every file it parsed).
    const meta = JSON.parse(fs.readFileSync(metafile, "utf8")) as {
      outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>;
    };
    const inputs = Object.values(meta.outputs).flatMap((output) =>
      Object.entries(output.inputs)
        .filter(([, input]) => input.bytesInOutput > 0)
        .map(([name]) => name),
    );
    expect(inputs.filter((input) => /node_modules\/(ajv|ajv-formats|temporal-polyfill)\//.test(input))).toEqual([]);
    expect(inputs.filter((input) => /zod\/v4\/locales\/(?!en\.js|index\.js)/.test(input))).toEqual([]);
    expect(inputs.some((input) => input.endsWith("src/lib/no-ajv.ts"))).toBe(true);
  });

  it("evaluates the app at startup itself: only the MCP SDK's modules wait in esbuild's lazy initialisers", () => {
    expect(result.code, result.stderr).toBe(0);
    // A dynamically imported module, and all it imports, is bundled inside
    // lazy initialisers (esbuild's __esm), which cost startup CPU when they held
    // the whole app (~8 ms). src/mcp/sdk.ts is the one module imported so.
    const text = fs.readFileSync(path.join(outdir, "index.js"), "utf8");
    const map = new SourceMap(JSON.parse(fs.readFileSync(path.join(outdir, "index.js.map"), "utf8")));
    const helper = /var ([\w$]+)=\(([\w$]+),([\w$]+)\)=>\(\)=>\(\2&&\(\3=\2\(\2=0\)\),\3\)/.exec(text)?.[1];
    expect(helper).toBeDefined();
    const lazy = new Set<string>();
    text.split("\n").forEach((line, i) => {
      for (const found of line.matchAll(new RegExp(`[=,]${helper!.replaceAll("$", "\\$")}\\(\\(\\)=>\\{`, "g"))) {
        const entry = map.findEntry(i, found.index + found[0].length) as { originalSource?: string };
        lazy.add(path.relative(ROOT, path.resolve(outdir, entry.originalSource ?? "?")));
      }
    });
    expect(lazy).toContain("src/mcp/sdk.ts");
    const allowed = /^(node_modules\/(@modelcontextprotocol\/sdk|zod)\/|src\/mcp\/sdk\.ts$|src\/lib\/no-[a-z-]+\.ts$)/;
    expect([...lazy].filter((source) => !allowed.test(source))).toEqual([]);
  });

  it("ships a source map that takes a position in the minified bundle back to its line in src/", () => {
    expect(result.code, result.stderr).toBe(0);
    const lines = fs.readFileSync(path.join(outdir, "index.js"), "utf8").split("\n");
    const map = new SourceMap(JSON.parse(fs.readFileSync(path.join(outdir, "index.js.map"), "utf8")));
    // A string of src/schemas/common.ts, as a stack frame there would point at it.
    const text = "must be well-formed Unicode without NUL characters";
    const line = lines.findIndex((l) => l.includes(text));
    expect(line).toBeGreaterThanOrEqual(0);
    const entry = map.findEntry(line, lines[line]!.indexOf(text)) as { originalSource?: string; originalLine?: number };
    expect(entry.originalSource).toMatch(/src\/schemas\/common\.ts$/);
    const source = fs.readFileSync(path.join(ROOT, "src/schemas/common.ts"), "utf8").split("\n");
    expect(source[entry.originalLine!]).toContain(text);
  });
});
