// `wrangler deploy --dry-run` on the repository as committed: what a dashboard
// build runs, minus the upload. It must bundle with no file edited and no id
// (offline: a dry run provisions nothing and calls no API).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { run } from "./harness";

const outdir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-e2e-deploy-"));
afterAll(() => fs.rmSync(outdir, { recursive: true, force: true }));

describe("wrangler deploy --dry-run", () => {
  it("bundles the worker as committed, with its D1 database, queue and rate limiter bound by name", async () => {
    const result = await run("npx", ["wrangler", "deploy", "--dry-run", "--outdir", outdir], 120_000);
    const output = result.stdout + result.stderr;
    expect(result.code, output).toBe(0);
    expect(output).toMatch(/--dry-run: exiting now/);
    expect(output).toMatch(/env\.DB \(field-service\)\s+D1 Database/);
    expect(output).toMatch(/env\.WEBHOOKS \(field-service-webhooks\)\s+Queue/);
    expect(output).toMatch(/env\.RATE_LIMITER/);
    expect(output).not.toMatch(/WARNING|database_id/);
    expect(fs.readdirSync(outdir)).toContain("index.js");
  });
});
