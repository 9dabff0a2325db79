// `npm run bench:profile [-- --case slots|account|contacts|lead|incident|book|mcp|board|floor-board|…] [-- --seconds N]`:
// where a request's CPU goes inside the worker. Seeds a small org (as `npm run
// bench` does), serves it under `wrangler dev`, and records a V8 CPU profile
// of the worker through wrangler's inspector while autocannon loads one case.
// Prints the worker's JavaScript CPU per request, the share of it spent in
// each part of the request (hono's routing, auth, the D1 session, zod,
// drizzle, the scheduling engine, serialisation, the log line …, by source
// file through the bundle's source map), and the heaviest functions. Writes
// the profile (open it in Chrome's DevTools) to .bench/<case>.cpuprofile.
//
// Only JavaScript is sampled: D1's local SQLite, workerd's HTTP and the
// wrangler process show as idle here; `npm run bench` measures the whole.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { SourceMapConsumer } from "source-map";
import WebSocket from "ws";
import { candidateSlots } from "../../src/scheduling/slots";
import { dateString, localDateOf, localToInstant } from "../../src/scheduling/zone";
import { applyMigrations, configWithRateLimit, DevServer, freePort, ROOT } from "../e2e/harness";
import { credentialsOf } from "../support/http";
import { DAY } from "../support/time";
import { FLOOR_DIR, startFloor } from "./floor/start";
import { BENCH_SCHEDULE, type BenchOrg, seed } from "./seed";

const { values: options } = parseArgs({
  options: {
    case: { type: "string", default: "slots" },
    seconds: { type: "string", default: "10" },
    connections: { type: "string", default: "10" },
    contacts: { type: "string", default: "2000" },
    bookings: { type: "string", default: "300" },
    top: { type: "string", default: "30" },
  },
});

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A Chrome DevTools protocol session over wrangler's inspector (the worker's isolate). */
async function inspect(port: number) {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json`)).json()) as { webSocketDebuggerUrl: string }[];
  // The inspector proxy accepts DevTools from localhost origins only.
  const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl, { headers: { Origin: "http://127.0.0.1" } });
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  let id = 0;
  const pending = new Map<number, (result: unknown) => void>();
  socket.on("message", (data) => {
    const message = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: unknown };
    if (message.id === undefined) return;
    if (message.error) throw new Error(`inspector: ${JSON.stringify(message.error)}`);
    pending.get(message.id)?.(message.result);
  });
  return {
    send<T = unknown>(method: string, params: object = {}): Promise<T> {
      const call = ++id;
      socket.send(JSON.stringify({ id: call, method, params }));
      return new Promise((resolve) => pending.set(call, resolve as (result: unknown) => void));
    },
    close: () => socket.close(),
  };
}

/** The newest bundle wrangler dev wrote beside `config` (under .wrangler/tmp), with its source map. */
function latestBundle(config: string): { file: string; map: string } | undefined {
  const tmp = path.join(path.dirname(config), ".wrangler", "tmp");
  const bundles = readdirSync(tmp)
    .filter((d) => d.startsWith("dev-"))
    .map((d) => path.join(tmp, d, "index.js"))
    .filter((file) => {
      try {
        return statSync(`${file}.map`).isFile();
      } catch {
        return false;
      }
    })
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  return bundles[0] ? { file: bundles[0], map: `${bundles[0]}.map` } : undefined;
}

/** The part of the request a source file (relative to the checkout) belongs to. */
function partOf(source: string): string {
  const rules: [RegExp, string][] = [
    [/^node_modules\/hono\//, "hono (routing, context, response)"],
    [/^node_modules\/(drizzle-orm|src)\/|^drizzle\//, "drizzle (query building, row mapping)"],
    [/^node_modules\/zod\//, "zod"],
    [/^node_modules\/@hono\/zod-validator|^src\/http\/validate/, "validation wrapper"],
    [/^node_modules\/libphonenumber/, "libphonenumber"],
    [/^src\/middleware\/auth|^src\/db\/api-keys|^src\/lib\/(hash|api-keys)/, "auth and its cache"],
    [/^src\/middleware\/database|^src\/db\/client/, "D1 session"],
    [/^src\/middleware\/request-log/, "log line"],
    [/^src\/middleware\//, "other middleware (request id, rate limit, idempotency)"],
    [/^src\/scheduling\//, "scheduling engine"],
    [/^src\/(services|availability)\/|^src\/db\/occupancy/, "availability"],
    [/^src\/db\//, "queries (src/db)"],
    [/^src\/lib\/datetime/, "dates (serialisation)"],
    [/^src\/schemas\//, "schemas"],
    [/^src\/(routes|http)\//, "handlers and http helpers"],
  ];
  return rules.find(([pattern]) => pattern.test(source))?.[1] ?? `other: ${source}`;
}

interface ProfiledCase {
  /** Served by the floor worker (test/bench/floor) instead of the API. */
  floor?: boolean;
  path: string;
  body?: unknown;
  /** Or a body per request (a booking of the next slot, so that none is full). */
  next?: () => unknown;
  org?: BenchOrg;
  /** Sent beside the credentials. */
  headers?: Record<string, string>;
}

const CASES = (orgs?: Awaited<ReturnType<typeof seed>>): Record<string, ProfiledCase> => {
  const tomorrow = new Date(Date.now() + DAY).toISOString();
  const lead = { firstName: "Bench", lastName: "Lead", email: "lead@example.com" };
  // A slot start, as bench.ts checks.
  const [slot] = candidateSlots({ ...BENCH_SCHEDULE, closedDates: [] }, Date.now() + 2 * DAY, Date.now() + 9 * DAY);
  const check = { dateTime: new Date(slot!.start).toISOString() };
  const tool = { name: "check_booking_availability", arguments: check };
  // The board's day as bench.ts reads it: a week ago, which no write reaches.
  const boardDate = localDateOf(Date.now() - 7 * DAY, BENCH_SCHEDULE.timeZone);
  const dayStart = (date: number) => localToInstant(date, 0, BENCH_SCHEDULE.timeZone);
  // Bookings walk the next half-year's slots, as bench.ts's create-incident does.
  const near = [...candidateSlots({ ...BENCH_SCHEDULE, closedDates: [] }, Date.now() + DAY, Date.now() + 180 * DAY)];
  let booked = 0;
  const booking = () => ({
    dateTime: new Date(near[booked++ % near.length]!.start).toISOString(),
    clientName: "Bench Client",
    insectName: "Ants",
  });
  return {
    floor: { floor: true, path: "/logged?id=acct_floor" },
    "floor-write": { floor: true, path: "/write", body: lead },
    "floor-outbox": { floor: true, path: "/write-event", body: lead },
    "floor-book": { floor: true, path: "/book", next: booking },
    "floor-board": { floor: true, path: `/board?start=${dayStart(boardDate)}&end=${dayStart(boardDate + 1)}` },
    slots: {
      org: orgs?.empty,
      path: "/api/v1/ai-agent/available-appointments",
      body: { dateTime: tomorrow, limit: 50 },
    },
    account: { org: orgs?.heavy, path: `/api/v1/accounts/${orgs?.heavy.accountId}` },
    contacts: { org: orgs?.heavy, path: "/api/v1/contacts?limit=50" },
    incident: { org: orgs?.heavy, path: `/api/v1/incidents/${orgs?.moves[0]?.id}` },
    incidents: { org: orgs?.heavy, path: "/api/v1/incidents?limit=50" },
    "find-caller": { org: orgs?.heavy, path: "/api/v1/ai-agent/find-caller", body: { phone: orgs?.caller } },
    lead: { org: orgs?.heavy, path: "/api/v1/leads", body: lead },
    book: { org: orgs?.heavy, path: "/api/v1/ai-agent/create-incident", next: booking },
    check: { org: orgs?.heavy, path: "/api/v1/ai-agent/is-booking-available", body: check },
    // The same check as a tool call (bench.ts: "is-booking-available over MCP").
    mcp: {
      org: orgs?.heavy,
      path: "/mcp",
      headers: { Accept: "application/json, text/event-stream" },
      body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: tool },
    },
    "fleet-slots": {
      org: orgs?.fleet,
      path: "/api/v1/ai-agent/available-appointments",
      body: { dateTime: new Date(Date.now() + DAY).toISOString(), limit: 10 },
    },
    board: { org: orgs?.fleet, path: `/api/v1/board?date=${dateString(boardDate)}` },
  };
};

async function main() {
  const stateDir = mkdtempSync(path.join(tmpdir(), "fs-profile-"));
  let server: DevServer | undefined;
  try {
    if (!CASES()[options.case]) throw new Error(`--case: one of ${Object.keys(CASES()).join(", ")}`);
    const config = CASES()[options.case]!.floor
      ? path.join(FLOOR_DIR, "wrangler.toml")
      : path.join(stateDir, "wrangler.bench.toml");
    let chosen: ProfiledCase;
    if (CASES()[options.case]!.floor) {
      server = await startFloor(stateDir);
      chosen = CASES()[options.case]!;
    } else {
      writeFileSync(config, configWithRateLimit(100_000_000).text);
      await applyMigrations(stateDir, config);
      const seeded = await seed(stateDir, Number(options.contacts), Number(options.bookings));
      server = await DevServer.start(stateDir, await freePort(), ["--config", config]);
      chosen = CASES(seeded)[options.case]!;
    }
    const headers = {
      ...(chosen.org ? credentialsOf(chosen.org) : {}),
      ...(chosen.body || chosen.next ? { "Content-Type": "application/json" } : {}),
      ...chosen.headers,
    };
    const method = chosen.body || chosen.next ? "POST" : "GET";
    const bodyOf = () =>
      chosen.next ? JSON.stringify(chosen.next()) : chosen.body ? JSON.stringify(chosen.body) : undefined;
    const body = bodyOf();
    for (let i = 0; i < 50; i++) {
      const response = await fetch(server.baseUrl + chosen.path, { method, headers, body: bodyOf() });
      if (!response.ok) throw new Error(`warm-up answered ${response.status}: ${await response.text()}`);
      await response.arrayBuffer();
    }

    const inspector = await inspect(server.inspectorPort);
    await inspector.send("Profiler.enable");
    await inspector.send("Profiler.setSamplingInterval", { interval: 100 });
    await inspector.send("Profiler.start");
    const result = await autocannon({
      url: server.baseUrl,
      connections: Number(options.connections),
      duration: Number(options.seconds),
      requests: [
        {
          method,
          path: chosen.path,
          headers,
          body,
          ...(chosen.next && { setupRequest: (request) => ({ ...request, body: bodyOf() }) }),
        },
      ],
    });
    const { profile } = await inspector.send<{ profile: Profile }>("Profiler.stop");
    inspector.close();
    const out = path.join(ROOT, ".bench", `${options.case}.cpuprofile`);
    mkdirSync(path.dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify(profile));

    // Self time per node, then per function and per part.
    const self = new Map<number, number>();
    for (const [i, node] of profile.samples.entries())
      self.set(node, (self.get(node) ?? 0) + (profile.timeDeltas[i] ?? 0));
    const bundle = latestBundle(config);
    const consumer = bundle ? await new SourceMapConsumer(JSON.parse(readFileSync(bundle.map, "utf8"))) : undefined;
    const sourceOf = (frame: CallFrame) => {
      if (!consumer || !frame.url) return { source: "", line: 0 };
      const original = consumer.originalPositionFor({ line: frame.lineNumber + 1, column: frame.columnNumber });
      const source = original.source ?? "";
      const root = `${ROOT.slice(1)}/`;
      return {
        source: source.includes(root) ? source.slice(source.indexOf(root) + root.length) : source,
        line: original.line ?? 0,
      };
    };
    const total = profile.endTime - profile.startTime;
    let idle = 0;
    const byFunction = new Map<string, number>();
    const byPart = new Map<string, number>();
    for (const node of profile.nodes) {
      const us = self.get(node.id) ?? 0;
      if (us === 0) continue;
      const { functionName, url } = node.callFrame;
      if (functionName === "(idle)") {
        idle += us;
        continue;
      }
      const { source, line } = sourceOf(node.callFrame);
      const part = ["(garbage collector)", "(program)"].includes(functionName)
        ? functionName
        : url.startsWith("cloudflare-internal:d1")
          ? "D1 binding (workerd's JavaScript)"
          : source
            ? partOf(source)
            : `runtime: ${functionName || "(anonymous)"}${url ? ` (${url})` : ""}`;
      byPart.set(part, (byPart.get(part) ?? 0) + us);
      const key = `${functionName || "(anonymous)"}  ${source ? `${source}:${line}` : url || ""}`;
      byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    }
    const busy = total - idle;
    const requests = result.requests.total;
    const ms = (us: number) => +(us / 1000 / requests).toFixed(3);
    console.log(
      `${options.case}: ${requests} requests in ${options.seconds} s (${result.non2xx} non-2xx); the worker's JavaScript ${ms(busy)} ms CPU per request (${((100 * busy) / total).toFixed(1)} % of the isolate's wall time busy)`,
    );
    const table = (map: Map<string, number>, limit: number) =>
      [...map.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, limit)
        .map(([name, us]) => ({ name, "ms/request": ms(us), "% of JS": +((100 * us) / busy).toFixed(1) }));
    console.table(table(byPart, 40));
    console.table(table(byFunction, Number(options.top)));
    console.log(`profile written to ${path.relative(process.cwd(), out)}`);
  } finally {
    await server?.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

await main();
