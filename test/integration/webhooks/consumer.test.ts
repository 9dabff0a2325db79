// The delivery queue's consumer (docs/webhooks.md, "Retries"), driven directly:
// a batch made with createMessageBatch goes to the worker's `queue` handler
// with the real D1; the receiver is a stub of the global fetch whose answers
// each test scripts. State comes from real code: orgs from the test helpers,
// endpoints and their secrets from the admin CLI's commands, events from real
// writes through the app.
//
// Events are written while no endpoint of their org listens, then the
// endpoints are added: a write with a subscribed endpoint sends to the real
// queue, whose consumer (this worker, wrangler.toml) runs in the background of
// the test isolate within about a second and would call the stubbed fetch too.
import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { and, desc, eq, isNotNull } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it, vi } from "vitest";
import { events, webhookSecrets } from "../../../drizzle/schema";
import { WEBHOOK_COMMANDS } from "../../../src/cli/webhooks";
import type { Bindings } from "../../../src/env";
import worker from "../../../src/index";
import { DEV_WEBHOOK_KEY } from "../../../src/webhooks/key";
import type { DeliveryMessage } from "../../../src/webhooks/queue";
import { sign, toBase64 } from "../../../src/webhooks/signature";
import { sweep } from "../../../src/webhooks/sweep";
import { fakeQueue } from "../../support/queue";
import { call } from "../../support/request";
import { db, openTenant, type Tenant } from "../../support/tenants";

const workerEnv = env as unknown as Bindings;
const consumer = worker as ExportedHandler<Bindings, DeliveryMessage>;
const cliEnv = { webhookKey: () => workerEnv.WEBHOOK_SECRET_KEY! };

afterEach(() => {
  vi.restoreAllMocks();
});

interface StoredEvent {
  id: string;
  /** The event JSON as stored: what a delivery must send byte for byte. */
  body: string;
  createdAt: number;
}

/** A new org with `count` lead.created events, written while it has no endpoint. */
async function orgWithEvents(count = 1): Promise<{ t: Tenant; recorded: StoredEvent[] }> {
  const t = await openTenant();
  for (let i = 0; i < count; i++) {
    const res = await call(t, "/api/v1/leads", { body: { firstName: `Lee ${i}`, email: `lee${i}@example.com` } });
    expect(res.status, res.text).toBe(200);
  }
  const listed = await call(t, "/api/v1/events");
  expect(listed.status, listed.text).toBe(200);
  const rows = await db().select().from(events).where(eq(events.orgId, t.orgId)).orderBy(events.seq);
  expect(rows.map((row) => row.id)).toEqual(listed.body.data.map((e: { id: string }) => e.id));
  expect(rows.map((row) => JSON.parse(row.body))).toEqual(listed.body.data);
  return { t, recorded: rows.map(({ id, body, createdAt }) => ({ id, body, createdAt })) };
}

interface Endpoint {
  endpointId: string;
  url: string;
  secret: string;
}

const addEndpoint = async (t: Tenant, url = "https://hooks.example.com/in") =>
  (await WEBHOOK_COMMANDS["webhook add"]!(db(), { org: t.orgId, url }, cliEnv)) as Endpoint;

const rotate = async (t: Tenant, endpoint: string) =>
  ((await WEBHOOK_COMMANDS["webhook rotate-secret"]!(db(), { org: t.orgId, endpoint }, cliEnv)) as { secret: string })
    .secret;

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

/** `webhook deliveries` of the org, oldest first. */
const deliveries = async (t: Tenant, endpoint?: string) =>
  (
    (await WEBHOOK_COMMANDS["webhook deliveries"]!(
      db(),
      { org: t.orgId, ...(endpoint ? { endpoint } : {}) },
      cliEnv,
    )) as { deliveries: Delivery[] }
  ).deliveries.reverse();

const endpointStatus = async (t: Tenant, id: string) =>
  (
    (await WEBHOOK_COMMANDS["webhook list"]!(db(), { org: t.orgId }, cliEnv)) as {
      endpoints: { endpointId: string; status: string }[];
    }
  ).endpoints.find((e) => e.endpointId === id)?.status;

const messageFor = (t: Tenant, event: StoredEvent, endpoint: Endpoint): DeliveryMessage => ({
  org: t.orgId,
  event: event.id,
  endpoint: endpoint.endpointId,
  since: event.createdAt,
});

/** What a message came to: acknowledged, retried after some seconds, or neither. */
type Outcome = "ack" | { retryIn: number | undefined } | "none";

/** What getQueueResult answers (its type, FetcherQueueResult, is only in the experimental workers-types). */
interface QueueResult {
  ackAll: boolean;
  retryBatch: { retry: boolean };
  explicitAcks: string[];
  retryMessages: { msgId: string }[];
}

let messageIds = 0;

/**
 * Runs one batch of `messages` through the worker's queue handler; each
 * message's outcome, in order, and the delay of a retryAll. (The batch of
 * createMessageBatch records that a message was retried, not after how long:
 * the delay is read off the retry calls.)
 */
async function deliver(messages: DeliveryMessage[], bindings: Partial<Bindings> = {}) {
  const batch = createMessageBatch<DeliveryMessage>(
    "field-service-webhooks",
    messages.map((body) => ({ id: `msg-${++messageIds}`, timestamp: new Date(), attempts: 1, body })),
  );
  const retries = batch.messages.map((m) => vi.spyOn(m, "retry"));
  const retryAll = vi.spyOn(batch, "retryAll");
  const ctx = createExecutionContext();
  await consumer.queue!(batch, { ...workerEnv, ...bindings }, ctx);
  const result: QueueResult = await getQueueResult(batch, ctx);
  const outcomes = batch.messages.map((m, i): Outcome => {
    if (result.retryMessages.some((r) => r.msgId === m.id)) {
      expect(retries[i]).toHaveBeenCalledTimes(1);
      return { retryIn: retries[i]!.mock.calls[0]![0]?.delaySeconds };
    }
    expect(retries[i]).not.toHaveBeenCalled();
    return result.explicitAcks.includes(m.id) ? "ack" : "none";
  });
  const retriedAllIn = result.retryBatch.retry ? retryAll.mock.calls[0]![0]?.delaySeconds : undefined;
  return { result, outcomes, retriedAllIn };
}

const deliverOne = async (message: DeliveryMessage, bindings?: Partial<Bindings>) => {
  const { result, outcomes } = await deliver([message], bindings);
  expect(result.ackAll).toBe(false);
  expect(result.retryBatch.retry).toBe(false);
  return outcomes[0];
};

interface Received {
  url: string;
  method: string;
  headers: Headers;
  body: string;
}

/** Replaces the global fetch with a receiver whose answers `answer` scripts; records what it received. */
function receiver(answer: (request: Received, n: number) => Response | Promise<Response>) {
  const received: Received[] = [];
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    const got = { url: request.url, method: request.method, headers: request.headers, body: await request.text() };
    received.push(got);
    return answer(got, received.length);
  });
  return { received, spy };
}

/** The request is the stored event, POSTed with Standard Webhooks headers signed under exactly `secrets`. */
async function expectSignedDelivery(got: Received, url: string, event: StoredEvent, secrets: string[]) {
  expect(got.method).toBe("POST");
  expect(got.url).toBe(url);
  expect(got.body).toBe(event.body);
  expect(got.headers.get("content-type")).toBe("application/json");
  expect(got.headers.get("webhook-id")).toBe(event.id);
  const timestamp = got.headers.get("webhook-timestamp")!;
  expect(timestamp).toMatch(/^\d{10}$/);
  expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(60);
  const expected = await Promise.all(secrets.map((secret) => sign(secret, event.id, Number(timestamp), event.body)));
  expect(got.headers.get("webhook-signature")).toBe(expected.join(" "));
  // What a receiver's Standard Webhooks library says.
  const headers = Object.fromEntries(got.headers);
  for (const secret of secrets) expect(new Webhook(secret).verify(got.body, headers)).toEqual(JSON.parse(event.body));
}

const timeout = () => new DOMException("The operation was aborted due to timeout", "TimeoutError");

describe("one attempt per message", () => {
  it("a 2xx: acknowledged, the signed event was POSTed, one `delivered` row, attempt 1", async () => {
    const { t, recorded } = await orgWithEvents();
    const endpoint = await addEndpoint(t, "https://hooks.example.com/crm?source=fsa");
    const { received } = receiver(() => new Response("thanks"));
    expect(await deliverOne(messageFor(t, recorded[0]!, endpoint))).toBe("ack");
    expect(received).toHaveLength(1);
    await expectSignedDelivery(received[0]!, "https://hooks.example.com/crm?source=fsa", recorded[0]!, [
      endpoint.secret,
    ]);
    const rows = await deliveries(t);
    expect(rows).toEqual([
      {
        eventId: recorded[0]!.id,
        endpointId: endpoint.endpointId,
        attempt: 1,
        status: "delivered",
        httpStatus: 200,
        durationMs: expect.any(Number),
        error: null,
        at: expect.any(String),
      },
    ]);
    expect(Math.abs(Date.parse(rows[0]!.at) - Date.now())).toBeLessThan(60_000);
  });

  it.each([201, 202, 204, 299])("any 2xx (%i) is delivered", async (status) => {
    const { t, recorded } = await orgWithEvents();
    const endpoint = await addEndpoint(t);
    receiver(() => new Response(null, { status }));
    expect(await deliverOne(messageFor(t, recorded[0]!, endpoint))).toBe("ack");
    expect(await deliveries(t)).toMatchObject([{ attempt: 1, status: "delivered", httpStatus: status, error: null }]);
  });

  it("a 500: retried after 5 s, a `retrying` row with the first 1 KiB of the answer", async () => {
    const { t, recorded } = await orgWithEvents();
    const endpoint = await addEndpoint(t);
    const answer = Array.from({ length: 5120 }, (_, i) => String.fromCharCode(97 + ((i * 7) % 26))).join("");
    receiver(() => new Response(answer, { status: 500 }));
    expect(await deliverOne(messageFor(t, recorded[0]!, endpoint))).toEqual({ retryIn: 5 });
    const rows = await deliveries(t);
    expect(rows).toMatchObject([{ attempt: 1, status: "retrying", httpStatus: 500 }]);
    expect(rows[0]!.error).toBe(`HTTP 500: ${answer.slice(0, 1024)}`);
  });

  it.each([302, 400, 404, 429, 503])("a %i is not delivered either: retried after 5 s", async (status) => {
    const { t, recorded } = await orgWithEvents();
    const endpoint = await addEndpoint(t);
    receiver(() => new Response(null, { status, headers: status === 302 ? { Location: "https://example.com/" } : {} }));
    expect(await deliverOne(messageFor(t, recorded[0]!, endpoint))).toEqual({ retryIn: 5 });
    expect(await deliveries(t)).toMatchObject([
      { attempt: 1, status: "retrying", httpStatus: status, error: `HTTP ${status}` },
    ]);
  });

  it("a time-out (no answer in 15 s): retried, the row says it timed out", async () => {
    const { t, recorded } = await orgWithEvents();
    const endpoint = await addEndpoint(t);
    receiver(() => Promise.reject(timeout()));
    expect(await deliverOne(messageFor(t, recorded[0]!, endpoint))).toEqual({ retryIn: 5 });
    const [row] = await deliveries(t);
    expect(row).toMatchObject({ attempt: 1, status: "retrying", httpStatus: null });
    expect(row!.error).toMatch(/timed out/);
  });

  it("a network error: retried, the row says network error", async () => {
    const { t, recorded } = await orgWithEvents();
    const endpoint = await addEndpoint(t);
    receiver(() => Promise.reject(new TypeError("Network connection lost.")));
    expect(await deliverOne(messageFor(t, recorded[0]!, endpoint))).toEqual({ retryIn: 5 });
    const [row] = await deliveries(t);
    expect(row).toMatchObject({ attempt: 1, status: "retrying", httpStatus: null });
    expect(row!.error).toMatch(/^network error.*Network connection lost\./);
  });
});

describe("Retry-After", () => {
  it.each([
    ["7200", 7200, "longer than 5 s: it wins"],
    ["1", 5, "shorter: the schedule's 5 s"],
    ["999999", 43_200, "capped at 12 h"],
  ])("Retry-After: %s on attempt 1 → retried after %i s (%s)", async (retryAfter, seconds) => {
    const { t, recorded } = await orgWithEvents();
    const endpoint = await addEndpoint(t);
    receiver(() => new Response("busy", { status: 503, headers: { "Retry-After": retryAfter } }));
    expect(await deliverOne(messageFor(t, recorded[0]!, endpoint))).toEqual({ retryIn: seconds });
    expect(await deliveries(t)).toMatchObject([{ attempt: 1, status: "retrying", httpStatus: 503 }]);
  });

  it("an HTTP date 3 h ahead → retried after about 3 h", async () => {
    const { t, recorded } = await orgWithEvents();
    const endpoint = await addEndpoint(t);
    const at = Math.ceil(Date.now() / 1000) * 1000 + 3 * 3600_000;
    receiver(() => new Response(null, { status: 429, headers: { "Retry-After": new Date(at).toUTCString() } }));
    const outcome = await deliverOne(messageFor(t, recorded[0]!, endpoint));
    const retryIn = (outcome as { retryIn: number }).retryIn;
    expect(retryIn).toBeGreaterThanOrEqual(3 * 3600 - 5);
    expect(retryIn).toBeLessThanOrEqual(3 * 3600 + 1);
  });
});

describe("410 Gone", () => {
  it("is not retried, disables the endpoint at once, and nothing more is sent to it", async () => {
    const { t, recorded } = await orgWithEvents(2);
    const endpoint = await addEndpoint(t);
    const { received, spy } = receiver(() => new Response("gone", { status: 410 }));
    expect(await deliverOne(messageFor(t, recorded[0]!, endpoint))).toBe("ack");
    expect(received).toHaveLength(1);
    const rows = await deliveries(t);
    expect(rows).toMatchObject([{ attempt: 1, status: "failed", httpStatus: 410 }]);
    expect(rows[0]!.error).toMatch(/^HTTP 410.*endpoint disabled/);
    expect(await endpointStatus(t, endpoint.endpointId)).toBe("disabled");

    // A message queued before the 410, and a copy of the one that got it: acknowledged, nothing sent.
    const { outcomes } = await deliver([messageFor(t, recorded[1]!, endpoint), messageFor(t, recorded[0]!, endpoint)]);
    expect(outcomes).toEqual(["ack", "ack"]);
    // A new event is recorded with nobody to send to (the endpoint does not count).
    const res = await call(t, "/api/v1/leads", { body: { firstName: "After" } });
    expect(res.status, res.text).toBe(200);
    const [latest] = await db()
      .select()
      .from(events)
      .where(eq(events.orgId, t.orgId))
      .orderBy(desc(events.seq))
      .limit(1);
    expect(JSON.parse(latest!.body).data.id).toBe(res.body.id);
    expect(latest!.enqueuedAt).not.toBeNull();
    expect(await deliverOne(messageFor(t, latest!, endpoint))).toBe("ack");
    expect(spy).toHaveBeenCalledTimes(1);
    expect(await deliveries(t)).toHaveLength(1);
  });

  it("a removed endpoint: the message is acknowledged and nothing is sent", async () => {
    const { t, recorded } = await orgWithEvents();
    const endpoint = await addEndpoint(t);
    await WEBHOOK_COMMANDS["webhook remove"]!(db(), { org: t.orgId, endpoint: endpoint.endpointId }, cliEnv);
    const { spy } = receiver(() => new Response("ok"));
    expect(await deliverOne(messageFor(t, recorded[0]!, endpoint))).toBe("ack");
    expect(spy).not.toHaveBeenCalled();
    expect(await deliveries(t)).toEqual([]);
  });
});

/** Runs the same failing message 8 times; each outcome in order. */
async function failEightTimes(message: DeliveryMessage) {
  const outcomes: Outcome[] = [];
  for (let i = 0; i < 8; i++) outcomes.push((await deliverOne(message))!);
  return outcomes;
}

describe("8 attempts in all", () => {
  it("retried on the schedule 5 s … 10 h; the 8th failure is `failed`, acknowledged, not retried", async () => {
    const { t, recorded } = await orgWithEvents();
    const endpoint = await addEndpoint(t);
    const { spy } = receiver(() => new Response("down", { status: 500 }));
    const message = messageFor(t, recorded[0]!, endpoint);
    expect(await failEightTimes(message)).toEqual([
      { retryIn: 5 },
      { retryIn: 300 },
      { retryIn: 1800 },
      { retryIn: 7200 },
      { retryIn: 18_000 },
      { retryIn: 36_000 },
      { retryIn: 36_000 },
      "ack",
    ]);
    const rows = await deliveries(t);
    expect(rows.map((r) => [r.attempt, r.status])).toEqual([
      [1, "retrying"],
      [2, "retrying"],
      [3, "retrying"],
      [4, "retrying"],
      [5, "retrying"],
      [6, "retrying"],
      [7, "retrying"],
      [8, "failed"],
    ]);
    expect(rows.every((r) => r.httpStatus === 500 && r.error === "HTTP 500: down")).toBe(true);
    // A duplicate of the spent message: nothing more is sent.
    expect(await deliverOne(message)).toBe("ack");
    expect(spy).toHaveBeenCalledTimes(8);
    expect(await deliveries(t)).toHaveLength(8);
  });

  it("`webhook replay` sends a failed delivery again, counted from attempt 1", async () => {
    const { t, recorded } = await orgWithEvents();
    const endpoint = await addEndpoint(t);
    const event = recorded[0]!;
    const { received } = receiver((_, n) => new Response(null, { status: n <= 8 ? 500 : 200 }));
    expect((await failEightTimes(messageFor(t, event, endpoint))).at(-1)).toBe("ack");

    const replayed = await WEBHOOK_COMMANDS["webhook replay"]!(
      db(),
      { org: t.orgId, event: event.id, endpoint: endpoint.endpointId },
      cliEnv,
    );
    expect(replayed).toEqual({ eventId: event.id, queued: 1 });
    const sent = fakeQueue();
    await sweep({ ...workerEnv, WEBHOOKS: sent.queue }, db(), Date.now());
    const mine = sent.messages().filter((m) => m.event === event.id);
    expect(mine).toEqual([{ org: t.orgId, event: event.id, endpoint: endpoint.endpointId, since: expect.any(Number) }]);
    const lastFailure = Date.parse((await deliveries(t)).at(-1)!.at);
    expect(mine[0]!.since).toBeGreaterThan(lastFailure);

    expect(await deliverOne(mine[0]!)).toBe("ack");
    expect(received).toHaveLength(9);
    await expectSignedDelivery(received[8]!, endpoint.url, event, [endpoint.secret]);
    expect((await deliveries(t)).at(-1)).toMatchObject({ attempt: 1, status: "delivered", httpStatus: 200 });
    // The replay was sent once.
    sent.clear();
    await sweep({ ...workerEnv, WEBHOOKS: sent.queue }, db(), Date.now());
    expect(sent.messages().filter((m) => m.event === event.id)).toEqual([]);
  });
});

describe("secret rotation", () => {
  it("the new and the old secret both sign for 24 h, then only the new one", async () => {
    const { t, recorded } = await orgWithEvents(2);
    const endpoint = await addEndpoint(t);
    const fresh = await rotate(t, endpoint.endpointId);
    expect(fresh).not.toBe(endpoint.secret);
    const { received } = receiver(() => new Response("ok"));

    expect(await deliverOne(messageFor(t, recorded[0]!, endpoint))).toBe("ack");
    await expectSignedDelivery(received[0]!, endpoint.url, recorded[0]!, [fresh, endpoint.secret]);
    expect(received[0]!.headers.get("webhook-signature")!.split(" ")).toHaveLength(2);

    // 24 h later, simulated in D1: the rotated-out secret's expiry is moved to the past.
    const expired = await db()
      .update(webhookSecrets)
      .set({ expiresAt: Date.now() - 1 })
      .where(and(eq(webhookSecrets.endpointId, endpoint.endpointId), isNotNull(webhookSecrets.expiresAt)))
      .returning();
    expect(expired).toHaveLength(1);

    expect(await deliverOne(messageFor(t, recorded[1]!, endpoint))).toBe("ack");
    await expectSignedDelivery(received[1]!, endpoint.url, recorded[1]!, [fresh]);
    expect(() =>
      new Webhook(endpoint.secret).verify(received[1]!.body, Object.fromEntries(received[1]!.headers)),
    ).toThrow();
  });
});

describe("a batch", () => {
  it("one slow receiver does not delay another endpoint's delivery", async () => {
    const { t, recorded } = await orgWithEvents();
    const slow = await addEndpoint(t, "https://slow.example.com/in");
    const fast = await addEndpoint(t, "https://fast.example.com/in");
    let slowPending = false;
    let fastSentWhileSlowPending: boolean | undefined;
    receiver((request) => {
      if (request.url.startsWith("https://slow.")) {
        slowPending = true;
        // Hangs until aborted (the 15 s time-out, shortened here).
        return new Promise((_, reject) =>
          setTimeout(() => {
            slowPending = false;
            reject(timeout());
          }, 300),
        );
      }
      fastSentWhileSlowPending = slowPending;
      return new Response("ok");
    });
    const { result, outcomes } = await deliver([messageFor(t, recorded[0]!, slow), messageFor(t, recorded[0]!, fast)]);
    expect(result.ackAll).toBe(false);
    expect(outcomes).toEqual([{ retryIn: 5 }, "ack"]);
    expect(fastSentWhileSlowPending).toBe(true);
    const slowRow = (await deliveries(t, slow.endpointId))[0]!;
    const fastRow = (await deliveries(t, fast.endpointId))[0]!;
    expect(slowRow).toMatchObject({ attempt: 1, status: "retrying", error: expect.stringMatching(/timed out/) });
    expect(slowRow.durationMs).toBeGreaterThanOrEqual(290);
    expect(fastRow).toMatchObject({ attempt: 1, status: "delivered", httpStatus: 200 });
    expect(fastRow.durationMs).toBeLessThan(200);
    expect(Date.parse(fastRow.at)).toBeLessThan(Date.parse(slowRow.at) + slowRow.durationMs);
  });

  it.each<[string, Partial<Bindings>]>([
    ["WEBHOOK_SECRET_KEY unset", { WEBHOOK_SECRET_KEY: undefined }],
    [
      "the published dev key without LOCAL_DEVELOPMENT",
      { WEBHOOK_SECRET_KEY: DEV_WEBHOOK_KEY, LOCAL_DEVELOPMENT: undefined },
    ],
  ])(
    "an unusable key (%s): nothing is sent, no row; the deliveries wait in D1 until the sweep has a key",
    async (_name, bindings) => {
      // The tests' key is the dev one of .dev.vars, accepted there because of LOCAL_DEVELOPMENT.
      expect(workerEnv.WEBHOOK_SECRET_KEY).toBe(DEV_WEBHOOK_KEY);
      expect(workerEnv.LOCAL_DEVELOPMENT).toBe("true");
      const { t, recorded } = await orgWithEvents(2);
      const endpoint = await addEndpoint(t);
      const { spy } = receiver(() => new Response("ok"));
      const errors = vi.spyOn(console, "error").mockImplementation(() => {});
      const messages = recorded.map((event) => messageFor(t, event, endpoint));
      // Acknowledged, not retried: queue retries would run out (max_retries) and end in the dead-letter queue.
      const { result, outcomes } = await deliver(messages, bindings);
      expect(result.ackAll).toBe(true);
      expect(result.retryBatch.retry).toBe(false);
      expect(outcomes).toEqual(["none", "none"]);
      expect(spy).not.toHaveBeenCalled();
      expect(await deliveries(t)).toEqual([]);
      expect(errors.mock.calls.map((args) => JSON.parse(String(args[0])))).toEqual([
        { webhook: "paused", error: expect.stringContaining("WEBHOOK_SECRET_KEY"), messages: 2 },
      ]);

      const sent = fakeQueue();
      const mine = () => sent.messages().filter((m) => m.org === t.orgId);
      // Still without a usable key, the sweep leaves them parked.
      await sweep({ ...workerEnv, ...bindings, WEBHOOKS: sent.queue }, db(), Date.now());
      expect(mine()).toEqual([]);
      // With the key back, the sweep sends them as they were (the same `since`), and they are delivered as first attempts.
      await sweep({ ...workerEnv, WEBHOOKS: sent.queue }, db(), Date.now());
      expect(mine()).toEqual(messages);
      expect((await deliver(mine())).outcomes).toEqual(["ack", "ack"]);
      expect((await deliveries(t)).map((r) => [r.attempt, r.status])).toEqual([
        [1, "delivered"],
        [1, "delivered"],
      ]);
      sent.clear();
      await sweep({ ...workerEnv, WEBHOOKS: sent.queue }, db(), Date.now());
      expect(mine()).toEqual([]);
    },
  );

  it("a key that changed since the secret was sealed: nothing is sent, the row says to rotate", async () => {
    const { t, recorded } = await orgWithEvents();
    const endpoint = await addEndpoint(t);
    const { spy } = receiver(() => new Response("ok"));
    const otherKey = toBase64(crypto.getRandomValues(new Uint8Array(32)));
    expect(await deliverOne(messageFor(t, recorded[0]!, endpoint), { WEBHOOK_SECRET_KEY: otherKey })).toEqual({
      retryIn: 5,
    });
    expect(spy).not.toHaveBeenCalled();
    const [row] = await deliveries(t);
    expect(row).toMatchObject({ attempt: 1, status: "retrying", httpStatus: null });
    expect(row!.error).toMatch(/does not decrypt.*rotate/);
  });
});

describe("secrets at rest", () => {
  it("no table of D1 holds a secret in the clear, after add, rotate and deliveries", async () => {
    const { t, recorded } = await orgWithEvents();
    const endpoint = await addEndpoint(t);
    const fresh = await rotate(t, endpoint.endpointId);
    receiver(() => new Response("ok"));
    expect(await deliverOne(messageFor(t, recorded[0]!, endpoint))).toBe("ack");

    const forms = [endpoint.secret, fresh].flatMap((secret) => {
      const base64 = secret.slice("whsec_".length);
      const hex = [...Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))]
        .map((b) => b.toString(16).padStart(2, "0"))
        .join("");
      return [secret, base64, hex];
    });
    const tables = await env.DB.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
    ).all<{ name: string }>();
    const names = tables.results.map((r) => r.name);
    expect(names).toEqual(expect.arrayContaining(["webhook_secrets", "webhook_endpoints", "webhook_deliveries"]));
    for (const name of names) {
      const rows = await env.DB.prepare(`SELECT * FROM "${name}"`).all();
      const text = JSON.stringify(rows.results);
      for (const form of forms) expect(text.includes(form), `${name} holds a secret`).toBe(false);
    }
    const stored = await db().select().from(webhookSecrets).where(eq(webhookSecrets.endpointId, endpoint.endpointId));
    expect(stored).toHaveLength(2);
    for (const row of stored) expect(row.ciphertext).toMatch(/^v1\./);
  });
});

describe("webhook add: at most 10 endpoints per org", () => {
  it("of 3 adds racing for the last 2 places, 2 win; the third is refused and writes nothing", async () => {
    const t = await openTenant();
    for (let i = 0; i < 8; i++) await addEndpoint(t, `https://hooks.example.com/${i}`);
    const results = await Promise.allSettled([8, 9, 10].map((i) => addEndpoint(t, `https://hooks.example.com/${i}`)));
    const won = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    const lost = results.flatMap((r) => (r.status === "rejected" ? [r.reason as Error] : []));
    expect(won).toHaveLength(2);
    expect(lost.map((e) => e.message)).toEqual([`org ${t.orgId} already has 10 webhook endpoints (the most allowed)`]);
    const listed = (await WEBHOOK_COMMANDS["webhook list"]!(db(), { org: t.orgId }, cliEnv)) as {
      endpoints: { endpointId: string }[];
    };
    expect(listed.endpoints).toHaveLength(10);
    expect(listed.endpoints.map((e) => e.endpointId)).toEqual(expect.arrayContaining(won.map((w) => w.endpointId)));
    // The refused add left no secret behind: one per endpoint, each of a listed endpoint.
    const secrets = await db().select().from(webhookSecrets).where(eq(webhookSecrets.orgId, t.orgId));
    expect(secrets.map((s) => s.endpointId).sort()).toEqual(listed.endpoints.map((e) => e.endpointId).sort());
  });
});
