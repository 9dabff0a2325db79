// `npm run bench [-- --seconds N] [-- --pairs N] [-- --only REGEX] [-- --config other/wrangler.toml]`:
// a benchmark, not a test. Seeds a fresh local state folder (seed.ts: an org with
// 100,000 contacts and 20,000 bookings over a year, an empty org, a
// technician-mode org, orgs to hold slots in), serves it under `wrangler dev`
// on 127.0.0.1 with quiet logging beside the floor worker (test/bench/floor,
// under its own `wrangler dev`), and loads each case with autocannon for N
// seconds a run (default 1.5).
// What Workers bills, and what the figures compare, is CPU per request: the
// CPU time (utime + stime in /proc) of every process of the server's process
// group (npx, wrangler, workerd) over the run, divided by the responses
// counted. Each case runs --pairs times (default 10) right after its shape
// floor: what the contract asks of it done with no code of the API's (a
// page, a caller found, a create and its event, a booking that fits, the
// visits of the window its answer spans, a day's board), or the same operation over HTTP with an
// office key (a tool call over MCP, Vapi or Retell; an agent key bound to its
// caller); else the logged read floor or the write floor. The machine's speed
// drifts within seconds, so each pair's ratio (floor CPU/request ÷ the
// case's; 1 = as cheap as the floor) is taken within the pair; the table
// shows the median of the pairs and their spread, and the last line holds
// every case to 0.9 (a bound key's 3 % is `npm run bench:js`'s, whose noise
// is below it). A full run takes about 30 minutes on a 2-core machine.
// Also: three p50 ratios (contacts and incidents pages deep against page 1,
// availability of the 20,000-booking org against the empty one); the
// webhooks (docs/webhooks.md): POST /leads without and with an endpoint
// subscribed, and --deliveries N (default 120) delivered to a local receiver,
// every signature verified; the writes against RECORDED; and first the cold
// start and size (`wrangler check startup`, median of --startup-runs, default
// 9, taking turns with the floor worker's; 0 skips it; the bundle as `wrangler
// deploy` would upload it), beside the floor worker's.
// `--only REGEX` measures only the cases whose name matches (with their
// floors), and skips the cold start, the webhooks and what needs missing cases.
// Writes the same figures to .bench/results.json (or --out FILE). `--config` serves another
// checkout (e.g. a git worktree of an older commit) against the same data.
// The rate limit is lifted for the run (see below); all else is wrangler.toml.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { Webhook } from "standardwebhooks";
import { candidateSlots } from "../../src/scheduling/slots";
import { dateString, localDateOf, localToInstant } from "../../src/scheduling/zone";
import { admin, applyMigrations, configWithRateLimit, DevServer, freePort, jsonLine, ROOT } from "../e2e/harness";
import { credentialsOf } from "../support/http";
import { DAY } from "../support/time";
import { bundleSize, GZIP_BUDGET_BYTES, median, startupMs } from "./coldstart";
import { FLOOR_DIR, startFloor } from "./floor/start";
import { Holds } from "./holds";
import { BENCH_SCHEDULE, type BenchOrg, seed } from "./seed";

const { values: options } = parseArgs({
  options: {
    seconds: { type: "string", default: "1.5" },
    pairs: { type: "string", default: "10" },
    only: { type: "string" },
    connections: { type: "string", default: "10" },
    contacts: { type: "string", default: "100000" },
    bookings: { type: "string", default: "20000" },
    depth: { type: "string", default: "90000" },
    deliveries: { type: "string" },
    "startup-runs": { type: "string", default: "9" },
    config: { type: "string" },
    out: { type: "string", default: path.join(ROOT, ".bench", "results.json") },
  },
});
const SECONDS = Number(options.seconds);
const PAIRS = Number(options.pairs);
const ONLY = options.only === undefined ? undefined : new RegExp(options.only);
/** Whether the case named `name` is measured (--only). */
const selected = (name: string) => ONLY === undefined || ONLY.test(name);
const CONNECTIONS = Number(options.connections);
const DEPTH = Number(options.depth);
const PAGE = 50;
const DELIVERIES = Number(options.deliveries ?? 120);
/**
 * Holds a hold case's run may take: its warm-up and 80 a second per connection
 * (more than a run answers) for whole seconds (autocannon runs at least one).
 */
const HOLDS_PER_RUN = 20 + Math.ceil(SECONDS) * CONNECTIONS * 80;
/**
 * autocannon's sampling interval for a run of `seconds`: it stops a run only at a sample's end, so a
 * run shorter than its default second (the e2e smoke's) samples at its own length.
 */
const sampleMs = (seconds: number) => Math.min(1000, seconds * 1000);
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
  /** Sent beside the credentials (MCP's Accept, an agent's caller). */
  headers?: Record<string, string>;
  /** A body per request (a new one each time, so writes do not all hit one slot). */
  body?: () => unknown;
  /** Or a path and body per request, and the org it is sent as (a write to a different resource each time). */
  next?: () => { path: string; body: unknown; org?: BenchOrg };
  /** Each answer's body, with the org it was sent as. */
  answered?: (org: BenchOrg | null, text: string) => void;
  /** Whether a 2xx answer is the operation's success (a tool call's failure is a 200 over MCP and Vapi); checked in the warm-up. */
  ok?: (text: string) => boolean;
  /** Run before and after each measured run, outside it (holds made and released). */
  before?: () => Promise<void>;
  after?: () => Promise<void>;
  /** Served by the floor worker instead of the API. */
  floor?: boolean;
  /**
   * The floor of the case's shape, run right before it in each pair: what the
   * contract asks of it done with no code of the API's (a page reads 51 rows,
   * find-caller looks the number up three ways, a create records its event, a
   * booking counts the visits in its span), or the same operation over HTTP (a
   * tool call, a bound key's call). Default: its kind's floor.
   */
  shaped?: Case;
  /** Which floor a case is compared with when it has no shape: the logged read floor or the write floor. */
  kind: Kind;
}

type Kind = "read" | "write";

/** The floor run before each case of a kind (test/bench/floor/index.ts). */
const FLOORS: Record<Kind, Case> = {
  read: { name: "floor: one D1 read, logged", kind: "read", org: null, path: "/logged?id=acct_floor", floor: true },
  write: {
    name: "floor: one D1 write, logged",
    kind: "write",
    org: null,
    path: "/write",
    body: () => ({ firstName: "Floor", lastName: "Lead", email: "lead@example.com" }),
    floor: true,
  },
};
const BARE_FLOOR: Case = { name: "floor: one D1 read", kind: "read", org: null, path: "/?id=acct_floor", floor: true };
const PAGE_FLOOR: Case = {
  name: "floor: a page of 50 contacts, logged",
  kind: "read",
  org: null,
  path: "/page",
  floor: true,
};
const INCIDENT_PAGE_FLOOR: Case = {
  ...PAGE_FLOOR,
  name: "floor: a page of 50 incidents, logged",
  path: "/page?of=incidents",
};
const CALLER_FLOOR: Case = {
  name: "floor: a caller found, logged",
  kind: "read",
  org: null,
  path: "/caller",
  body: () => ({ phone: "+19172000000" }),
  floor: true,
};
const OUTBOX_FLOOR: Case = { ...FLOORS.write, name: "floor: a write and its event, logged", path: "/write-event" };
const CONTACT_OUTBOX_FLOOR: Case = {
  ...OUTBOX_FLOOR,
  name: "floor: a contact and its event, logged",
  path: "/write-event?of=contacts",
};
const BOOKING_FLOOR: Case = {
  ...FLOORS.write,
  name: "floor: a booking that fits and its event, logged",
  path: "/book",
  body: () => ({ clientName: "Floor Client", insectName: "Ants" }),
};
const TECHNICIAN_BOOKING_FLOOR: Case = {
  ...BOOKING_FLOOR,
  name: "floor: a booking of a free technician and its event, logged",
  path: "/book?technicians=20",
};
const AVAILABILITY_FLOOR: Case = {
  name: "floor: a week of 20 technicians' visits, logged",
  kind: "read",
  org: null,
  path: "/availability",
  body: () => ({ dateTime: new Date(Date.now() + DAY).toISOString(), technicians: 20 }),
  floor: true,
};
/** The board's day: a week ago in the orgs' zone, which no write of the benchmark reaches. */
const BOARD_DATE = localDateOf(Date.now() - 7 * DAY, BENCH_SCHEDULE.timeZone);
const BOARD_FLOOR: Case = {
  name: "floor: a day's visits and holds, logged",
  kind: "read",
  org: null,
  path: `/board?start=${localToInstant(BOARD_DATE, 0, BENCH_SCHEDULE.timeZone)}&end=${localToInstant(BOARD_DATE + 1, 0, BENCH_SCHEDULE.timeZone)}`,
  floor: true,
};
const FLOOR_ROWS = [
  BARE_FLOOR,
  FLOORS.read,
  FLOORS.write,
  PAGE_FLOOR,
  INCIDENT_PAGE_FLOOR,
  CALLER_FLOOR,
  OUTBOX_FLOOR,
  CONTACT_OUTBOX_FLOOR,
  BOOKING_FLOOR,
  TECHNICIAN_BOOKING_FLOOR,
  AVAILABILITY_FLOOR,
  BOARD_FLOOR,
];
const shapeOf = (c: Case) => c.shaped ?? FLOORS[c.kind];

const TARGET_RATIO = 0.9;

const round = (n: number, digits = 2) => +n.toFixed(digits);
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

const headersOf = (org: BenchOrg | null, json: boolean): Record<string, string> => ({
  ...(org ? credentialsOf(org) : {}),
  ...(json ? { "Content-Type": "application/json" } : {}),
});

/** Clock ticks per second, the unit of /proc's CPU times (normally 100). */
const CLOCK_TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());

/** CPU time so far (ms) of every live process in process group `group`, by pid, with its name. */
function groupCpu(group: number): Map<number, { name: string; ms: number }> {
  const cpu = new Map<number, { name: string; ms: number }>();
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue; // exited since the listing
    }
    // Field 2, the name, is in parentheses and may hold spaces and parentheses itself:
    // the other fields follow its last ')', from field 3 on.
    const close = stat.lastIndexOf(")");
    const fields = stat.slice(close + 2).split(" ");
    if (Number(fields[5 - 3]) !== group) continue;
    const ticks = Number(fields[14 - 3]) + Number(fields[15 - 3]);
    cpu.set(Number(pid), { name: stat.slice(stat.indexOf("(") + 1, close), ms: (ticks * 1000) / CLOCK_TICKS });
  }
  return cpu;
}

/** CPU ms of each process name, summed over every measured run of a server's group (printed once, after the table). */
const cpuByProcess = new Map<number, Map<string, number>>();

/** CPU ms the group spent between two snapshots (a process started in between counts whole), also added to cpuByProcess. */
function cpuBetween(group: number, before: ReturnType<typeof groupCpu>, after: ReturnType<typeof groupCpu>): number {
  const byName = cpuByProcess.get(group) ?? new Map<string, number>();
  cpuByProcess.set(group, byName);
  let total = 0;
  for (const [pid, { name, ms }] of after) {
    const spent = ms - (before.get(pid)?.ms ?? 0);
    total += spent;
    byName.set(name, (byName.get(name) ?? 0) + spent);
  }
  return total;
}

type Figures = {
  reqPerSec: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  requests: number;
  cpuMsPerRequest: number;
};

/** One autocannon run of `c` on `server` after a warm-up, with the CPU its server's process group spent per response. */
async function measure(server: DevServer, c: Case): Promise<Figures> {
  const group = server.processGroup;
  if (group === undefined) throw new Error(`${c.name}: the server has no process group`);
  const baseUrl = server.baseUrl;
  const body = c.body;
  const next: Case["next"] = c.next ?? (body ? () => ({ path: c.path, body: body() }) : undefined);
  const method = c.method ?? (next ? "POST" : "GET");
  const headersAs = (org: BenchOrg | null | undefined) => ({
    ...headersOf(org === undefined ? c.org : org, next !== undefined),
    ...c.headers,
  });
  await c.before?.();
  // Warm-up: the first requests compile code paths and fill the isolate's caches.
  for (let i = 0, reset = 0; i < 20; i++) {
    const request = next?.();
    const org = request?.org ?? c.org;
    const sent = fetch(baseUrl + (request?.path ?? c.path), {
      method,
      headers: headersAs(org),
      body: request ? JSON.stringify(request.body) : undefined,
    });
    // A kept-alive connection the server closed as it was reused (a run of 20 pairs met one after 45
    // minutes): sent again once, as the next request (a write's may have gone through).
    const response = await sent.catch((error: Error) => {
      if ((error.cause as { code?: string } | undefined)?.code !== "ECONNRESET" || reset++ > 0) throw error;
      return undefined;
    });
    if (!response) continue;
    const text = await response.text();
    if (!response.ok || c.ok?.(text) === false)
      throw new Error(`${c.name}: warm-up answered ${response.status}: ${text.slice(0, 1000)}`);
    c.answered?.(org, text);
  }
  const answered = c.answered;
  const run = (seconds: number) =>
    autocannon({
      url: baseUrl,
      connections: CONNECTIONS,
      duration: seconds,
      sampleInt: sampleMs(seconds),
      requests: [
        {
          method,
          path: c.path,
          headers: headersAs(c.org),
          ...(next
            ? {
                setupRequest: (request, context) => {
                  const { path, body, org } = next();
                  context.org = org ?? c.org;
                  return { ...request, path, headers: headersAs(org), body: JSON.stringify(body) };
                },
              }
            : {}),
          ...(answered
            ? { onResponse: (_status, text, context) => answered((context.org as BenchOrg | null) ?? c.org, text) }
            : {}),
        },
      ],
    });
  let seconds = SECONDS;
  let before = groupCpu(group);
  let result = await run(seconds);
  // A run that answered nothing measured nothing (a 0.1 s smoke run on a busy machine can end before the
  // first answer): it runs again, twice as long, up to 8 times its length.
  while (result.requests.total === 0 && seconds < 8 * SECONDS) {
    seconds *= 2;
    before = groupCpu(group);
    result = await run(seconds);
  }
  const cpuMs = cpuBetween(group, before, groupCpu(group));
  await c.after?.();
  return {
    // The mean requests per sample, per second.
    reqPerSec: round((result.requests.average * 1000) / sampleMs(seconds), 1),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    requests: result.requests.total,
    cpuMsPerRequest: result.requests.total > 0 ? round(cpuMs / result.requests.total, 3) : Number.NaN,
  };
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

/**
 * The crew availability floor over the window an availability answer spans: from its `dateTime` to the
 * end of its last slot (find) or alternative (check), the visits and holds the answer could not do without.
 */
async function windowFloor(baseUrl: string, org: BenchOrg, c: Case, name: string): Promise<Case> {
  const body = c.body!() as { dateTime: string };
  const response = await fetch(`${baseUrl}${c.path}`, {
    method: "POST",
    headers: headersOf(org, true),
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as { slots?: { end: string }[]; alternatives?: { end: string }[] };
  const last = (answer.slots ?? answer.alternatives)?.at(-1);
  if (!last) throw new Error(`${c.name}: no slot in its answer to span (${response.status})`);
  return {
    ...AVAILABILITY_FLOOR,
    name: `floor: ${name}, logged`,
    body: () => ({ dateTime: body.dateTime, until: last.end }),
  };
}

const seconds = (since: number) => +((performance.now() - since) / 1000).toFixed(2);

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

/**
 * POST /leads without and then with an endpoint subscribed (back to back, so
 * that both meet the same machine), then delivery throughput and latency to a
 * local receiver. `ok` is false when a write failed, a delivery did not
 * arrive within the bound, or a signature did not verify.
 */
async function webhookCases(server: DevServer, stateDir: string, seeded: Seeded) {
  const baseUrl = server.baseUrl;
  const receiver = await startReceiver();
  try {
    // 1. The write path's own cost: the same case with one endpoint subscribed to lead.created.
    const leads = (name: string): Case => ({
      name,
      kind: "write",
      org: seeded.heavy,
      path: "/api/v1/leads",
      body: () => ({ firstName: "Bench", lastName: "Lead", email: "lead@example.com" }),
    });
    const without = await measure(server, leads("POST /leads, no endpoint"));
    await addEndpoint(stateDir, receiver, seeded.heavy, "/subscribed");
    const subscribed = await measure(server, leads("POST /leads, 1 endpoint subscribed"));
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
async function coldStart(apiDir: string, runs: number) {
  const [apiStartup, floorStartup] = await startupMs([apiDir, FLOOR_DIR], runs);
  const api = { startup: apiStartup!, bundle: await bundleSize(apiDir) };
  const floor = { startup: floorStartup!, bundle: await bundleSize(FLOOR_DIR) };
  console.log(
    `startup CPU (wrangler check startup, median of ${runs}, taking turns with the floor worker): ${api.startup.median} ms (runs: ${api.startup.runs.join(", ")}); the floor worker ${floor.startup.median} ms (runs: ${floor.startup.runs.join(", ")})`,
  );
  console.log(
    `bundle as wrangler deploy uploads it: ${api.bundle.raw} bytes (${kib(api.bundle.raw)}), gzip ${api.bundle.gzip} bytes (${kib(api.bundle.gzip)}; budget ${GZIP_BUDGET_BYTES}); the floor worker ${floor.bundle.gzip} bytes gzip`,
  );
  return { api, floor, gzipBudget: GZIP_BUDGET_BYTES };
}

/** The commit measured: ROOT's HEAD, "-dirty" when its working tree has changes. */
function commitOf(): string {
  const git = (...args: string[]) => execFileSync("git", args, { cwd: ROOT, encoding: "utf8" }).trim();
  try {
    return git("rev-parse", "--short", "HEAD") + (git("status", "--porcelain") ? "-dirty" : "");
  } catch {
    return "unknown";
  }
}

interface Pair {
  cpu: number;
  /** Its shape floor's CPU per request, run just before it. */
  floorCpu: number;
  /** The floor's CPU per request ÷ the case's: 1 = as cheap as the floor, higher is cheaper. */
  ratio: number;
  reqPerSec: number;
}
type Entry = Figures & {
  kind: Kind;
  /** The floor it is compared with: its shape floor (a floor row: its kind's floor, over all that floor's runs). */
  floor: string;
  floorCpuMsPerRequest: number;
  /** The median of the pairs' ratios. */
  cpuVsFloor: number;
  /** The lowest and highest pair ratio. */
  spread?: [number, number];
  target?: number;
  pass?: boolean;
  pairs: Pair[];
};

async function main() {
  const stateDir = mkdtempSync(path.join(tmpdir(), "fs-bench-"));
  const floorDir = mkdtempSync(path.join(tmpdir(), "fs-bench-floor-"));
  let server: DevServer | undefined;
  let floor: DevServer | undefined;
  try {
    const apiDir = options.config ? path.dirname(path.resolve(options.config)) : ROOT;
    const startupRuns = Number(options["startup-runs"]);
    const cold = ONLY === undefined && startupRuns > 0 ? await coldStart(apiDir, startupRuns) : null;
    let started = performance.now();
    // The per-org rate limit (1,200 a minute) would cap every case: the served
    // configuration is wrangler.toml (its migrations and code) with a limit no benchmark reaches.
    const config = path.join(stateDir, "wrangler.bench.toml");
    writeFileSync(config, configWithRateLimit(100_000_000, apiDir).text);
    await applyMigrations(stateDir, config);
    const migrateSeconds = seconds(started);
    started = performance.now();
    // A run's pool of holds at most 60 an org: the rest of an org's 100 is for hold-slot's holds, and
    // for those its run leaves unreleased (answered after autocannon stopped), which live for 5 minutes.
    const seeded = await seed(stateDir, Number(options.contacts), Number(options.bookings), {
      holdOrgs: Math.ceil(HOLDS_PER_RUN / 60),
    });
    const seedSeconds = seconds(started);
    console.log(
      `seeded ${seeded.contacts} contacts (${round(seeded.contactsSeconds)} s) and ${seeded.bookings} bookings (${round(seeded.bookingsSeconds)} s); migrations ${migrateSeconds} s, seeding in all ${seedSeconds} s`,
    );

    // The served config lives in the state folder, where wrangler finds no .dev.vars: name the checkout's
    // (the local webhook key), so that the queue consumer delivers.
    const devVars = path.join(apiDir, ".dev.vars");
    server = await DevServer.start(stateDir, await freePort(), [
      "--config",
      config,
      ...(existsSync(devVars) ? ["--env-file", devVars] : []),
    ]);
    floor = await startFloor(floorDir);
    const { heavy, empty } = seeded;
    // The incidents page as deep as the seeded bookings allow, in whole pages of 200.
    const incidentDepth = Math.floor((seeded.bookings - PAGE - 1) / 200) * 200;
    const deepContactsName = `GET /contacts ${DEPTH} deep`;
    const deepIncidentsName = `GET /incidents ${incidentDepth} deep`;
    started = performance.now();
    // Paging that deep takes a while: only for a case that is measured.
    const deepCursor = selected(deepContactsName)
      ? await cursorAt(server.baseUrl, heavy, "/api/v1/contacts", DEPTH)
      : "";
    const deepIncidents = selected(deepIncidentsName)
      ? await cursorAt(server.baseUrl, heavy, "/api/v1/incidents", incidentDepth)
      : "";
    console.log(
      `paged ${deepCursor ? DEPTH : 0} contacts and ${deepIncidents ? incidentDepth : 0} incidents deep in ${seconds(started)} s; measuring ${SECONDS} s a run, ${CONNECTIONS} connections, each case ${PAIRS} times right after its floor`,
    );

    const now = Date.now();
    const tomorrow = new Date(now + DAY).toISOString();
    const schedule = { ...BENCH_SCHEDULE, closedDates: [] };
    const [checked] = candidateSlots(schedule, now + 2 * DAY, now + 9 * DAY);
    // create-incident walks the next half-year's slots in turn, four times over (each has room for 4 more
    // bookings: 12 places, at most 8 seeded), about 6,000 bookings; then the unseeded slots after the
    // seeded year (12 places each), so that a longer run or a faster machine does not find one full (a
    // 409 fails the run).
    const near = [...candidateSlots(schedule, now + DAY, now + 180 * DAY)];
    const later = [...candidateSlots(schedule, now + 185 * DAY, now + 360 * DAY)];
    const bookingSlot = (k: number) =>
      k < 4 * near.length ? near[k % near.length]! : later[(k - 4 * near.length) % later.length]!;
    let booking = 0;
    // The fleet's bookings walk the same slots, 8 times over (20 technicians each, at most 10 busy with
    // seeded visits), then the later ones.
    const fleetSlot = (k: number) =>
      k < 8 * near.length ? near[k % near.length]! : later[(k - 8 * near.length) % later.length]!;
    let fleetBooking = 0;
    const holds = new Holds(server.baseUrl, seeded.holders, near, CONNECTIONS);
    // The operations that are also run as tool calls and with an agent key, over HTTP with an office key.
    const checkHttp: Case = {
      name: "is-booking-available, 20k bookings",
      kind: "read",
      org: heavy,
      path: "/api/v1/ai-agent/is-booking-available",
      body: () => ({ dateTime: new Date(checked!.start).toISOString() }),
    };
    checkHttp.shaped = await windowFloor(server.baseUrl, heavy, checkHttp, "the crew's visits up to 3 alternatives");
    const findHeavy: Case = {
      name: "available-appointments, 20k bookings",
      kind: "read",
      org: heavy,
      path: "/api/v1/ai-agent/available-appointments",
      body: () => ({ dateTime: tomorrow, limit: 10 }),
    };
    findHeavy.shaped = await windowFloor(server.baseUrl, heavy, findHeavy, "the crew's visits up to 10 slots");
    const checkArgs = () => ({ dateTime: new Date(checked!.start).toISOString() });
    const incidentHttp: Case = {
      name: "GET /incidents/{id}",
      kind: "read",
      org: heavy,
      path: `/api/v1/incidents/${seeded.callerIncident.id}`,
    };
    const callerHttp: Case = {
      name: "find-caller, 100k contacts",
      kind: "read",
      org: heavy,
      path: "/api/v1/ai-agent/find-caller",
      body: () => ({ phone: seeded.caller }),
      shaped: CALLER_FLOOR,
    };
    // Each reschedule moves the next seeded booking to its other slot (and back on its next turn).
    let move = 0;
    const at = seeded.moves.map((m) => m.from);
    const cases: Case[] = [
      { name: "GET /health", kind: "read", shaped: BARE_FLOOR, org: null, path: "/health" },
      {
        name: "POST /leads",
        kind: "write",
        shaped: OUTBOX_FLOOR,
        org: heavy,
        path: "/api/v1/leads",
        body: () => ({ firstName: "Bench", lastName: "Lead", email: "lead@example.com" }),
      },
      {
        name: "POST /contacts",
        kind: "write",
        shaped: CONTACT_OUTBOX_FLOOR,
        org: heavy,
        path: "/api/v1/contacts",
        body: () => ({ firstName: "Bench", lastName: "Contact", accountId: heavy.accountId }),
      },
      {
        name: "GET /contacts page 1",
        kind: "read",
        org: heavy,
        path: `/api/v1/contacts?limit=${PAGE}`,
        shaped: PAGE_FLOOR,
      },
      {
        name: deepContactsName,
        kind: "read",
        org: heavy,
        path: `/api/v1/contacts?limit=${PAGE}&cursor=${deepCursor}`,
        shaped: PAGE_FLOOR,
      },
      {
        name: "GET /contacts?accountId",
        kind: "read",
        org: heavy,
        path: `/api/v1/contacts?limit=${PAGE}&accountId=${heavy.accountId}`,
        shaped: PAGE_FLOOR,
      },
      { name: "GET /accounts/{id}", kind: "read", org: heavy, path: `/api/v1/accounts/${heavy.accountId}` },
      callerHttp,
      incidentHttp,
      {
        name: "GET /incidents page 1",
        kind: "read",
        org: heavy,
        path: `/api/v1/incidents?limit=${PAGE}`,
        shaped: INCIDENT_PAGE_FLOOR,
      },
      {
        name: deepIncidentsName,
        kind: "read",
        org: heavy,
        path: `/api/v1/incidents?limit=${PAGE}&cursor=${deepIncidents}`,
        shaped: INCIDENT_PAGE_FLOOR,
      },
      {
        // A week of slots: 50 (the schema allows up to 100).
        name: "available-appointments, empty org",
        kind: "read",
        org: empty,
        path: "/api/v1/ai-agent/available-appointments",
        body: () => ({ dateTime: tomorrow, limit: 50 }),
      },
      findHeavy,
      checkHttp,
      {
        name: "available-appointments, 20 technicians × 3 services × 5k visits",
        kind: "read",
        shaped: AVAILABILITY_FLOOR,
        org: seeded.fleet,
        path: "/api/v1/ai-agent/available-appointments",
        body: () => ({ dateTime: tomorrow, limit: 10 }),
      },
      {
        name: "available-appointments, a 180-minute service, 20 technicians",
        kind: "read",
        shaped: AVAILABILITY_FLOOR,
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
        kind: "write",
        shaped: BOOKING_FLOOR,
        org: heavy,
        path: "/api/v1/ai-agent/create-incident",
        body: () => ({
          dateTime: new Date(bookingSlot(booking++).start).toISOString(),
          clientName: "Bench Client",
          insectName: "Ants",
        }),
      },
      {
        name: "reschedule, 20k bookings",
        kind: "write",
        shaped: BOOKING_FLOOR,
        org: heavy,
        path: "/api/v1/incidents/{id}/reschedule",
        next: () => {
          const i = move++ % seeded.moves.length;
          const { id, from, to } = seeded.moves[i]!;
          at[i] = at[i] === from ? to : from;
          return { path: `/api/v1/incidents/${id}/reschedule`, body: { dateTime: new Date(at[i]).toISOString() } };
        },
      },
      {
        name: "hold-slot",
        kind: "write",
        shaped: BOOKING_FLOOR,
        org: null,
        path: "/api/v1/ai-agent/hold-slot",
        next: () => holds.hold(),
        answered: (org, text) => holds.held(org!, text),
        after: () => holds.releaseMade(),
        ok: (text) => text.includes('"holdId"'),
      },
      {
        name: "create-incident on a hold",
        kind: "write",
        shaped: BOOKING_FLOOR,
        org: null,
        path: "/api/v1/ai-agent/create-incident",
        next: () => holds.book(),
        before: () => holds.fill(HOLDS_PER_RUN),
        ok: (text) => text.includes('"holdExpired":false'),
      },
      {
        name: "create-incident, 20 technicians",
        kind: "write",
        shaped: TECHNICIAN_BOOKING_FLOOR,
        org: seeded.fleet,
        path: "/api/v1/ai-agent/create-incident",
        body: () => ({
          dateTime: new Date(fleetSlot(fleetBooking++).start).toISOString(),
          clientName: "Bench Client",
          insectName: "Ants",
        }),
      },
      {
        name: "is-booking-available over MCP",
        kind: "read",
        shaped: checkHttp,
        org: heavy,
        path: "/mcp",
        headers: { Accept: "application/json, text/event-stream" },
        body: () => ({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "check_booking_availability", arguments: checkArgs() },
        }),
        ok: (text) => {
          const { result } = JSON.parse(text) as { result?: { isError?: boolean } };
          return result !== undefined && result.isError !== true;
        },
      },
      {
        name: "is-booking-available over Vapi",
        kind: "read",
        shaped: checkHttp,
        org: heavy,
        path: "/api/v1/integrations/vapi/tool-calls",
        body: () => ({
          message: {
            type: "tool-calls",
            call: { id: "call_bench", customer: { number: seeded.caller } },
            toolCallList: [
              {
                id: "tc_1",
                type: "function",
                function: { name: "check_booking_availability", arguments: JSON.stringify(checkArgs()) },
              },
            ],
          },
        }),
        ok: (text) => (JSON.parse(text) as { results: { result?: string }[] }).results[0]?.result !== undefined,
      },
      {
        name: "is-booking-available over Retell",
        kind: "read",
        shaped: checkHttp,
        org: heavy,
        path: "/api/v1/integrations/retell/check_booking_availability",
        body: () => ({
          name: "check_booking_availability",
          call: { call_id: "call_bench", from_number: seeded.caller, direction: "inbound" },
          args: checkArgs(),
        }),
      },
      {
        name: "GET /board, 20 technicians",
        kind: "read",
        shaped: BOARD_FLOOR,
        org: seeded.fleet,
        path: `/api/v1/board?date=${dateString(BOARD_DATE)}`,
      },
      {
        ...incidentHttp,
        name: "GET /incidents/{id}, agent key bound to its caller",
        shaped: incidentHttp,
        org: seeded.agent,
        headers: { "X-Caller-Phone": seeded.callerIncident.phone },
      },
      {
        ...callerHttp,
        name: "find-caller, agent key bound to its caller",
        shaped: callerHttp,
        org: seeded.agent,
        headers: { "X-Caller-Phone": seeded.caller },
      },
    ];
    const measured = cases.filter((c) => selected(c.name));
    if (measured.length === 0) throw new Error(`--only ${options.only}: no case matches`);

    // Every run of each floor, its own row's and the paired ones (an API case that is a shape floor too).
    const floorRuns = new Map<string, Figures[]>();
    const runFloor = async (c: Case) => {
      const figures = await measure(c.floor ? floor! : server!, c);
      floorRuns.set(c.name, [...(floorRuns.get(c.name) ?? []), figures]);
      return figures;
    };
    // The floor rows: one run each, for their req/s and latency.
    const floorRows = new Map<string, Figures>();
    for (const c of FLOOR_ROWS) floorRows.set(c.name, await runFloor(c));

    // Each case right after its shape floor, PAIRS times: the machine's speed drifts over minutes, so a
    // case is only ever compared with the floor run just before it.
    const caseResults: Record<string, Entry> = {};
    for (const c of measured) {
      const pairs: Pair[] = [];
      const runs: Figures[] = [];
      for (let i = 0; i < PAIRS; i++) {
        const before = await runFloor(shapeOf(c));
        const run = await measure(server, c);
        runs.push(run);
        pairs.push({
          cpu: run.cpuMsPerRequest,
          floorCpu: before.cpuMsPerRequest,
          ratio: round(before.cpuMsPerRequest / run.cpuMsPerRequest, 3),
          reqPerSec: run.reqPerSec,
        });
      }
      const of = (field: keyof Figures) => runs.map((r) => r[field]);
      const ratios = pairs.map((p) => p.ratio);
      const cpuVsFloor = round(median(ratios));
      caseResults[c.name] = {
        kind: c.kind,
        floor: shapeOf(c).name,
        reqPerSec: round(median(of("reqPerSec")), 1),
        p50: median(of("p50")),
        p99: median(of("p99")),
        errors: sum(of("errors")),
        non2xx: sum(of("non2xx")),
        requests: sum(of("requests")),
        cpuMsPerRequest: round(median(pairs.map((p) => p.cpu)), 3),
        floorCpuMsPerRequest: round(median(pairs.map((p) => p.floorCpu)), 3),
        cpuVsFloor,
        spread: [round(Math.min(...ratios)), round(Math.max(...ratios))],
        target: TARGET_RATIO,
        pass: cpuVsFloor >= TARGET_RATIO,
        pairs,
      };
    }

    // Each floor's CPU per request over all its runs (their spread shows the machine's drift).
    const floorCpu = Object.fromEntries(
      [...floorRuns].map(([name, runs]) => {
        const cpu = runs.map((r) => r.cpuMsPerRequest);
        return [name, { cpuMsPerRequest: round(median(cpu), 3), runs: cpu }];
      }),
    );
    // A floor row against the median of its kind's floor (so the logged floors read about 1, and the
    // bare floor shows what the log line costs); its errors and non-2xx count every run of it.
    const floorResults: Record<string, Entry> = Object.fromEntries(
      FLOOR_ROWS.map((c) => {
        const row = floorRows.get(c.name)!;
        const runs = floorRuns.get(c.name)!;
        const reference = floorCpu[FLOORS[c.kind].name]!.cpuMsPerRequest;
        const entry: Entry = {
          ...row,
          kind: c.kind,
          floor: FLOORS[c.kind].name,
          errors: sum(runs.map((r) => r.errors)),
          non2xx: sum(runs.map((r) => r.non2xx)),
          floorCpuMsPerRequest: reference,
          cpuVsFloor: round(reference / row.cpuMsPerRequest),
          pairs: [],
        };
        return [c.name, entry];
      }),
    );
    const results: Record<string, Entry> = { ...floorResults, ...caseResults };

    console.table(
      Object.entries(results).map(([name, r]) => ({
        case: name,
        "req/s": r.reqPerSec,
        "CPU ms/req": r.cpuMsPerRequest,
        "floor CPU ms/req": r.floorCpuMsPerRequest,
        "CPU × floor": r.cpuVsFloor,
        spread: r.spread?.join("–") ?? "",
        "p50 ms": r.p50,
        "p99 ms": r.p99,
        errors: r.errors,
        "non-2xx": r.non2xx,
        floor: r.floor,
      })),
    );
    const floorLogged = results[FLOORS.read.name]!;
    const floorBare = results[BARE_FLOOR.name]!;
    const logLine = round(floorLogged.reqPerSec / floorBare.reqPerSec);
    console.log(
      `"CPU × floor": the median over ${PAIRS} pair(s) of the floor's CPU per request ÷ the case's, each case right after its shape floor ("floor": a floor worker's, or the same operation over HTTP with an office key); "spread" the lowest and highest pair; a floor row is its one run against the median of all its kind's floor runs (the logged read floor, the write floor). CPU is the server's whole process group, npx, wrangler and workerd. The read floor: ${floorBare.cpuMsPerRequest} CPU ms/request and ${floorBare.reqPerSec} req/s without a log line, ${floorLogged.cpuMsPerRequest} and ${floorLogged.reqPerSec} with one; under wrangler dev each console.log travels from workerd to the wrangler process, a local cost that Workers Logs does not add on Cloudflare.`,
    );
    // Where the CPU goes (workerd, wrangler's node, npx, esbuild), summed over every measured run.
    const byProcess = (s: DevServer) => {
      const byName = [...(cpuByProcess.get(s.processGroup!) ?? [])].sort((a, b) => b[1] - a[1]);
      const total = sum(byName.map(([, ms]) => ms));
      return byName.map(
        ([name, ms]) =>
          `${name === "node" ? "node (wrangler)" : name} ${round(ms / 1000, 1)} s (${Math.round((100 * ms) / total)} %)`,
      );
    };
    console.log(
      `CPU by process over the measured runs: API server ${byProcess(server).join(", ")}; floor server ${byProcess(floor).join(", ")}`,
    );

    // Slots with technicians against slots today (crew mode, 20k bookings), in CPU per request, and each against the floor.
    const today = "available-appointments, 20k bookings";
    for (const name of [
      "available-appointments, 20 technicians × 3 services × 5k visits",
      "available-appointments, a 180-minute service, 20 technicians",
    ]) {
      const [r, t] = [results[name], results[today]];
      if (r && t)
        console.log(
          `${name}: ${round(t.cpuMsPerRequest / r.cpuMsPerRequest)} × slots today's CPU per request (higher is cheaper), ${r.cpuVsFloor} CPU × floor; slots today ${t.cpuVsFloor} CPU × floor`,
        );
    }
    const p50Ratio = (deep: string, base: string) =>
      results[deep] && results[base] ? round(results[deep].p50 / results[base].p50) : undefined;
    const ratios = {
      deepPageVsPage1P50: p50Ratio(deepContactsName, "GET /contacts page 1"),
      deepIncidentsVsPage1P50: p50Ratio(deepIncidentsName, "GET /incidents page 1"),
      heavyVsEmptyAvailabilityP50: p50Ratio(today, "available-appointments, empty org"),
    };
    for (const [label, ratio] of [
      [`contacts page ${DEPTH} rows deep / page 1`, ratios.deepPageVsPage1P50],
      [`incidents page ${incidentDepth} rows deep / page 1`, ratios.deepIncidentsVsPage1P50],
      ["available-appointments with 20,000 bookings / empty org", ratios.heavyVsEmptyAvailabilityP50],
    ] as const)
      if (ratio !== undefined) console.log(`p50 ratio, ${label}: ${ratio}`);

    // The write cases against the figures recorded before events existed (RECORDED).
    const health = results["GET /health"];
    const recorded = Object.fromEntries(
      Object.entries(RECORDED)
        .filter(([name]) => health && results[name])
        .map(([name, then]) => {
          const now = results[name]!;
          const share = round(now.reqPerSec / health!.reqPerSec);
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
    if (Object.keys(recorded).length > 0)
      console.log("a write with its event vs recorded (RECORDED; throughput as a share of /health's in each run):");
    for (const [name, r] of Object.entries(recorded))
      console.log(
        `  ${name}: ${results[name]!.reqPerSec} req/s = ${r.share} × /health, p50 ${r.p50} ms; vs recorded ${r.recordedShare} × /health (${round(RECORDED[name]!.share * RECORDED[name]!.health, 0)} req/s), p50 ${r.recordedP50} ms (${r.source}): ratio ${r.vsRecorded}`,
      );

    const webhooks = ONLY === undefined ? await webhookCases(server, stateDir, seeded) : null;
    if (webhooks && !webhooks.ok) process.exitCode = 1;

    const output = path.resolve(options.out);
    mkdirSync(path.dirname(output), { recursive: true });
    const figures = {
      at: new Date().toISOString(),
      commit: commitOf(),
      config: options.config ?? "wrangler.toml",
      only: options.only ?? null,
      seconds: SECONDS,
      connections: CONNECTIONS,
      pairs: PAIRS,
      seeding: {
        contacts: seeded.contacts,
        bookings: seeded.bookings,
        contactsSeconds: round(seeded.contactsSeconds),
        bookingsSeconds: round(seeded.bookingsSeconds),
        migrateSeconds,
      },
      coldStart: cold,
      floorCpu,
      results,
      ratios: { ...ratios, floorLoggedVsBare: logLine },
      recorded,
      webhooks: webhooks?.figures ?? null,
    };
    writeFileSync(output, `${JSON.stringify(figures, null, 2)}\n`);
    const held = Object.entries(caseResults);
    const passed = held.filter(([, r]) => r.pass).length;
    console.log(
      `every case against its shape floor (median of ${PAIRS} pair(s), spread; pass at ≥ ${TARGET_RATIO}): ${passed} of ${held.length} pass: ${held
        .map(([name, r]) => `${name} ${r.cpuVsFloor} (${r.spread!.join("–")}) ${r.pass ? "pass" : "FAIL"}`)
        .join("; ")}`,
    );
    console.log(`figures written to ${path.relative(process.cwd(), output)}`);
    if (Object.values(results).some((r) => r.errors > 0 || r.non2xx > 0)) process.exitCode = 1;
  } finally {
    await Promise.all([server?.stop(), floor?.stop()]);
    for (const dir of [stateDir, floorDir]) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
