// `npm run bench` is not a test, but it must keep working: a miniature run
// (small data, 0.1 s a run, one floor/case pair each) through the real script,
// checked for every case (its CPU per request and its shape floor's, the
// spread of its pairs), zero errors and the p50 ratios. No ratio is held to a
// bound: the machine may be loaded.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { oneHeavyAtATime, run } from "./harness";

it("npm run bench runs end to end and writes every figure", { timeout: 420_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-bench-smoke-"));
  try {
    const out = path.join(dir, "results.json");
    const args = [
      "--seconds",
      "0.1",
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
    // At most 290 s of its own, after the wait for load.e2e, if it runs.
    const result = await oneHeavyAtATime(() => run("npx", ["tsx", "test/bench/bench.ts", ...args], 290_000));
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    const figures = JSON.parse(fs.readFileSync(out, "utf8"));
    expect(figures.seeding).toMatchObject({ contacts: 3000, bookings: 600 });
    // 27 cases and 12 floor rows.
    expect(Object.keys(figures.results)).toHaveLength(39);
    expect(figures.pairs).toBe(1);
    expect(figures.commit).toMatch(/^[0-9a-f]+(-dirty)?$/);
    expect(figures.coldStart.api.startup.median).toBeGreaterThan(0);
    expect(figures.coldStart.api.bundle.gzip).toBeGreaterThan(figures.coldStart.floor.bundle.gzip);
    expect(figures.ratios.floorLoggedVsBare).toBeGreaterThan(0);
    interface Entry {
      kind: string;
      requests: number;
      reqPerSec: number;
      errors: number;
      non2xx: number;
      cpuMsPerRequest: number;
      floorCpuMsPerRequest: number;
      floor: string;
      cpuVsFloor: number;
      spread?: [number, number];
      pass?: boolean;
    }
    const results = Object.entries<Entry>(figures.results);
    for (const [name, r] of results) {
      expect(r.requests, name).toBeGreaterThan(0);
      expect(r.reqPerSec, name).toBeGreaterThan(0);
      expect(r.cpuMsPerRequest, name).toBeGreaterThan(0);
      expect(r.floorCpuMsPerRequest, name).toBeGreaterThan(0);
      expect(Number.isFinite(r.cpuVsFloor), name).toBe(true);
      expect({ name, errors: r.errors, non2xx: r.non2xx }).toEqual({ name, errors: 0, non2xx: 0 });
      expect(figures.results[r.floor] ?? figures.floorCpu[r.floor], `${name}'s floor`).toBeDefined();
    }
    expect(results.filter(([, r]) => r.kind === "write").map(([name]) => name)).toEqual([
      "floor: one D1 write, logged",
      "floor: a write and its event, logged",
      "floor: a contact and its event, logged",
      "floor: a booking that fits and its event, logged",
      "floor: a booking of a free technician and its event, logged",
      "POST /leads",
      "POST /contacts",
      "create-incident, 20k bookings",
      "reschedule, 20k bookings",
      "hold-slot",
      "create-incident on a hold",
      "create-incident, 20 technicians",
    ]);
    expect(figures.floorCpu["floor: one D1 read, logged"].cpuMsPerRequest).toBeGreaterThan(0);
    expect(figures.ratios.deepPageVsPage1P50).toBeGreaterThan(0);
    expect(figures.ratios.heavyVsEmptyAvailabilityP50).toBeGreaterThan(0);
    expect(figures.ratios.deepIncidentsVsPage1P50).toBeGreaterThan(0);
    expect(result.stdout).toContain("CPU × floor");
    // Every case against its shape floor: a floor worker's, or the same operation over HTTP.
    const shapes = Object.fromEntries(results.filter(([, r]) => r.spread).map(([name, r]) => [name, r.floor]));
    expect(Object.keys(shapes)).toHaveLength(27);
    expect(shapes).toMatchObject({
      "create-incident, 20k bookings": "floor: a booking that fits and its event, logged",
      "GET /incidents page 1": "floor: a page of 50 incidents, logged",
      "is-booking-available over MCP": "is-booking-available, 20k bookings",
      "GET /incidents/{id}, agent key bound to its caller": "GET /incidents/{id}",
      "GET /board, 20 technicians": "floor: a day's visits and holds, logged",
    });
    for (const [name, r] of results.filter(([, r]) => r.spread))
      expect(r.spread![0], name).toBeLessThanOrEqual(r.spread![1]);
    expect(result.stdout).toMatch(/every case against its shape floor .*: \d+ of 27 pass: /);
    expect(result.stdout).toContain("× /health"); // the RECORDED comparison
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
