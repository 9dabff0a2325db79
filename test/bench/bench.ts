// `npm run bench [-- --seconds N] [-- --config other/wrangler.toml]`: a
// benchmark, not a test. Seeds a fresh local state folder (one org with
// 100,000 contacts and 20,000 bookings over a year, one empty org), starts
// `wrangler dev` on 127.0.0.1 with quiet logging, and measures every endpoint
// and /health with autocannon for N seconds each (default 10). Prints a table
// (req/s, p50, p99, errors) with each endpoint's throughput as a ratio of
// /health's, and three p50 ratios: a contacts page 90,000 rows deep and an
// incidents page about 19,800 deep against their page 1, and availability of
// the 20,000-booking org against the empty one.
// Then the webhooks (docs/webhooks.md): POST /leads twice more, back to back,
// without and then with an endpoint subscribed to lead.created (the write
// also sends to the delivery queue, and the consumer delivers beside the
// load), and their ratio; and delivery to a local receiver (node:http on 127.0.0.1, every
// signature verified with `standardwebhooks`): --deliveries N writes (default
// 30 per second of --seconds, at most 300), then events/s and p50/p99 from
// each event's timestamp (its commit) to its receipt. The write cases are also
// printed against the figures recorded before events existed (RECORDED below).
// First the cold start and size: startup CPU (`wrangler check startup`, median
// of --startup-runs, default 5) and the bundle as `wrangler deploy` would
// upload it, raw and gzip, beside the same figures of the floor worker
// (test/bench/floor: one indexed D1 read). The floor is also served beside the
// API, with and without one JSON log line per request, and every read is
// printed as a ratio of the logged floor (the API logs one line a request).
// Writes the same figures to .bench/results.json (or --out FILE). `--config` serves another
// checkout (e.g. a git worktree of an older commit) against the same data.
// The rate limit is lifted for the run (see below); all else is wrangler.toml.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import autocannon, { type Result } from "autocannon";
import { Webhook } from "standardwebhooks";
import { candidateSlots } from "../../src/scheduling/slots";
import {
  admin,
  applyMigrations,
  configWithRateLimit,
  DevServer,
  d1Execute,
  freePort,
  jsonLine,
  ROOT,
} from "../e2e/harness";
import { credentialsOf } from "../support/http";
import { DAY } from "../support/time";
import { bundleSize, GZIP_BUDGET_BYTES, startupMs } from "./coldstart";
import { BENCH_SCHEDULE, type BenchOrg, seed } from "./seed";

const { values: options } = parseArgs({
  options: {
    seconds: { type: "string", default: "10" },
    connections: { type: "string", default: "10" },
    contacts: { type: "string", default: "100000" },
    bookings: { type: "string", default: "20000" },
    depth: { type: "string", default: "90000" },
    deliveries: { type: "string" },
    "startup-runs": { type: "string", default: "5" },
    config: { type: "string" },
    out: { type: "string", default: path.join(ROOT, ".bench", "results.json") },
  },
});
const SECONDS = Number(options.seconds);
const CONNECTIONS = Number(options.connections);
const DEPTH = Number(options.depth);
const PAGE = 50;
const DELIVERIES = options.deliveries ? Number(options.deliveries) : Math.min(300, 30 * SECONDS);
/** How long deliveries may take to arrive before the run gives up on them (a bound, not a measurement). */
const DELIVERY_WAIT_MS = 60_000;

/**
 * Write throughput as recorded before events and webhooks existed, as a share
 * of /health's in the same run (absolute req/s depend on the machine's load):
 * the runs of commit 8a11ca6 (/health 429 req/s) and of commit 118d716
 * (/health 416 req/s); their write-up is in docs/performance.md's history in git.
 */
const RECORDED: Record<string, { share: number; p50: number; health: number; source: string }> = {
  "POST /leads": { share: 0.39, p50: 57, health: 429, source: "2026-11-22, commit 8a11ca6" },
  "POST /contacts": { share: 0.38, p50: 58, health: 429, source: "2026-11-22, commit 8a11ca6" },
  "create-incident, 20k bookings": { share: 0.27, p50: 76, health: 416, source: "2026-11-23, commit 118d716" },
  "reschedule, 20k bookings": { share: 0.2, p50: 119, health: 416, source: "2026-11-23, commit 118d716" },
};

interface Case {
  name: string;
  org: BenchOrg | null;
  method?: "GET" | "POST";
  path: string;
  /** A body per request (a new one each time, so writes do not all hit one slot). */
  body?: () => unknown;
  /** Or a path and body per request (a write to a different resource each time). */
  next?: () => { path: string; body: unknown };
  /** Served by the floor worker instead of the API. */
  floor?: boolean;
}

const FLOOR_DIR = path.join(ROOT, "test/bench/floor");

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

interface Receipt {
  id: string;
  /** Date.now() when the whole request had arrived. */
  at: number;
  /** The event's own timestamp (ms). */
  timestamp: number;
}

/** A webhook receiver on 127.0.0.1: verifies each request with its path's secret, answers 204, keeps the first receipt of each event id. */
async function startReceiver() {
  const verifiers = new Map<string, Webhook>();
  const receipts = new Map<string, Map<string, Receipt>>();
  let duplicates = 0;
  let refused = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const at = Date.now();
      const body = Buffer.concat(chunks).toString("utf8");
      const verifier = verifiers.get(req.url ?? "");
      try {
        if (!verifier) throw new Error(`no endpoint at ${req.url}`);
        const event = verifier.verify(body, req.headers as Record<string, string>) as { id: string; timestamp: string };
        if (event.id !== req.headers["webhook-id"]) throw new Error("webhook-id is not the event's id");
        const seen = receipts.get(req.url!)!;
        if (seen.has(event.id)) duplicates++;
        else seen.set(event.id, { id: event.id, at, timestamp: Date.parse(event.timestamp) });
        res.writeHead(204).end();
      } catch (error) {
        refused++;
        console.error(`receiver: refused a delivery to ${req.url}: ${String(error)}`);
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: (endpoint: string) => `http://127.0.0.1:${port}${endpoint}`,
    register(endpoint: string, secret: string) {
      verifiers.set(endpoint, new Webhook(secret));
      receipts.set(endpoint, new Map());
    },
    received: (endpoint: string) => [...(receipts.get(endpoint)?.values() ?? [])],
    counts: () => ({ duplicates, refused }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** `webhook add` through the admin CLI, as an operator runs it; the receiver learns the secret. */
async function addEndpoint(stateDir: string, receiver: Receiver, org: BenchOrg, endpoint: string) {
  const added = jsonLine<{ endpointId: string; secret: string }>(
    await admin(stateDir, [
      "webhook",
      "add",
      "--org",
      org.orgId,
      "--url",
      receiver.url(endpoint),
      "--events",
      "lead.created",
    ]),
    "webhook add",
  );
  receiver.register(endpoint, added.secret);
  return added.endpointId;
}

/**
 * Waits until `endpoint` has received `count` distinct events and then none
 * for 500 ms (a load's last writes may answer after autocannon's count), or
 * until `DELIVERY_WAIT_MS` has passed.
 */
async function untilReceived(receiver: Receiver, endpoint: string, count: number) {
  const deadline = Date.now() + DELIVERY_WAIT_MS;
  let seen = -1;
  while (Date.now() < deadline) {
    const now = receiver.received(endpoint).length;
    if (now >= count && now === seen) break;
    seen = now;
    await sleep(now >= count ? 500 : 50);
  }
  return receiver.received(endpoint);
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/** `count` lead writes for `org`, `connections` at a time; returns when they were started and how many answered 200. */
async function writeLeads(baseUrl: string, org: BenchOrg, count: number, connections: number) {
  let next = 0;
  let ok = 0;
  const started = Date.now();
  const worker = async () => {
    while (next < count) {
      next++;
      const response = await fetch(`${baseUrl}/api/v1/leads`, {
        method: "POST",
        headers: headersOf(org, true),
        body: JSON.stringify({ firstName: "Delivered", lastName: "Lead" }),
      });
      await response.arrayBuffer();
      if (response.status === 200) ok++;
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  return { started, ok, writeSeconds: (Date.now() - started) / 1000 };
}

type Seeded = Awaited<ReturnType<typeof seed>>;
type Figures = { reqPerSec: number; p50: number; p99: number; errors: number; non2xx: number; requests: number };

const figuresOf = (result: Result): Figures => ({
  reqPerSec: round(result.requests.average, 1),
  p50: result.latency.p50,
  p99: result.latency.p99,
  errors: result.errors + result.timeouts,
  non2xx: result.non2xx,
  requests: result.requests.total,
});

/**
 * POST /leads without and then with an endpoint subscribed (back to back, so
 * that both meet the same machine), then delivery throughput and latency to a
 * local receiver. `ok` is false when a write failed, a delivery did not
 * arrive within the bound, or a signature did not verify.
 */
async function webhookCases(baseUrl: string, stateDir: string, seeded: Seeded) {
  const receiver = await startReceiver();
  try {
    // 1. The write path's own cost: the same case with one endpoint subscribed to lead.created.
    const leads = (name: string): Case => ({
      name,
      org: seeded.heavy,
      path: "/api/v1/leads",
      body: () => ({ firstName: "Bench", lastName: "Lead", email: "lead@example.com" }),
    });
    const without = figuresOf(await measure(baseUrl, leads("POST /leads, no endpoint")));
    await addEndpoint(stateDir, receiver, seeded.heavy, "/subscribed");
    const subscribed = figuresOf(await measure(baseUrl, leads("POST /leads, 1 endpoint subscribed")));
    const ratio = round(subscribed.reqPerSec / without.reqPerSec);
    console.log(
      `POST /leads, back to back: ${without.reqPerSec} req/s (p50 ${without.p50} ms, p99 ${without.p99} ms) without an endpoint; ${subscribed.reqPerSec} req/s (p50 ${subscribed.p50} ms, p99 ${subscribed.p99} ms) with one subscribed to lead.created (the queue send, and its deliveries running beside): ratio ${ratio}`,
    );
    // Its deliveries drain before the next measurement (the 20 warm-up writes were delivered too).
    const backlog = subscribed.requests - subscribed.non2xx + 20;
    let started = performance.now();
    const drained = (await untilReceived(receiver, "/subscribed", backlog)).length;
    const drainSeconds = seconds(started);
    console.log(
      `its events (at least ${backlog}): ${drained} delivered by ${drainSeconds} s after the load ended (bound ${DELIVERY_WAIT_MS / 1000} s)`,
    );

    // 2. Delivery: N writes of the empty org, each delivered to the receiver and verified.
    await addEndpoint(stateDir, receiver, seeded.empty, "/delivery");
    started = performance.now();
    const writes = await writeLeads(baseUrl, seeded.empty, DELIVERIES, CONNECTIONS);
    const received = await untilReceived(receiver, "/delivery", writes.ok);
    const waitedSeconds = seconds(started);
    const latencies = received.map((r) => r.at - r.timestamp).sort((a, b) => a - b);
    const lastAt = Math.max(...received.map((r) => r.at));
    const delivery = {
      writes: DELIVERIES,
      written: writes.ok,
      writesPerSec: round(writes.ok / writes.writeSeconds, 1),
      delivered: received.length,
      eventsPerSec: round(received.length / ((lastAt - writes.started) / 1000), 1),
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: latencies.at(-1) ?? Number.NaN,
      seconds: waitedSeconds,
      ...receiver.counts(),
    };
    console.log(
      `delivery to a local receiver: ${delivery.written} writes at ${delivery.writesPerSec}/s (${CONNECTIONS} connections); ${delivery.delivered} events delivered and verified at ${delivery.eventsPerSec} events/s (first write to last receipt); commit (event timestamp) → receipt p50 ${delivery.p50} ms, p99 ${delivery.p99} ms, max ${delivery.max} ms; ${delivery.duplicates} duplicate(s), ${delivery.refused} refused`,
    );
    const ok =
      without.errors + without.non2xx === 0 &&
      subscribed.errors === 0 &&
      subscribed.non2xx === 0 &&
      drained >= backlog &&
      writes.ok === DELIVERIES &&
      delivery.delivered === writes.ok &&
      delivery.refused === 0;
    return {
      ok,
      figures: {
        subscribedLeads: {
          ...subscribed,
          without,
          ratio,
          backlog,
          drained,
          drainSeconds,
        },
        delivery,
      },
    };
  } finally {
    await receiver.close();
  }
}

const kib = (bytes: number) => `${round(bytes / 1024, 1)} KiB`;

/** Startup CPU and bundle size of the API (the checkout served) and of the floor worker. */
async function coldStart(apiDir: string) {
  const runs = Number(options["startup-runs"]);
  const api = { startup: await startupMs(apiDir, runs), bundle: await bundleSize(apiDir) };
  const floor = { startup: await startupMs(FLOOR_DIR, runs), bundle: await bundleSize(FLOOR_DIR) };
  console.log(
    `startup CPU (wrangler check startup, median of ${runs}): ${api.startup.median} ms (runs: ${api.startup.runs.join(", ")}); the floor worker ${floor.startup.median} ms`,
  );
  console.log(
    `bundle as wrangler deploy uploads it: ${api.bundle.raw} bytes (${kib(api.bundle.raw)}), gzip ${api.bundle.gzip} bytes (${kib(api.bundle.gzip)}; budget ${GZIP_BUDGET_BYTES}); the floor worker ${floor.bundle.gzip} bytes gzip`,
  );
  return { api, floor, gzipBudget: GZIP_BUDGET_BYTES };
}

/** The floor worker under its own `wrangler dev`, with the one account it reads. */
async function startFloor(dir: string): Promise<DevServer> {
  const config = path.join(FLOOR_DIR, "wrangler.toml");
  await d1Execute(
    dir,
    "CREATE TABLE accounts (org_id TEXT NOT NULL, id TEXT NOT NULL, name TEXT NOT NULL, city TEXT, PRIMARY KEY (org_id, id)); INSERT INTO accounts VALUES ('org_floor', 'acct_floor', 'Floor Ltd', 'Leeds');",
    config,
  );
  return DevServer.start(dir, await freePort(), ["--config", config]);
}

async function main() {
  const stateDir = mkdtempSync(path.join(tmpdir(), "fs-bench-"));
  const floorDir = mkdtempSync(path.join(tmpdir(), "fs-bench-floor-"));
  let server: DevServer | undefined;
  let floor: DevServer | undefined;
  try {
    const cold = await coldStart(options.config ? path.dirname(path.resolve(options.config)) : ROOT);
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

    // The served config lives in the state folder, where wrangler finds no .dev.vars: name the checkout's
    // (the local webhook key), so that the queue consumer delivers.
    const devVars = path.join(options.config ? path.dirname(path.resolve(options.config)) : ROOT, ".dev.vars");
    server = await DevServer.start(stateDir, await freePort(), [
      "--config",
      config,
      ...(existsSync(devVars) ? ["--env-file", devVars] : []),
    ]);
    floor = await startFloor(floorDir);
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
      { name: "floor: one D1 read", org: null, path: "/?id=acct_floor", floor: true },
      { name: "floor: one D1 read, logged", org: null, path: "/logged?id=acct_floor", floor: true },
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
        name: "available-appointments, 20 technicians × 3 services × 5k visits",
        org: seeded.fleet,
        path: "/api/v1/ai-agent/available-appointments",
        body: () => ({ dateTime: tomorrow, limit: 10 }),
      },
      {
        name: "available-appointments, a 180-minute service, 20 technicians",
        org: seeded.fleet,
        path: "/api/v1/ai-agent/available-appointments",
        body: () => ({
          dateTime: tomorrow,
          limit: 10,
          serviceId: seeded.fleet.termite,
          postalCode: seeded.fleet.postalCode,
        }),
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
      const result = await measure(c.floor ? floor.baseUrl : server.baseUrl, c);
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
    // The API writes one log line a request: its figures are compared with the logged floor.
    const floorLogged = results["floor: one D1 read, logged"]!;
    const floorBare = results["floor: one D1 read"]!;
    const table = Object.entries(results).map(([name, r]) => ({
      endpoint: name,
      "req/s": r.reqPerSec,
      "× /health": round(r.reqPerSec / health.reqPerSec),
      "× floor": round(r.reqPerSec / floorLogged.reqPerSec),
      "p50 ms": r.p50,
      "p99 ms": r.p99,
      errors: r.errors,
      "non-2xx": r.non2xx,
    }));
    console.table(table);
    const logLine = round(floorLogged.reqPerSec / floorBare.reqPerSec);
    console.log(
      `the floor: ${floorBare.reqPerSec} req/s without a log line, ${floorLogged.reqPerSec} with one (× ${logLine}). Under wrangler dev each console.log travels from workerd to the wrangler process, a local cost that Workers Logs does not add on Cloudflare; "× floor" compares every case with the logged floor, as the API logs one line a request.`,
    );
    const p50 = (name: string) => results[name]!.p50;
    const ratios = {
      deepPageVsPage1P50: round(p50(`GET /contacts ${DEPTH} deep`) / p50("GET /contacts page 1")),
      deepIncidentsVsPage1P50: round(p50(`GET /incidents ${incidentDepth} deep`) / p50("GET /incidents page 1")),
      heavyVsEmptyAvailabilityP50: round(
        p50("available-appointments, 20k bookings") / p50("available-appointments, empty org"),
      ),
    };
    // Slots with technicians against slots today (crew mode, 20k bookings), in throughput, and each against the floor.
    const rate = (name: string) => results[name]!.reqPerSec;
    const today = "available-appointments, 20k bookings";
    for (const name of [
      "available-appointments, 20 technicians × 3 services × 5k visits",
      "available-appointments, a 180-minute service, 20 technicians",
    ])
      console.log(
        `${name}: ${round(rate(name) / rate(today))} × slots today (req/s), ${round(rate(name) / floorLogged.reqPerSec)} × floor; slots today ${round(rate(today) / floorLogged.reqPerSec)} × floor`,
      );
    console.log(`p50 ratio, contacts page ${DEPTH} rows deep / page 1: ${ratios.deepPageVsPage1P50}`);
    console.log(`p50 ratio, incidents page ${incidentDepth} rows deep / page 1: ${ratios.deepIncidentsVsPage1P50}`);
    console.log(
      `p50 ratio, available-appointments with 20,000 bookings / empty org: ${ratios.heavyVsEmptyAvailabilityP50}`,
    );

    // The write cases against the figures recorded before events existed (RECORDED).
    const recorded = Object.fromEntries(
      Object.entries(RECORDED).map(([name, then]) => {
        const now = results[name]!;
        const share = round(now.reqPerSec / health.reqPerSec);
        return [
          name,
          {
            share,
            recordedShare: then.share,
            vsRecorded: round(share / then.share),
            p50: now.p50,
            recordedP50: then.p50,
            source: then.source,
          },
        ];
      }),
    );
    console.log("a write with its event vs recorded (RECORDED; throughput as a share of /health's in each run):");
    for (const [name, r] of Object.entries(recorded))
      console.log(
        `  ${name}: ${results[name]!.reqPerSec} req/s = ${r.share} × /health, p50 ${r.p50} ms; vs recorded ${r.recordedShare} × /health (${round(RECORDED[name]!.share * RECORDED[name]!.health, 0)} req/s), p50 ${r.recordedP50} ms (${r.source}): ratio ${r.vsRecorded}`,
      );

    const webhooks = await webhookCases(server.baseUrl, stateDir, seeded);
    if (!webhooks.ok) process.exitCode = 1;

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
      coldStart: cold,
      results,
      ratios: { ...ratios, floorLoggedVsBare: logLine },
      recorded,
      webhooks: webhooks.figures,
    };
    writeFileSync(output, `${JSON.stringify(figures, null, 2)}\n`);
    console.log(`figures written to ${path.relative(process.cwd(), output)}`);
    if (Object.values(results).some((r) => r.errors > 0 || r.non2xx > 0)) process.exitCode = 1;
  } finally {
    await Promise.all([server?.stop(), floor?.stop()]);
    for (const dir of [stateDir, floorDir]) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
