// Cold start and size, for `npm run bench`: the startup CPU of a worker by
// `wrangler check startup` (a CPU profile of its startup, taken offline: the
// non-idle samples summed, median of `runs`), and its bundle as `wrangler
// deploy` would upload it (raw and gzip bytes, gzip as wrangler reports it).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { run } from "../e2e/harness";

/**
 * The cold-start bundle budget (docs/performance.md; test/e2e/deploy.e2e.test.ts
 * holds the worker to it): 155 KiB gzip. Key roles, plans and the board took
 * the bundle to 170 KB; serving the board's files, the OpenAPI document and its
 * page as static assets (src/assets/) took 12.6 KB of that off again.
 */
export const GZIP_BUDGET_BYTES = 158_720;

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string } }[];
  samples: number[];
  timeDeltas: number[];
}

/** Milliseconds of CPU in a profile: every sample but the idle ones. */
export function cpuMs(profile: CpuProfile): number {
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === "(idle)").map((n) => n.id));
  const micros = profile.samples.reduce((sum, id, i) => (idle.has(id) ? sum : sum + profile.timeDeltas[i]!), 0);
  return micros / 1000;
}

async function inTempDir<T>(use: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(path.join(tmpdir(), "fs-coldstart-"));
  try {
    return await use(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The middle figure, or the mean of the two middles (the bench's one median: bench.ts and js.ts use it too). */
export function median(figures: number[]): number {
  const sorted = [...figures].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  return sorted.length % 2 ? sorted[Math.floor(middle)]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * Startup CPU of each worker whose wrangler.toml is in `cwds`: each run's
 * figure, and their median. The workers take turns, run by run, so that a
 * shared machine's load falls on each alike.
 */
export function startupMs(cwds: string[], runs: number): Promise<{ median: number; runs: number[] }[]> {
  return inTempDir(async (dir) => {
    const figures = cwds.map((): number[] => []);
    for (let i = 0; i < runs; i++)
      for (const [w, cwd] of cwds.entries()) {
        const outfile = path.join(dir, `startup-${w}-${i}.cpuprofile`);
        const args = ["wrangler", "check", "startup", "--cwd", cwd, "--outfile", outfile];
        const result = await run("npx", args, 120_000);
        if (result.code !== 0) throw new Error(`wrangler check startup failed:\n${result.stdout}\n${result.stderr}`);
        figures[w]!.push(+cpuMs(JSON.parse(readFileSync(outfile, "utf8")) as CpuProfile).toFixed(1));
      }
    return figures.map((each) => ({ median: median(each), runs: each }));
  });
}

/** The bundle `wrangler deploy` would upload for the wrangler.toml in `cwd`. */
export function bundleSize(cwd: string): Promise<{ raw: number; gzip: number }> {
  return inTempDir(async (dir) => {
    const result = await run("npx", ["wrangler", "deploy", "--dry-run", "--cwd", cwd, "--outdir", dir], 120_000);
    if (result.code !== 0) throw new Error(`wrangler deploy --dry-run failed:\n${result.stdout}\n${result.stderr}`);
    const bundle = readFileSync(path.join(dir, "index.js"));
    return { raw: bundle.length, gzip: gzipSync(bundle).length };
  });
}
