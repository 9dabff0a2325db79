// `npm run bench:js [-- --rounds N] [-- --requests N]`: the worker's own
// JavaScript per request, without D1, workerd or wrangler around it. The
// app's `fetch` runs in this Node process (the same V8 as workerd) against
// D1 answers recorded once from a seeded local database and then replayed, so
// only hono, the middleware, zod, drizzle, the handlers and serialisation
// are timed — the part of `npm run bench`'s CPU per request that this code
// decides, which that figure's run-to-run noise (a fifth) hides. The floor
// worker's own code (test/bench/floor) runs on the same replay as the baseline.
// Prints µs of CPU per request (process.cpuUsage, the best of N rounds);
// --profile adds the heaviest functions of the timed rounds. An operation run
// as a tool (over MCP, Vapi and Retell) or with an agent key bound to its
// caller alternates its rounds with its twin's (over HTTP, an office key), and
// prints the median of their paired ratios (twin ÷ it; a tool's goal ≥ 0.9)
// and differences: a binding's µs, to set against the whole operation's CPU
// per request of `npm run bench` (goal: at most 3 % of it).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs, promisify } from "node:util";
import app from "../../src/app";
import { connect } from "../../src/cli/connect";
import type { Bindings } from "../../src/env";
import { applyMigrations, configWithRateLimit, ROOT } from "../e2e/harness";
import { credentialsOf } from "../support/http";
import { DAY } from "../support/time";
import { median } from "./coldstart";
import floor from "./floor/index";
import { seed } from "./seed";

const { values: options } = parseArgs({
  options: {
    rounds: { type: "string", default: "7" },
    requests: { type: "string", default: "1000" },
    only: { type: "string" },
    profile: { type: "boolean", default: false },
  },
});

type Answer = unknown;

/**
 * A D1 binding that records each statement's answer by method, SQL text and
 * values, then answers from the record: by the same values if it holds them
 * (one org's key is not another's), else by the SQL alone (a write's new ids
 * and times differ every time). Sessions are the binding itself.
 */
function replayD1(real: D1Database | undefined, record: Map<string, Answer>) {
  const answer = async (key: string, values: unknown, run: () => Promise<Answer>) => {
    const exact = `${key} ${JSON.stringify(values)}`;
    if (real) {
      const result = await run();
      record.set(key, result);
      record.set(exact, result);
    }
    if (record.has(exact)) return record.get(exact);
    if (!record.has(key)) throw new Error(`no recorded answer for ${key}`);
    return record.get(key);
  };
  const statement = (sql: string, params: unknown[] = []) => {
    const bound = () => real!.prepare(sql).bind(...params);
    return {
      sql,
      params,
      bound,
      bind: (...values: unknown[]) => statement(sql, values),
      raw: (options?: { columnNames?: boolean }) => answer(`raw ${sql}`, params, () => bound().raw(options as never)),
      all: () => answer(`all ${sql}`, params, () => bound().all()),
      first: (column?: string) => answer(`first ${column} ${sql}`, params, () => bound().first(column as never)),
      run: () => answer(`run ${sql}`, params, () => bound().run()),
    };
  };
  type Statement = ReturnType<typeof statement>;
  const d1 = {
    prepare: (sql: string) => statement(sql),
    batch: (statements: Statement[]) =>
      answer(
        `batch ${statements.map((s) => s.sql).join(";")}`,
        statements.map((s) => s.params),
        () => real!.batch(statements.map((s) => s.bound())),
      ),
    withSession: () => ({ ...d1, getBookmark: () => "00000001-00000002-00000003-abcdef" }),
  };
  return d1 as unknown as D1Database;
}

const env = (db: D1Database) =>
  ({
    DB: db,
    RATE_LIMITER: { limit: async () => ({ success: true }) },
    RATE_LIMIT_PERIOD: "60",
  }) as unknown as Bindings;
const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext;

interface Case {
  name: string;
  request: () => Request;
  floor?: boolean;
  /** The HTTP case this tool call or bound key's call runs as: its µs ÷ this case's are printed as the ratio. */
  twin?: string;
}

/** With --profile: a V8 CPU profile of the timed rounds (in this process), printed as the heaviest functions. */
async function startProfile() {
  const session = new Session();
  session.connect();
  const post = promisify(session.post.bind(session)) as (method: string, params?: object) => Promise<unknown>;
  await post("Profiler.enable");
  await post("Profiler.setSamplingInterval", { interval: 50 });
  await post("Profiler.start");
  return post;
}

async function printProfile(post: Awaited<ReturnType<typeof startProfile>>, requests: number) {
  const { profile } = (await post("Profiler.stop")) as {
    profile: {
      nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
      samples: number[];
      timeDeltas: number[];
    };
  };
  const self = new Map<number, number>();
  for (const [i, node] of profile.samples.entries())
    self.set(node, (self.get(node) ?? 0) + (profile.timeDeltas[i] ?? 0));
  const byFunction = new Map<string, number>();
  for (const { id, callFrame } of profile.nodes) {
    if (callFrame.functionName === "(idle)") continue;
    const where = callFrame.url.replace(`file://${ROOT}/`, "");
    const key = `${callFrame.functionName || "(anonymous)"} ${where}:${callFrame.lineNumber + 1}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + (self.get(id) ?? 0));
  }
  for (const [key, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 25))
    console.log(`    ${(us / requests).toFixed(1).padStart(6)} µs  ${key}`);
}

async function main() {
  const stateDir = mkdtempSync(path.join(tmpdir(), "fs-bench-js-"));
  const config = path.join(stateDir, "wrangler.bench.toml");
  const log = console.log;
  try {
    writeFileSync(config, configWithRateLimit(100_000_000).text);
    await applyMigrations(stateDir, config);
    const seeded = await seed(stateDir, 2_000, 300);
    const { d1, dispose } = await connect({ remote: false, persistTo: stateDir });
    // The floor's org, so that its INSERT passes the API schema's foreign key.
    await d1.prepare("INSERT INTO orgs (id, name, created_at) VALUES ('org_floor', 'Floor', 0)").run();
    const tomorrow = new Date(Date.now() + DAY).toISOString();
    const base = "http://127.0.0.1";
    const api =
      (pathname: string, org = seeded.heavy, body?: unknown) =>
      () =>
        new Request(base + pathname, {
          method: body ? "POST" : "GET",
          headers: { ...credentialsOf(org), ...(body ? { "Content-Type": "application/json" } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        });
    const lead = { firstName: "Bench", lastName: "Lead", email: "lead@example.com" };
    /** The operation with the agent key, bound to the caller at `phone`. */
    const bound = (pathname: string, phone: string, body?: unknown) => () => {
      const request = api(pathname, seeded.agent, body)();
      request.headers.set("X-Caller-Phone", phone);
      return request;
    };
    /**
     * The operation at `pathname` as a tool `tool` with `args`, over HTTP and then MCP, Vapi and
     * Retell, each reporting the caller as it can: X-Caller-Phone, or the platform's envelope.
     */
    const asTools = (name: string, pathname: string, tool: string, args: Record<string, unknown>): Case[] => {
      const call = { id: "call-bench", from_number: seeded.caller, customer: { number: seeded.caller } };
      const caller = { "X-Caller-Phone": seeded.caller, "X-Call-Id": call.id };
      const sent = (path: string, body: unknown, headers: Record<string, string>) => () => {
        const request = api(path, seeded.heavy, body)();
        for (const [header, value] of Object.entries(headers)) request.headers.set(header, value);
        return request;
      };
      const mcp = { Accept: "application/json, text/event-stream", ...caller };
      const vapi = {
        message: {
          type: "tool-calls",
          call,
          toolCallList: [{ id: "c1", type: "function", function: { name: tool, arguments: args } }],
        },
      };
      return [
        { name, request: sent(pathname, args, caller) },
        ...(
          [
            [
              "MCP",
              "/mcp",
              { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: tool, arguments: args } },
              mcp,
            ],
            ["Vapi", "/api/v1/integrations/vapi/tool-calls", vapi, {}],
            ["Retell", `/api/v1/integrations/retell/${tool}`, { name: tool, call, args }, {}],
          ] as const
        ).map(([transport, path, body, headers]) => ({
          name: `${name} over ${transport}`,
          twin: name,
          request: sent(path, body, headers),
        })),
      ];
    };
    // One record for all cases: a key verified while recording one case is verified again, on replay, in another.
    const record = new Map<string, Answer>();
    // A start in the technician-mode org with technicians free for its booking and its hold (each recorded twice).
    const fleetVisit = { insectName: "Ants", postalCode: seeded.fleet.postalCode };
    const offered = await app.fetch(
      api("/api/v1/ai-agent/available-appointments", seeded.fleet, { ...fleetVisit, dateTime: tomorrow, limit: 50 })(),
      env(replayD1(d1, record)),
      ctx,
    );
    const { slots } = (await offered.json()) as { slots: { start: string; remaining: number }[] };
    const fleetStart = slots.find((slot) => slot.remaining >= 4)?.start;
    if (!fleetStart) throw new Error("no start with four technicians free in the technician-mode org");
    const cases: Case[] = [
      { name: "floor: one D1 read, logged", floor: true, request: () => new Request(`${base}/logged?id=acct_floor`) },
      {
        name: "floor: one D1 write, logged",
        floor: true,
        request: () => new Request(`${base}/write`, { method: "POST", body: JSON.stringify(lead) }),
      },
      { name: "GET /health", request: () => new Request(`${base}/health`) },
      { name: "GET /accounts/{id}", request: api(`/api/v1/accounts/${seeded.heavy.accountId}`) },
      { name: "GET /contacts page 1", request: api("/api/v1/contacts?limit=50") },
      { name: "GET /incidents/{id}", request: api(`/api/v1/incidents/${seeded.callerIncident.id}`) },
      {
        name: "GET /incidents/{id}, bound agent key",
        twin: "GET /incidents/{id}",
        request: bound(`/api/v1/incidents/${seeded.callerIncident.id}`, seeded.callerIncident.phone),
      },
      { name: "GET /incidents page 1", request: api("/api/v1/incidents?limit=50") },
      ...asTools("find-caller", "/api/v1/ai-agent/find-caller", "find_caller", { phone: seeded.caller }),
      {
        name: "find-caller, bound agent key",
        twin: "find-caller",
        request: bound("/api/v1/ai-agent/find-caller", seeded.caller, { phone: seeded.caller }),
      },
      ...asTools("is-booking-available", "/api/v1/ai-agent/is-booking-available", "check_booking_availability", {
        dateTime: new Date(seeded.moves[0]!.to).toISOString(),
      }),
      {
        name: "available-appointments, empty org, 50",
        request: api("/api/v1/ai-agent/available-appointments", seeded.empty, { dateTime: tomorrow, limit: 50 }),
      },
      { name: "POST /leads", request: api("/api/v1/leads", seeded.heavy, lead) },
      {
        name: "POST /contacts",
        request: api("/api/v1/contacts", seeded.heavy, {
          firstName: "B",
          lastName: "C",
          accountId: seeded.heavy.accountId,
        }),
      },
      {
        name: "create-incident",
        request: api("/api/v1/ai-agent/create-incident", seeded.heavy, {
          dateTime: new Date(seeded.moves[1]!.to).toISOString(),
          clientName: "Bench Client",
          insectName: "Ants",
        }),
      },
      {
        name: "create-incident, technicians",
        request: api("/api/v1/ai-agent/create-incident", seeded.fleet, {
          ...fleetVisit,
          dateTime: fleetStart,
          clientName: "Bench Client",
        }),
      },
      {
        name: "hold-slot, technicians",
        request: api("/api/v1/ai-agent/hold-slot", seeded.fleet, { ...fleetVisit, dateTime: fleetStart }),
      },
    ].filter((c) => options.only === undefined || new RegExp(options.only).test(c.name));

    const rounds = Number(options.rounds);
    const requests = Number(options.requests);
    log(`µs of the worker's own JavaScript per request (best of ${rounds} rounds of ${requests}), D1 replayed:`);
    const serve = (c: Case, db: D1Database) =>
      c.floor ? floor.fetch(c.request() as never, { DB: db }) : app.fetch(c.request(), env(db), ctx);
    const replay = replayD1(undefined, record);
    let lastLine = "";
    /** µs of CPU per request over one round of `requests` replayed requests of `c`. */
    async function round(c: Case): Promise<number> {
      console.log = (line: string) => {
        lastLine = line;
      };
      const started = process.cpuUsage();
      for (let i = 0; i < requests; i++) {
        const response = await serve(c, replay);
        if (!response.ok)
          throw new Error(`${c.name}: answered ${response.status} on replay: ${await response.text()} (${lastLine})`);
        await response.arrayBuffer();
      }
      const used = process.cpuUsage(started);
      console.log = log;
      return (used.user + used.system) / requests;
    }
    // A case with the tool calls that are its twins: their rounds alternate, so that the
    // machine's drift over minutes weighs on both sides of a ratio alike.
    const groups = cases.filter((c) => !c.twin || !cases.some((t) => t.name === c.twin));
    for (const group of groups.map((head) => [head, ...cases.filter((c) => c.twin === head.name)])) {
      for (const c of group) {
        // Record (twice: the first request also verifies the key), then replay.
        for (let i = 0; i < 2; i++) {
          const response = await serve(c, replayD1(d1, record));
          const text = await response.text();
          // A tool's failure is a 200 over MCP (isError) and Vapi (error).
          if (!response.ok || /"isError":true|"error":"/.test(text))
            throw new Error(`${c.name}: ${response.status} ${text}`);
        }
      }
      const times = group.map(() => [] as number[]);
      // --profile: each case's rounds together, under its own profile.
      const [sequence, repeat] = options.profile ? [group, rounds] : [Array(rounds).fill(group).flat(), 1];
      for (const c of sequence as Case[]) {
        const session = options.profile ? await startProfile() : undefined;
        for (let r = 0; r < repeat; r++) times[group.indexOf(c)]!.push(await round(c));
        if (session) {
          log(`  ${c.name}:`);
          await printProfile(session, rounds * requests);
        }
      }
      for (const [i, c] of group.entries()) {
        const ratio = median(times[i]!.map((us, r) => times[0]![r]! / us));
        const more = median(times[i]!.map((us, r) => us - times[0]![r]!));
        const paired =
          i === 0
            ? ""
            : `  ${ratio.toFixed(2)} × its twin, ${more >= 0 ? "+" : ""}${more.toFixed(1)} µs (medians of ${rounds} paired rounds)`;
        log(
          `  ${c.name.padEnd(40)} ${Math.min(...times[i]!)
            .toFixed(1)
            .padStart(7)} µs${paired}`,
        );
      }
    }
    await dispose();
  } finally {
    console.log = log;
    rmSync(stateDir, { recursive: true, force: true });
  }
}

await main();
