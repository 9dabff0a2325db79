// A bounded mixed-traffic load run against a real `wrangler dev`, shared by the
// CI test (test/e2e/load.e2e.test.ts) and `npm run load` (test/bench/load.ts):
// `connections` concurrent clients (Node's fetch) send reads, writes, and
// bookings, reschedules and cancels racing for a few slots, for at most
// `durationMs` and `maxRequests`. The reschedules and cancels act on incidents
// the run itself booked, moving them into the same few
// slots the bookings fight over. Afterwards every guarantee is checked against
// what the clients saw and what D1 holds (test/bench/load-checks.ts): no 5xx,
// no lost write, no overbooked slot, every incident as its last 200 says, no
// refusal a full slot does not explain, no negative remaining.
//
// The server's rate limit (1,200 requests a minute per org, a fixed window of
// the wall clock) stays as deployed: the clients spread the load over several
// orgs and never send an org more than `perOrgPerMinute` in one window, so a
// 429 means the limiter counted more than it was sent — it is reported.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { applyMigrations, closeFolder, DevServer, freePort } from "../e2e/harness";
import { readResponse, toRequest } from "../support/http";
import { seededRandom } from "../support/random";
import { MINUTE } from "../support/time";
import { type Outcome, summarise, type Violations } from "./load-checks";
import { type LoadOrg, provisionOrgs, readRows } from "./load-state";

export const KINDS = [
  "list-contacts",
  "get-account",
  "available-appointments",
  "is-booking-available",
  "create-lead",
  "create-contact",
  "create-incident",
  "reschedule-incident",
  "cancel-incident",
  "get-incident",
] as const;
export type Kind = (typeof KINDS)[number];

/** The kinds that act on an incident the run booked earlier. */
const ON_INCIDENT = new Set<Kind>(["reschedule-incident", "cancel-incident", "get-incident"]);

/**
 * The mix, one kind drawn per request: bookings and reschedules twice as often
 * as the rest, so the slots keep filling while cancels and moves free places.
 */
const MIX: Kind[] = [
  "list-contacts",
  "get-account",
  "available-appointments",
  "is-booking-available",
  "create-lead",
  "create-contact",
  "create-incident",
  "create-incident",
  "reschedule-incident",
  "reschedule-incident",
  "cancel-incident",
  "get-incident",
];

export interface LoadOptions {
  durationMs: number;
  connections: number;
  orgs: number;
  maxRequests: number;
  /** What one org may be sent in one minute of the limiter's window; the rest of its 1,200 is left for the checks. */
  perOrgPerMinute?: number;
  /** How long /health alone is driven first, as the baseline the mixed figure is quoted against. */
  baselineMs?: number;
  seed?: number;
  log?: (line: string) => void;
}

export interface LoadReport extends Violations {
  requests: number;
  byKind: Record<Kind, number>;
  byStatus: Record<string, number>;
  /** Per kind, per status: e.g. byKindStatus["reschedule-incident"]["409"]. */
  byKindStatus: Record<Kind, Record<string, number>>;
  /** The 409s by kind and reason, e.g. "reschedule-incident cancelled". */
  refusals: Record<string, number>;
  elapsedMs: number;
  perSecond: number;
  p50: number;
  p99: number;
  healthPerSecond: number;
  /** The run ended before its time because every org had used its minute's share. */
  budgetExhausted: boolean;
  slots: number;
  places: number;
  booked: number;
  contested: number;
  /** Incidents D1 holds after the run, by status. */
  scheduled: number;
  cancelled: number;
  /** Incidents whose last two answers carry the same updatedAt (one millisecond) and different slots: D1 may hold either. */
  ties: number;
  seed: number;
}

export interface Slot {
  start: string;
  remaining: number;
}

/** Counts requests per org in the limiter's wall-clock window and refuses beyond the share. */
class Budget {
  private window = -1;
  private used = new Map<string, number>();
  constructor(private readonly perMinute: number) {}
  take(orgId: string): boolean {
    const window = Math.floor(Date.now() / 60_000);
    if (window !== this.window) {
      this.window = window;
      this.used.clear();
    }
    const used = this.used.get(orgId) ?? 0;
    if (used >= this.perMinute) return false;
    this.used.set(orgId, used + 1);
    return true;
  }
}

interface Sent {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: bodies of every operation are read
  body: any;
}

export async function send(
  baseUrl: string,
  org: LoadOrg,
  method: "GET" | "POST",
  urlPath: string,
  json?: unknown,
): Promise<Sent> {
  const response = await fetch(toRequest(`${baseUrl}${urlPath}`, org, { method, body: json }), {
    signal: AbortSignal.timeout(15_000),
  });
  const { status, body, text } = await readResponse(response);
  // A body that is not JSON is kept as text, for the report.
  return { status, body: body ?? (text || null) };
}

/** The request of one `kind` for `org`: method, path and body; `incident` is the run's own booking the change or read acts on. */
function requestOf(
  kind: Kind,
  org: LoadOrg,
  slots: Slot[],
  n: number,
  pick: <T>(items: T[]) => T,
  incident: string | undefined,
) {
  const account = pick(org.accounts);
  const id = encodeURIComponent(incident ?? "");
  switch (kind) {
    case "list-contacts":
      return {
        method: "GET" as const,
        path: n % 4 === 0 ? `/api/v1/contacts?limit=20&accountId=${account.id}` : "/api/v1/contacts?limit=20",
      };
    case "get-account":
      return { method: "GET" as const, path: `/api/v1/accounts/${account.id}` };
    case "available-appointments":
      return {
        method: "POST" as const,
        path: "/api/v1/ai-agent/available-appointments",
        json: { dateTime: new Date().toISOString(), limit: 5 },
      };
    case "is-booking-available":
      return {
        method: "POST" as const,
        path: "/api/v1/ai-agent/is-booking-available",
        json: { dateTime: pick(slots).start },
      };
    case "create-lead":
      return {
        method: "POST" as const,
        path: "/api/v1/leads",
        json: { firstName: "Load", lastName: `Lead ${n}`, email: `lead${n}@load.example`, estimatedValue: n },
      };
    case "create-contact":
      return {
        method: "POST" as const,
        path: "/api/v1/contacts",
        json: {
          firstName: "Load",
          lastName: `Contact ${n}`,
          email: `contact${n}@load.example`,
          ...(n % 2 === 0 ? { accountId: account.id } : {}),
        },
      };
    case "create-incident":
      return {
        method: "POST" as const,
        path: "/api/v1/ai-agent/create-incident",
        json: { dateTime: pick(slots).start, clientName: account.name, insectName: "Ants" },
      };
    case "reschedule-incident":
      // Into one of the same few slots the bookings race for; now and then the one it holds (200 unchanged).
      return {
        method: "POST" as const,
        path: `/api/v1/incidents/${id}/reschedule`,
        json: { dateTime: pick(slots).start },
      };
    case "cancel-incident":
      return {
        method: "POST" as const,
        path: `/api/v1/incidents/${id}/cancel`,
        json: n % 2 === 0 ? {} : { reason: `Load cancel ${n}` },
      };
    case "get-incident":
      return { method: "GET" as const, path: `/api/v1/incidents/${id}` };
  }
}

/** `connections` clients, each sending the next request `next` gives until the time or the count runs out (or `next` has none). */
async function drive(
  options: { connections: number; durationMs: number; maxRequests: number },
  next: (n: number) => (() => Promise<Outcome>) | null,
): Promise<{ outcomes: Outcome[]; elapsedMs: number; stoppedEarly: boolean }> {
  const outcomes: Outcome[] = [];
  const started = performance.now();
  const deadline = started + options.durationMs;
  let issued = 0;
  let stoppedEarly = false;
  const client = async () => {
    while (performance.now() < deadline && issued < options.maxRequests) {
      const request = next(issued++);
      if (request === null) {
        stoppedEarly = true;
        return;
      }
      outcomes.push(await request());
    }
  };
  await Promise.all(Array.from({ length: options.connections }, client));
  return { outcomes, elapsedMs: performance.now() - started, stoppedEarly };
}

/**
 * One timed request; no answer at all (connection error, time-out) is status 0.
 * `sentAt` is taken before the request leaves and `receivedAt` after its answer
 * is read (one clock, performance.now()), so whatever the server did for it
 * happened between the two.
 */
async function timed(
  kind: Outcome["kind"],
  org: LoadOrg | undefined,
  call: () => Promise<Sent>,
  sentBody?: unknown,
  incident?: string,
): Promise<Outcome> {
  const sentAt = performance.now();
  const request = { kind, org, sentBody, incident, sentAt };
  try {
    const { status, body } = await call();
    const receivedAt = performance.now();
    return { ...request, status, body, receivedAt, ms: receivedAt - sentAt };
  } catch (error) {
    const receivedAt = performance.now();
    return { ...request, status: 0, body: String(error), receivedAt, ms: receivedAt - sentAt };
  }
}

async function health(baseUrl: string): Promise<Sent> {
  const response = await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(15_000) });
  await response.arrayBuffer();
  return { status: response.status, body: null };
}

/** The whole run: state, server, orgs, baseline, mixed traffic, checks; always stops the server. */
export async function runLoad(options: LoadOptions): Promise<LoadReport> {
  const log = options.log ?? (() => {});
  const seed = options.seed ?? 20261122;
  const rand = seededRandom(seed);
  const pick = <T>(items: T[]): T => items[Math.floor(rand() * items.length)]!;
  const budget = new Budget(options.perOrgPerMinute ?? 1_000);
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-load-"));
  let server: DevServer | undefined;
  try {
    await applyMigrations(stateDir);
    // Its proxy closed (inside vitest, the harness keeps one per folder): provisionOrgs and readRows open their own.
    await closeFolder(stateDir);
    server = await DevServer.start(stateDir, await freePort());
    log("load: migrated, server started");
    const orgs = await provisionOrgs(stateDir, options.orgs);
    const baseUrl = server.baseUrl;
    log(`load: server ready, ${orgs.length} orgs provisioned`);

    // The few slots each org can book, as the API lists them (at least 10 minutes ahead, so none passes during the run).
    const slotsOf = new Map<string, Slot[]>();
    for (const org of orgs) {
      budget.take(org.orgId);
      const { status, body } = await send(baseUrl, org, "POST", "/api/v1/ai-agent/available-appointments", {
        dateTime: new Date(Date.now() + 10 * MINUTE).toISOString(),
        limit: 100,
      });
      if (status !== 200) throw new Error(`listing the slots of ${org.orgId}: ${status} ${JSON.stringify(body)}`);
      slotsOf.set(org.orgId, body.slots);
    }

    const baselineMs = options.baselineMs ?? 1_500;
    const baseline = await drive(
      { connections: options.connections, durationMs: baselineMs, maxRequests: Number.MAX_SAFE_INTEGER },
      () => () => timed("health", undefined, () => health(baseUrl)),
    );
    const healthPerSecond = (baseline.outcomes.filter((o) => o.status === 200).length / baseline.elapsedMs) * 1000;
    log(
      `load: /health alone ${healthPerSecond.toFixed(0)} req/s; mixed traffic for ${options.durationMs} ms with ${options.connections} connections`,
    );

    // Per org, the incidents the run booked (answered 200), in the order the answers came: what changes and reads act on.
    const bookedBy = new Map<string, string[]>(orgs.map((org) => [org.orgId, []]));
    const run = await drive(
      { connections: options.connections, durationMs: options.durationMs, maxRequests: options.maxRequests },
      (n) => {
        const drawn = pick(MIX);
        const first = Math.floor(rand() * orgs.length);
        for (let i = 0; i < orgs.length; i++) {
          const org = orgs[(first + i) % orgs.length]!;
          if (!budget.take(org.orgId)) continue;
          const own = bookedBy.get(org.orgId)!;
          // A change or read of an incident needs one this org booked; until it has one, it books instead.
          const kind: Kind = ON_INCIDENT.has(drawn) && own.length === 0 ? "create-incident" : drawn;
          const incident = ON_INCIDENT.has(kind) ? pick(own) : undefined;
          const request = requestOf(kind, org, slotsOf.get(org.orgId)!, n, pick, incident);
          return async () => {
            const outcome = await timed(
              kind,
              org,
              () => send(baseUrl, org, request.method, request.path, request.json),
              request.json,
              incident,
            );
            if (kind === "create-incident" && outcome.status === 200 && typeof outcome.body?.id === "string")
              own.push(outcome.body.id);
            return outcome;
          };
        }
        return null;
      },
    );
    log(`load: ${run.outcomes.length} requests in ${run.elapsedMs.toFixed(0)} ms; checking`);

    const stored = await readRows(
      stateDir,
      orgs.map((org) => org.orgId),
    );
    // The checks' own requests stay within each org's share of the limiter too.
    const checkAs = (org: LoadOrg, method: "GET" | "POST", urlPath: string, json?: unknown) =>
      budget.take(org.orgId)
        ? send(baseUrl, org, method, urlPath, json)
        : Promise.reject(new Error(`the checks used up the rate budget of ${org.orgId}`));
    const report = await summarise({ orgs, slotsOf, outcomes: run.outcomes, stored, send: checkAs });
    return {
      ...report,
      elapsedMs: run.elapsedMs,
      perSecond: (run.outcomes.length / run.elapsedMs) * 1000,
      healthPerSecond,
      budgetExhausted: run.stoppedEarly,
      seed,
    };
  } catch (error) {
    if (server) log(`load: wrangler dev output:\n${server.output().slice(-4_000)}`);
    throw error;
  } finally {
    await server?.stop();
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}

/** The one figures line of a run. */
export function figures(r: LoadReport): string {
  const kinds = KINDS.map((kind) => {
    const statuses = Object.entries(r.byKindStatus[kind])
      .map(([status, n]) => `${status}×${n}`)
      .join(" ");
    return `${kind} ${r.byKind[kind]}${statuses ? ` (${statuses})` : ""}`;
  }).join(", ");
  const statuses = Object.entries(r.byStatus)
    .map(([status, n]) => `${status}×${n}`)
    .join(" ");
  const refusals = Object.entries(r.refusals)
    .map(([what, n]) => `${what} ${n}`)
    .join(", ");
  return (
    `LOAD ${r.requests} requests in ${(r.elapsedMs / 1000).toFixed(1)} s = ${r.perSecond.toFixed(0)} req/s ` +
    `(${((r.perSecond / r.healthPerSecond) * 100).toFixed(0)}% of /health alone, ${r.healthPerSecond.toFixed(0)} req/s) | ${kinds} | statuses ${statuses} | 409s: ${refusals || "none"} | ` +
    `p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms | 5xx ${r.serverErrors}, network errors ${r.networkErrors}, unexpected ${r.unexpected.length}, ` +
    `lost writes ${r.lostWrites.length}, incidents not as their last 200 ${r.wrongState.length}, overbooked slots ${r.overbooked.length}, ` +
    `refusals no full slot or cancel explains ${r.wrongRefusals.length}, negative remaining ${r.negativeRemaining}, remaining read back wrong ${r.remainingWrong.length}, ` +
    `unacknowledged rows ${r.unacknowledged.length}, 429s ${r.tooManyRequests} | at the end ${r.booked} of ${r.places} places held in ${r.slots} slots ` +
    `(incidents ${r.scheduled} scheduled, ${r.cancelled} cancelled; ${r.ties} last-answer ties), ${r.contested} slots refused as full` +
    `${r.budgetExhausted ? " | stopped early: every org used its share of the rate limit" : ""} | seed ${r.seed}`
  );
}
