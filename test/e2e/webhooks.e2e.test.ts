// End-to-end proof of docs/webhooks.md against a real `wrangler dev` (its local
// queue, its cron trigger URL) and a real receiver: a node:http server that
// verifies every request with the `standardwebhooks` package, records it,
// and answers as each test scripts. Endpoints and secrets come from the real
// admin CLI. Proven here: 500 writes from 20 concurrent clients each reach the
// receiver, verified, and match the events list (commit order, once each);
// a 500 is retried after 5 s; a 410 disables the endpoint for good; a replay
// is sent by the minute's sweep; a rotated secret signs beside the old one.
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seededRandom } from "../support/random";
import { OPEN_ALWAYS } from "../support/schedules";
import { slotAt } from "../support/time";
import {
  type ApiResponse,
  admin,
  applyMigrations,
  DevServer,
  freePort,
  jsonLine,
  type RequestOptions,
  request,
  type Tenant,
} from "./harness";

// biome-ignore lint/suspicious/noExplicitAny: events and incidents are arbitrary JSON here
type Json = any;

const NOW = Date.now();
const CLIENTS = 20;
const BOOKINGS = 300;
const CANCELS = 100;
const RESCHEDULES = 100;
/** Bookings made before any cancel or reschedule is sent, so that those always find an incident soon. */
const HEAD_START = 60;
/** Hourly slots of days 2–4 (UTC), each with room for 50: none fills. */
const SLOTS = Array.from({ length: 72 }, (_, i) => slotAt(2 + Math.floor(i / 24), i % 24, NOW));
const CAPACITY = 50;

// ---------------------------------------------------------------- the receiver

interface Receipt {
  path: string;
  id: string;
  at: number;
  method: string;
  contentType: string | undefined;
  headers: Record<string, string>;
  body: string;
  /** The secrets registered for the path that verify this request, in the order registered. */
  verifiedWith: string[];
  event: Json;
  status: number;
}

interface Reply {
  status: number;
  headers?: Record<string, string>;
}

/** How a path answers the `nth` (0-based) request it gets for a webhook-id. */
type Script = (id: string, nth: number) => Reply;

const answerOk: Script = () => ({ status: 200 });

class Receiver {
  readonly receipts: Receipt[] = [];
  /** Path → the secrets a request to it may be signed with (every request is checked against each). */
  readonly secrets = new Map<string, string[]>();
  readonly scripts = new Map<string, Script>();

  private constructor(
    private readonly server: http.Server,
    readonly port: number,
  ) {}

  static async start(): Promise<Receiver> {
    const port = await freePort();
    const server = http.createServer();
    const receiver = new Receiver(server, port);
    server.on("request", (req, res) => receiver.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", resolve);
    });
    return receiver;
  }

  url(hookPath: string): string {
    return `http://127.0.0.1:${this.port}${hookPath}`;
  }

  of(hookPath: string, id?: string): Receipt[] {
    return this.receipts.filter((r) => r.path === hookPath && (id === undefined || r.id === id));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const at = Date.now();
      const body = Buffer.concat(chunks).toString("utf8");
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers))
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
      const hookPath = req.url ?? "";
      const id = headers["webhook-id"] ?? "";
      const verifiedWith = (this.secrets.get(hookPath) ?? []).filter((secret) => {
        try {
          new Webhook(secret).verify(body, headers);
          return true;
        } catch {
          return false;
        }
      });
      let event: Json = null;
      try {
        event = JSON.parse(body);
      } catch {
        // recorded as null: the test sees it
      }
      const nth = this.of(hookPath, id).length;
      const reply = (this.scripts.get(hookPath) ?? answerOk)(id, nth);
      this.receipts.push({
        path: hookPath,
        id,
        at,
        method: req.method ?? "",
        contentType: headers["content-type"],
        headers,
        body,
        verifiedWith,
        event,
        status: reply.status,
      });
      res.writeHead(reply.status, { "Content-Type": "text/plain", ...reply.headers });
      res.end(reply.status < 300 ? "ok" : `scripted ${reply.status}`);
    });
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

// ---------------------------------------------------------------- the suite's state

let stateDir: string;
let server: DevServer | undefined;
let receiver: Receiver | undefined;

interface Hook {
  org: Tenant;
  path: string;
  endpointId: string;
  secret: string;
}

let volume: Hook;
// The tests after the volume run each use endpoints subscribed to the one
// event type they write, so they never see each other's events: in the
// volume org (whose endpoint takes incident events only) and in one more org.
let replay: Hook;
let rotation: Hook;
let retry: Hook;
let gone: Hook;
/** Beside `gone`, subscribed to the same type: shows when an event of that type was sent. */
let witness: Hook;

interface Added {
  endpointId: string;
  url: string;
  events: string[];
  secret: string;
}

const cliJson = async <T>(args: string[], what: string): Promise<T> => jsonLine<T>(await admin(stateDir, args), what);

const createOrg = (name: string) => cliJson<Tenant>(["org", "create", "--name", name, "--time-zone", "UTC"], name);

async function addHook(org: Tenant, hookPath: string, types: string[]): Promise<Hook> {
  const url = receiver!.url(hookPath);
  const added = await cliJson<Added>(
    ["webhook", "add", "--org", org.orgId, "--url", url, "--events", types.join(",")],
    `webhook add ${hookPath}`,
  );
  expect(added).toMatchObject({ url, events: types });
  receiver!.secrets.set(hookPath, [added.secret]);
  return { org, path: hookPath, endpointId: added.endpointId, secret: added.secret };
}

beforeAll(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-e2e-webhooks-"));
  const dir = stateDir;
  receiver = await Receiver.start();
  // Migrations, the server, then the orgs and endpoints (two CLI chains): a
  // workerd starting beside another process's write can die of SQLITE_BUSY.
  await applyMigrations(dir);
  const dev = await DevServer.start(dir, await freePort(), ["--test-scheduled"]); // /__scheduled runs the Cron Trigger (src/cli/dev.ts says why)
  server = dev;
  const volumeOrg = createOrg("Webhooks volume");
  const provisionVolume = async () => {
    const org = await volumeOrg;
    const schedule = path.join(dir, "schedule.json");
    fs.writeFileSync(
      schedule,
      JSON.stringify({
        slotMinutes: 60,
        capacity: CAPACITY,
        minNoticeMinutes: 0,
        horizonDays: 30,
        weeklyHours: OPEN_ALWAYS,
      }),
    );
    jsonLine(await admin(dir, ["schedule", "set", "--org", org.orgId, "--file", schedule]), "schedule set");
    volume = await addHook(org, "/hook/volume", ["incident.created", "incident.rescheduled", "incident.cancelled"]);
    replay = await addHook(org, "/hook/replay", ["lead.created"]);
  };
  const provisionOthers = async () => {
    const org = await createOrg("Webhooks failures");
    retry = await addHook(org, "/hook/retry", ["lead.created"]);
    gone = await addHook(org, "/hook/gone", ["contact.created"]);
    witness = await addHook(org, "/hook/witness", ["contact.created"]);
    rotation = await addHook(await volumeOrg, "/hook/rotation", ["contact.created"]);
  };
  await Promise.all([provisionVolume(), provisionOthers()]);
}, 180_000);

afterAll(async () => {
  await server?.stop();
  await receiver?.stop();
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

// ---------------------------------------------------------------- helpers

const call = (tenant: Tenant, urlPath: string, options: RequestOptions = {}): Promise<ApiResponse> => {
  if (!server) throw new Error("the server did not start");
  return request(server.baseUrl, tenant, urlPath, options);
};

/** Polls `probe` every 100 ms until it gives a value; fails after `timeoutMs`. */
async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** Every event of the org (of `type` if given), paged to the end; the final cursor then gives nothing more. */
async function allEvents(tenant: Tenant, type?: string): Promise<Json[]> {
  const all: Json[] = [];
  const base: Record<string, string> = type ? { type } : {};
  let cursor: string | undefined;
  for (;;) {
    const query = new URLSearchParams({ ...base, limit: "200", ...(cursor ? { cursor } : {}) });
    const res = await call(tenant, `/api/v1/events?${query}`);
    expect(res.status, res.text).toBe(200);
    all.push(...res.body.data);
    expect(res.body.nextCursor).toEqual(expect.any(String));
    cursor = res.body.nextCursor;
    if (!res.body.hasMore) break;
  }
  const after = await call(tenant, `/api/v1/events?${new URLSearchParams({ ...base, cursor: cursor! })}`);
  expect(after.status, after.text).toBe(200);
  expect(after.body).toMatchObject({ data: [], hasMore: false });
  return all;
}

/** Writes a lead or a contact and answers the event it recorded, as the events list shows it. */
async function write(tenant: Tenant, type: "lead.created" | "contact.created"): Promise<Json> {
  const res =
    type === "lead.created"
      ? await call(tenant, "/api/v1/leads", { body: { companyName: "Hook Test" } })
      : await call(tenant, "/api/v1/contacts", { body: { firstName: "Hook" } });
  expect(res.status, `${res.text}\n${server!.output().slice(-3_000)}`).toBe(200);
  const recorded = (await allEvents(tenant, type)).filter((e) => e.data.id === res.body.id);
  expect(recorded).toEqual([expect.objectContaining({ type, data: res.body })]);
  return recorded[0];
}

const firstReceipt = (hook: Hook, id: string) =>
  until(`${hook.path} receives ${id}`, () => receiver!.of(hook.path, id)[0], 15_000);

/** A request as a Standard Webhooks receiver must get it: POST, JSON, signed by the path's secret(s), the event as listed. */
function expectSigned(receipt: Receipt, event: Json, secrets: string[]) {
  expect(receipt).toMatchObject({ method: "POST", id: event.id, verifiedWith: secrets });
  expect(receipt.contentType).toMatch(/^application\/json/);
  expect(receipt.event).toEqual(event);
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;

// ---------------------------------------------------------------- volume

type Kind = "book" | "cancel" | "reschedule";

/** What the events list must hold for one incident: the write's answers, in the order they were made. */
interface Tracked {
  id: string;
  dateTime: string;
  busy: boolean;
  cancelled: boolean;
  expected: { type: string; data: Json; previous?: string }[];
}

describe("volume: 500 writes from 20 clients", () => {
  it("every event reaches the receiver verified, once per id at least, matching the events list in commit order", async () => {
    const rand = seededRandom(20261124);
    const rest: Kind[] = [
      ...Array<Kind>(BOOKINGS - HEAD_START).fill("book"),
      ...Array<Kind>(CANCELS).fill("cancel"),
      ...Array<Kind>(RESCHEDULES).fill("reschedule"),
    ];
    for (let i = rest.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [rest[i], rest[j]] = [rest[j]!, rest[i]!];
    }
    const ops: Kind[] = [...Array<Kind>(HEAD_START).fill("book"), ...rest];
    const tracked = new Map<string, Tracked>();
    const failures: string[] = [];
    const ok: Record<Kind, number> = { book: 0, cancel: 0, reschedule: 0 };
    let next = 0;
    let booked = 0;

    /** An incident no other client is changing, still scheduled; waits (bounded) while bookings are in flight. */
    const acquire = async (): Promise<Tracked> => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const free = [...tracked.values()].filter((t) => !t.busy && !t.cancelled);
        if (free.length > 0) {
          const pick = free[Math.floor(rand() * free.length)]!;
          pick.busy = true;
          return pick;
        }
        if (Date.now() > deadline) throw new Error("no incident free to change for 30 s");
        await sleep(5);
      }
    };

    const perform = async (kind: Kind) => {
      if (kind === "book") {
        const dateTime = SLOTS[booked++ % SLOTS.length]!;
        const res = await call(volume.org, "/api/v1/ai-agent/create-incident", {
          body: { dateTime, clientName: `Volume ${booked}`, insectName: "ants" },
        });
        if (res.status !== 200) return void failures.push(`book → ${res.status} ${res.text}`);
        ok.book++;
        const { remaining: _, ...appointment } = res.body.appointment;
        const data = { ...res.body, appointment };
        tracked.set(res.body.id, {
          id: res.body.id,
          dateTime,
          busy: false,
          cancelled: false,
          expected: [{ type: "incident.created", data }],
        });
        return;
      }
      const incident = await acquire();
      try {
        if (kind === "cancel") {
          const res = await call(volume.org, `/api/v1/incidents/${incident.id}/cancel`, { body: {} });
          if (res.status !== 200) return void failures.push(`cancel → ${res.status} ${res.text}`);
          ok.cancel++;
          incident.cancelled = true;
          incident.expected.push({ type: "incident.cancelled", data: res.body });
        } else {
          const from = SLOTS.indexOf(incident.dateTime);
          const dateTime = SLOTS[(from + 1 + Math.floor(rand() * (SLOTS.length - 1))) % SLOTS.length]!;
          const res = await call(volume.org, `/api/v1/incidents/${incident.id}/reschedule`, { body: { dateTime } });
          if (res.status !== 200) return void failures.push(`reschedule → ${res.status} ${res.text}`);
          ok.reschedule++;
          incident.expected.push({ type: "incident.rescheduled", data: res.body, previous: incident.dateTime });
          incident.dateTime = dateTime;
        }
      } finally {
        incident.busy = false;
      }
    };

    const started = Date.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < ops.length) {
          const kind = ops[next++]!;
          await perform(kind).catch((error: unknown) => failures.push(`${kind} → ${String(error)}`));
        }
      }),
    );
    const written = Date.now();
    const succeeded = ok.book + ok.cancel + ok.reschedule;
    // Capacity 50 in every slot: nothing is ever refused.
    expect(failures).toEqual([]);
    expect(succeeded).toBe(ops.length);

    const events = await allEvents(volume.org);
    const ids = events.map((e) => e.id);
    expect(new Set(ids).size, "every event once in the list").toBe(ids.length);
    expect(events).toHaveLength(succeeded);

    // Every incident's events in the list's order are its writes in the order they were made, each with the answer.
    const byIncident = new Map<string, Json[]>();
    for (const event of events) byIncident.set(event.data.id, [...(byIncident.get(event.data.id) ?? []), event]);
    expect(byIncident.size).toBe(tracked.size);
    for (const incident of tracked.values()) {
      const listed = byIncident.get(incident.id) ?? [];
      expect(
        listed.map((e) => ({ type: e.type, data: e.data, previous: e.previous?.dateTime })),
        incident.id,
      ).toEqual(incident.expected.map((x) => ({ type: x.type, data: x.data, previous: x.previous })));
      const stamps = listed.map((e) => Date.parse(e.timestamp));
      expect(stamps, incident.id).toEqual([...stamps].sort((a, b) => a - b));
    }

    const wanted = new Set(ids);
    await until(
      "the receiver has every event",
      () => (wanted.size === new Set(receiver!.of(volume.path).map((r) => r.id)).size ? true : undefined),
      60_000,
    );
    const received = receiver!.of(volume.path);
    const unverified = received.filter((r) => r.verifiedWith.length !== 1);
    expect(unverified.map((r) => `${r.id}: ${r.headers["webhook-signature"]}`)).toEqual([]);
    expect(new Set(received.map((r) => r.id))).toEqual(wanted);
    const byId = new Map(events.map((e) => [e.id, e]));
    for (const receipt of received) expectSigned(receipt, byId.get(receipt.id), [volume.secret]);

    const first = new Map<string, number>();
    for (const receipt of received) if (!first.has(receipt.id)) first.set(receipt.id, receipt.at);
    const latencies = events.map((e) => first.get(e.id)! - Date.parse(e.timestamp)).sort((a, b) => a - b);
    const lastReceipt = Math.max(...first.values());
    const duplicates = received.length - wanted.size;
    // stderr, not console.log: the config keeps console output of failing tests only.
    process.stderr.write(
      `webhooks volume: ${succeeded} writes (${ok.book} bookings, ${ok.cancel} cancels, ${ok.reschedule} reschedules) by ${CLIENTS} clients in ${((written - started) / 1000).toFixed(1)} s → ${events.length} events; all received ${((lastReceipt - written) / 1000).toFixed(1)} s after the last write, ${(events.length / ((lastReceipt - started) / 1000)).toFixed(1)} events/s; commit → receipt p50 ${quantile(latencies, 0.5)} ms, p99 ${quantile(latencies, 0.99)} ms, max ${latencies.at(-1)} ms; ${received.length} requests, ${duplicates} duplicate(s)\n`,
    );
  }, 150_000);
});

// ---------------------------------------------------------------- failures and operations

interface Delivery {
  eventId: string;
  endpointId: string;
  attempt: number;
  status: string;
  httpStatus: number | null;
  durationMs: number;
  error: string | null;
  at: string;
}

const deliveries = (hook: Hook, args: string[]) =>
  cliJson<{ deliveries: Delivery[] }>(
    ["webhook", "deliveries", "--org", hook.org.orgId, ...args],
    `webhook deliveries ${args.join(" ")}`,
  ).then((r) => r.deliveries);

// Independent orgs and paths, each mostly waiting on the queue: run side by
// side. Their CLI commands only read: a CLI write (replay, rotate-secret)
// beside a write of the server's can meet its lock on the one local SQLite
// file, which the server answers with a 500, so those tests run alone below.
describe.concurrent("delivery failures", () => {
  it("a 500 is retried 5 s later and then delivered; both attempts are logged", async () => {
    receiver!.scripts.set(retry.path, (_id, nth) => ({ status: nth === 0 ? 500 : 200 }));
    const event = await write(retry.org, "lead.created");
    const [firstTry, secondTry] = await until(
      "two requests for the event",
      () => {
        const got = receiver!.of(retry.path, event.id);
        return got.length >= 2 ? got : undefined;
      },
      40_000,
    );
    expect([firstTry!.status, secondTry!.status]).toEqual([500, 200]);
    expectSigned(firstTry!, event, [retry.secret]);
    expectSigned(secondTry!, event, [retry.secret]);
    const gap = secondTry!.at - firstTry!.at;
    expect(gap).toBeGreaterThanOrEqual(5_000);
    expect(gap).toBeLessThan(30_000);

    const logged = await until(
      "both attempts logged",
      async () => {
        const rows = await deliveries(retry, ["--event", event.id]);
        return rows.length >= 2 ? rows : undefined;
      },
      20_000,
    );
    const row = {
      eventId: event.id,
      endpointId: retry.endpointId,
      durationMs: expect.any(Number),
      at: expect.any(String),
    };
    expect(logged).toEqual([
      { ...row, attempt: 2, status: "delivered", httpStatus: 200, error: null },
      { ...row, attempt: 1, status: "retrying", httpStatus: 500, error: expect.stringMatching(/500/) },
    ]);
    expect(receiver!.of(retry.path, event.id)).toHaveLength(2);
  }, 90_000);

  it("a 410 disables the endpoint: listed as disabled, and a later event is not sent to it", async () => {
    receiver!.scripts.set(gone.path, () => ({ status: 410 }));
    const event = await write(gone.org, "contact.created");
    const refused = await firstReceipt(gone, event.id);
    expectSigned(refused, event, [gone.secret]);
    expectSigned(await firstReceipt(witness, event.id), event, [witness.secret]);

    const listed = await until(
      "the endpoint listed as disabled",
      async () => {
        const { endpoints } = await cliJson<{ endpoints: { endpointId: string; status: string }[] }>(
          ["webhook", "list", "--org", gone.org.orgId],
          "webhook list",
        );
        const mine = endpoints.find((e) => e.endpointId === gone.endpointId);
        return mine?.status === "disabled" ? endpoints : undefined;
      },
      20_000,
    );
    expect(listed.find((e) => e.endpointId === witness.endpointId)?.status).toBe("enabled");

    const later = await write(gone.org, "contact.created");
    expectSigned(await firstReceipt(witness, later.id), later, [witness.secret]);
    // The witness got it, so the event was sent; anything else of its batch
    // would come with it. Waiting 3 s more, and past the first retry's 5 s
    // after the 410, also shows that the 410 itself was not retried.
    await sleep(Math.max(3_000, refused.at + 6_000 - Date.now()));
    expect(receiver!.of(gone.path).map((r) => r.id)).toEqual([event.id]);
  }, 90_000);
});

describe("operations", () => {
  it("a replay is sent by the minute's sweep: the same webhook-id again, verified", async () => {
    const event = await write(replay.org, "lead.created");
    expectSigned(await firstReceipt(replay, event.id), event, [replay.secret]);

    const queued = await cliJson<object>(
      ["webhook", "replay", "--org", replay.org.orgId, "--event", event.id],
      "replay",
    );
    expect(queued).toEqual({ eventId: event.id, queued: 1 });
    // wrangler dev runs no cron by itself: nothing is sent until the sweep.
    expect(receiver!.of(replay.path, event.id)).toHaveLength(1);
    const trigger = await fetch(`${server!.baseUrl}/__scheduled?cron=*+*+*+*+*`);
    await trigger.arrayBuffer();
    expect(trigger.status).toBe(200);
    const again = await until("the replayed request", () => receiver!.of(replay.path, event.id)[1], 15_000);
    expectSigned(again, event, [replay.secret]);
  }, 90_000);

  it("after rotate-secret the next delivery carries two signatures: the new secret's and the old one's", async () => {
    const rotated = await cliJson<{ endpointId: string; secret: string }>(
      ["webhook", "rotate-secret", "--org", rotation.org.orgId, "--endpoint", rotation.endpointId],
      "rotate-secret",
    );
    expect(rotated).toEqual({ endpointId: rotation.endpointId, secret: expect.stringMatching(/^whsec_/) });
    expect(rotated.secret).not.toBe(rotation.secret);
    receiver!.secrets.set(rotation.path, [rotation.secret, rotated.secret]);

    const event = await write(rotation.org, "contact.created");
    const receipt = await firstReceipt(rotation, event.id);
    expectSigned(receipt, event, [rotation.secret, rotated.secret]);
    expect(receipt.headers["webhook-signature"]!.split(" ")).toEqual([
      expect.stringMatching(/^v1,/),
      expect.stringMatching(/^v1,/),
    ]);
    // The receiver's check can fail: a secret of no endpoint does not verify it.
    const stranger = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
    expect(() => new Webhook(stranger).verify(receipt.body, receipt.headers)).toThrow();
  }, 60_000);
});
