// `npm run bench` is not a test, but it must keep working: a miniature run
// (small data, 1 s per case) through the real script, checked for every case,
// zero errors and the two p50 ratios.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { run } from "./harness";

it("npm run bench runs end to end and writes every figure", { timeout: 180_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-bench-smoke-"));
  try {
    const out = path.join(dir, "results.json");
    const args = [
      "--seconds",
      "1",
      "--connections",
      "2",
      "--contacts",
      "3000",
      "--bookings",
      "600",
      "--depth",
      "2000",
      "--startup-runs",
      "1",
      "--out",
      out,
    ];
    const result = await run("npx", ["tsx", "test/bench/bench.ts", ...args], 170_000);
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    const figures = JSON.parse(fs.readFileSync(out, "utf8"));
    expect(figures.seeding).toMatchObject({ contacts: 3000, bookings: 600 });
    expect(Object.keys(figures.results)).toHaveLength(20);
    expect(figures.coldStart.api.startup.median).toBeGreaterThan(0);
    expect(figures.coldStart.api.bundle.gzip).toBeGreaterThan(figures.coldStart.floor.bundle.gzip);
    expect(figures.ratios.floorLoggedVsBare).toBeGreaterThan(0);
    for (const [name, r] of Object.entries<{ requests: number; errors: number; non2xx: number }>(figures.results)) {
      expect(r.requests, name).toBeGreaterThan(0);
      expect({ name, errors: r.errors, non2xx: r.non2xx }).toEqual({ name, errors: 0, non2xx: 0 });
    }
    expect(figures.ratios.deepPageVsPage1P50).toBeGreaterThan(0);
    expect(figures.ratios.heavyVsEmptyAvailabilityP50).toBeGreaterThan(0);
    expect(figures.ratios.deepIncidentsVsPage1P50).toBeGreaterThan(0);
    expect(result.stdout).toContain("× /health");
    expect(result.stdout).toContain("× floor");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
