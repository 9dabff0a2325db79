// `npm run bench` is not a test, but it must keep working: a miniature run
// (small data, 0.4 s a run, one floor/case pair each) through the real script,
// checked for every case (its CPU per request and its floor's), zero errors
// and the p50 ratios. No ratio is held to a bound: the machine may be loaded.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { run } from "./harness";

it("npm run bench runs end to end and writes every figure", { timeout: 300_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-bench-smoke-"));
  try {
    const out = path.join(dir, "results.json");
    const args = [
      "--seconds",
      "0.4",
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
      "--pairs",
      "1",
      "--deliveries",
      "30",
      "--out",
      out,
    ];
    const result = await run("npx", ["tsx", "test/bench/bench.ts", ...args], 290_000);
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    const figures = JSON.parse(fs.readFileSync(out, "utf8"));
    expect(figures.seeding).toMatchObject({ contacts: 3000, bookings: 600 });
    // 18 cases and 6 floor rows.
    expect(Object.keys(figures.results)).toHaveLength(24);
    expect(figures.pairs).toBe(1);
    expect(figures.commit).toMatch(/^[0-9a-f]+(-dirty)?$/);
    expect(figures.coldStart.api.startup.median).toBeGreaterThan(0);
    expect(figures.coldStart.api.bundle.gzip).toBeGreaterThan(figures.coldStart.floor.bundle.gzip);
    expect(figures.ratios.floorLoggedVsBare).toBeGreaterThan(0);
    interface Entry {
      kind: string;
      requests: number;
      errors: number;
      non2xx: number;
      cpuMsPerRequest: number;
      floorCpuMsPerRequest: number;
      cpuVsFloor: number;
    }
    const results = Object.entries<Entry>(figures.results);
    for (const [name, r] of results) {
      expect(r.requests, name).toBeGreaterThan(0);
      expect(r.cpuMsPerRequest, name).toBeGreaterThan(0);
      expect(r.floorCpuMsPerRequest, name).toBeGreaterThan(0);
      expect(Number.isFinite(r.cpuVsFloor), name).toBe(true);
      expect({ name, errors: r.errors, non2xx: r.non2xx }).toEqual({ name, errors: 0, non2xx: 0 });
    }
    expect(results.filter(([, r]) => r.kind === "write").map(([name]) => name)).toEqual([
      "floor: one D1 write, logged",
      "floor: a write and its event, logged",
      "POST /leads",
      "POST /contacts",
      "create-incident, 20k bookings",
      "reschedule, 20k bookings",
    ]);
    expect(figures.floorCpu["floor: one D1 read, logged"].cpuMsPerRequest).toBeGreaterThan(0);
    expect(figures.ratios.deepPageVsPage1P50).toBeGreaterThan(0);
    expect(figures.ratios.heavyVsEmptyAvailabilityP50).toBeGreaterThan(0);
    expect(figures.ratios.deepIncidentsVsPage1P50).toBeGreaterThan(0);
    expect(result.stdout).toContain("CPU × floor");
    // The two pages are also held against the page floor, find-caller against the caller floor, the three
    // creates against the outbox floor.
    for (const shaped of [
      "GET /contacts page 1",
      "GET /incidents page 1",
      "find-caller, 100k contacts",
      "POST /leads",
      "POST /contacts",
      "create-incident, 20k bookings",
    ])
      expect(figures.results[shaped].cpuVsShapedFloor, shaped).toBeGreaterThan(0);
    expect(result.stdout).toContain("creates against the outbox floor");
    expect(result.stdout).toContain("find-caller against the caller floor");
    expect(result.stdout).toContain("× /health"); // the RECORDED comparison
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
