// `npm run bench [-- --seconds N] [-- --config other/wrangler.toml]`: a
// benchmark, not a test. Seeds a fresh local state folder (one org with
// 100,000 contacts and 20,000 bookings over a year, one empty org), starts
// `wrangler dev` on 127.0.0.1 with quiet logging, and measures every endpoint
// and /health with autocannon for N seconds each (default 10). Prints a table
// (req/s, p50, p99, errors) with each endpoint's throughput as a ratio of
// /health's, and three p50 ratios: a contacts page 90,000 rows deep and an
// incidents page about 19,800 deep against their page 1, and availability of
// the 20,000-booking org against the empty one.
// Writes the same figures to .bench/results.json (or --out FILE). `--config` serves another
// checkout (e.g. a git worktree of an older commit) against the same data.
// The rate limit is lifted for the run (see below); all else is wrangler.toml.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import autocannon, { type Result } from "autocannon";
import { candidateSlots } from "../../src/scheduling/slots";
import { applyMigrations, configWithRateLimit, DevServer, freePort, ROOT } from "../e2e/harness";
import { credentialsOf } from "../support/http";
import { DAY } from "../support/time";
import { BENCH_SCHEDULE, type BenchOrg, seed } from "./seed";

const { values: options } = parseArgs({
  options: {
    seconds: { type: "string", default: "10" },
    connections: { type: "string", default: "10" },
    contacts: { type: "string", default: "100000" },
    bookings: { type: "string", default: "20000" },
    depth: { type: "string", default: "90000" },
    config: { type: "string" },
    out: { type: "string", default: path.join(ROOT, ".bench", "results.json") },
  },
});
const SECONDS = Number(options.seconds);
const CONNECTIONS = Number(options.connections);
const DEPTH = Number(options.depth);
const PAGE = 50;

interface Case {
  name: string;
  org: BenchOrg | null;
  method?: "GET" | "POST";
  path: string;
  /** A body per request (a new one each time, so writes do not all hit one slot). */
  body?: () => unknown;
  /** Or a path and body per request (a write to a different resource each time). */
  next?: () => { path: string; body: unknown };
}

const headersOf = (org: BenchOrg | null, json: boolean): Record<string, string> => ({
  ...(org ? credentialsOf(org) : {}),
  ...(json ? { "Content-Type": "application/json" } : {}),
});

async function measure(baseUrl: string, c: Case): Promise<Result> {
  const body = c.body;
  const next = c.next ?? (body ? () => ({ path: c.path, body: body() }) : undefined);
  const method = c.method ?? (next ? "POST" : "GET");
  const headers = headersOf(c.org, next !== undefined);
  // Warm-up: the first requests compile code paths and fill the isolate's caches.
  for (let i = 0; i < 20; i++) {
    const request = next?.();
    const response = await fetch(baseUrl + (request?.path ?? c.path), {
      method,
      headers,
      body: request ? JSON.stringify(request.body) : undefined,
    });
    if (!response.ok) throw new Error(`${c.name}: warm-up answered ${response.status}: ${await response.text()}`);
  }
  return autocannon({
    url: baseUrl,
    connections: CONNECTIONS,
    duration: SECONDS,
    requests: [
      {
        method,
        path: c.path,
        headers,
        ...(next
          ? {
              setupRequest: (request) => {
                const { path, body } = next();
                return { ...request, path, body: JSON.stringify(body) };
              },
            }
          : {}),
      },
    ],
  });
}

/** The cursor of the `list` page starting `depth` rows in, reached by paging through the API. */
async function cursorAt(baseUrl: string, org: BenchOrg, list: string, depth: number): Promise<string> {
  let cursor: string | null = null;
  for (let skipped = 0; skipped < depth; skipped += 200) {
    const query: string = cursor ? `&cursor=${cursor}` : "";
    const response = await fetch(`${baseUrl}${list}?limit=200${query}`, { headers: headersOf(org, false) });
    const page = (await response.json()) as { data: unknown[]; nextCursor: string | null };
    if (!page.nextCursor)
      throw new Error(`only ${skipped + page.data.length} rows of ${list}: cannot page ${depth} deep`);
    cursor = page.nextCursor;
  }
  return cursor as string;
}

const seconds = (since: number) => +((performance.now() - since) / 1000).toFixed(2);
const round = (n: number, digits = 2) => +n.toFixed(digits);

async function main() {
  const stateDir = mkdtempSync(path.join(tmpdir(), "fs-bench-"));
  let server: DevServer | undefined;
  try {
    let started = performance.now();
    // The per-org rate limit (1,200 a minute) would cap every case: the served
    // configuration is wrangler.toml (its migrations and code) with a limit no benchmark reaches.
    const config = path.join(stateDir, "wrangler.bench.toml");
    writeFileSync(
      config,
      configWithRateLimit(100_000_000, options.config ? path.dirname(path.resolve(options.config)) : ROOT).text,
    );
    await applyMigrations(stateDir, config);
    const migrateSeconds = seconds(started);
    started = performance.now();
    const seeded = await seed(stateDir, Number(options.contacts), Number(options.bookings));
    const seedSeconds = seconds(started);
    console.log(
      `seeded ${seeded.contacts} contacts (${round(seeded.contactsSeconds)} s) and ${seeded.bookings} bookings (${round(seeded.bookingsSeconds)} s); migrations ${migrateSeconds} s, seeding in all ${seedSeconds} s`,
    );

    server = await DevServer.start(stateDir, await freePort(), ["--config", config]);
    await server.waitUntilHealthy();
    const { heavy, empty } = seeded;
    started = performance.now();
    const deepCursor = await cursorAt(server.baseUrl, heavy, "/api/v1/contacts", DEPTH);
    // The incidents page as deep as the seeded bookings allow, in whole pages of 200.
    const incidentDepth = Math.floor((seeded.bookings - PAGE - 1) / 200) * 200;
    const deepIncidents = await cursorAt(server.baseUrl, heavy, "/api/v1/incidents", incidentDepth);
    console.log(
      `paged ${DEPTH} contacts and ${incidentDepth} incidents deep in ${seconds(started)} s; measuring ${SECONDS} s per case, ${CONNECTIONS} connections`,
    );

    const now = Date.now();
    const tomorrow = new Date(now + DAY).toISOString();
    const schedule = { ...BENCH_SCHEDULE, closedDates: [] };
    const [checked] = candidateSlots(schedule, now + 2 * DAY, now + 9 * DAY);
    // create-incident walks the next half-year's slots in turn (each has room for 4 more bookings).
    const future = [...candidateSlots(schedule, now + DAY, now + 180 * DAY)];
    let booking = 0;
    // Each reschedule moves the next seeded booking to its other slot (and back on its next turn).
    let move = 0;
    const at = seeded.moves.map((m) => m.from);
    const cases: Case[] = [
      { name: "GET /health", org: null, path: "/health" },
      {
        name: "POST /leads",
        org: heavy,
        path: "/api/v1/leads",
        body: () => ({ firstName: "Bench", lastName: "Lead", email: "lead@example.com" }),
      },
      {
        name: "POST /contacts",
        org: heavy,
        path: "/api/v1/contacts",
        body: () => ({ firstName: "Bench", lastName: "Contact", accountId: heavy.accountId }),
      },
      { name: "GET /contacts page 1", org: heavy, path: `/api/v1/contacts?limit=${PAGE}` },
      { name: `GET /contacts ${DEPTH} deep`, org: heavy, path: `/api/v1/contacts?limit=${PAGE}&cursor=${deepCursor}` },
      {
        name: "GET /contacts?accountId",
        org: heavy,
        path: `/api/v1/contacts?limit=${PAGE}&accountId=${heavy.accountId}`,
      },
      { name: "GET /accounts/{id}", org: heavy, path: `/api/v1/accounts/${heavy.accountId}` },
      {
        name: "find-caller, 100k contacts",
        org: heavy,
        path: "/api/v1/ai-agent/find-caller",
        body: () => ({ phone: seeded.caller }),
      },
      { name: "GET /incidents/{id}", org: heavy, path: `/api/v1/incidents/${seeded.moves[0]!.id}` },
      { name: "GET /incidents page 1", org: heavy, path: `/api/v1/incidents?limit=${PAGE}` },
      {
        name: `GET /incidents ${incidentDepth} deep`,
        org: heavy,
        path: `/api/v1/incidents?limit=${PAGE}&cursor=${deepIncidents}`,
      },
      {
        name: "available-appointments, empty org",
        org: empty,
        path: "/api/v1/ai-agent/available-appointments",
        body: () => ({ dateTime: tomorrow, limit: 10 }),
      },
      {
        name: "available-appointments, 20k bookings",
        org: heavy,
        path: "/api/v1/ai-agent/available-appointments",
        body: () => ({ dateTime: tomorrow, limit: 10 }),
      },
      {
        name: "is-booking-available, 20k bookings",
        org: heavy,
        path: "/api/v1/ai-agent/is-booking-available",
        body: () => ({ dateTime: new Date(checked!.start).toISOString() }),
      },
      {
        name: "create-incident, 20k bookings",
        org: heavy,
        path: "/api/v1/ai-agent/create-incident",
        body: () => ({
          dateTime: new Date(future[booking++ % future.length]!.start).toISOString(),
          clientName: "Bench Client",
          insectName: "Ants",
        }),
      },
      {
        name: "reschedule, 20k bookings",
        org: heavy,
        path: "/api/v1/incidents/{id}/reschedule",
        next: () => {
          const i = move++ % seeded.moves.length;
          const { id, from, to } = seeded.moves[i]!;
          at[i] = at[i] === from ? to : from;
          return { path: `/api/v1/incidents/${id}/reschedule`, body: { dateTime: new Date(at[i]).toISOString() } };
        },
      },
    ];

    const results: Record<
      string,
      { reqPerSec: number; p50: number; p99: number; errors: number; non2xx: number; requests: number }
    > = {};
    for (const c of cases) {
      const result = await measure(server.baseUrl, c);
      results[c.name] = {
        reqPerSec: round(result.requests.average, 1),
        p50: result.latency.p50,
        p99: result.latency.p99,
        errors: result.errors + result.timeouts,
        non2xx: result.non2xx,
        requests: result.requests.total,
      };
    }

    const health = results["GET /health"]!;
    const table = Object.entries(results).map(([name, r]) => ({
      endpoint: name,
      "req/s": r.reqPerSec,
      "× /health": round(r.reqPerSec / health.reqPerSec),
      "p50 ms": r.p50,
      "p99 ms": r.p99,
      errors: r.errors,
      "non-2xx": r.non2xx,
    }));
    console.table(table);
    const p50 = (name: string) => results[name]!.p50;
    const ratios = {
      deepPageVsPage1P50: round(p50(`GET /contacts ${DEPTH} deep`) / p50("GET /contacts page 1")),
      deepIncidentsVsPage1P50: round(p50(`GET /incidents ${incidentDepth} deep`) / p50("GET /incidents page 1")),
      heavyVsEmptyAvailabilityP50: round(
        p50("available-appointments, 20k bookings") / p50("available-appointments, empty org"),
      ),
    };
    console.log(`p50 ratio, contacts page ${DEPTH} rows deep / page 1: ${ratios.deepPageVsPage1P50}`);
    console.log(`p50 ratio, incidents page ${incidentDepth} rows deep / page 1: ${ratios.deepIncidentsVsPage1P50}`);
    console.log(
      `p50 ratio, available-appointments with 20,000 bookings / empty org: ${ratios.heavyVsEmptyAvailabilityP50}`,
    );

    const output = path.resolve(options.out);
    mkdirSync(path.dirname(output), { recursive: true });
    const figures = {
      at: new Date().toISOString(),
      config: options.config ?? "wrangler.toml",
      seconds: SECONDS,
      connections: CONNECTIONS,
      seeding: {
        contacts: seeded.contacts,
        bookings: seeded.bookings,
        contactsSeconds: round(seeded.contactsSeconds),
        bookingsSeconds: round(seeded.bookingsSeconds),
        migrateSeconds,
      },
      results,
      ratios,
    };
    writeFileSync(output, `${JSON.stringify(figures, null, 2)}\n`);
    console.log(`figures written to ${path.relative(process.cwd(), output)}`);
    if (Object.values(results).some((r) => r.errors > 0 || r.non2xx > 0)) process.exitCode = 1;
  } finally {
    await server?.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

await main();
