// The `webhook …` commands of the admin CLI (docs/operations.md, "Webhook
// endpoints") through the real CLI on a real local state folder: what --json
// prints (exactly the keys documented there, the secret only from add and
// rotate-secret), --events and URL rules, the limit of 10 endpoints, and
// refusals that exit non-zero, say why on stderr and change nothing (read back
// with `wrangler d1 execute`). Also: the secret is never in D1 in the clear. No
// server runs: these commands only read and write the database (delivery is
// test/e2e/webhooks.e2e.test.ts). The commands run in this process as
// src/cli/main.ts runs them (admin, and d1Execute to read back: see
// harness.ts); --remote, and a test holding list and refusals against the real
// CLI process byte for byte, are processes (adminProcess, cli).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin, adminProcess, applyMigrations, cli, d1Execute, jsonLine, type RunResult, type Tenant } from "./harness";

const ALL_TYPES = [
  "lead.created",
  "contact.created",
  "incident.created",
  "incident.rescheduled",
  "incident.cancelled",
  "incident.reassigned",
  "incident.completed",
  "incident.no_show",
  "plan.created",
  "plan.cancelled",
  "plan.visit_unplaced",
];
/** `whsec_` + base64 of 32 bytes (the Standard Webhooks form). */
const SECRET = /^whsec_([A-Za-z0-9+/]{43}=)$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let dir: string;
let orgA: Tenant;
let orgB: Tenant;

interface Added {
  endpointId: string;
  url: string;
  events: string[];
  secret: string;
}

/** Org A's endpoint, added in beforeAll with the default events. */
let addedA: Added;
/** An event of org A recorded after that endpoint was added, and one logged attempt to deliver it. */
const EVENT_A = "evt_0000000000clitestclitest00";
let eventAt: number;

// biome-ignore lint/suspicious/noExplicitAny: rows of `wrangler d1 execute --json`
const sql = (command: string): Promise<any[]> => d1Execute(dir, command);

/** What the webhook tables hold: a refused command must leave it as it was. */
const webhookState = () =>
  sql(
    "SELECT 'endpoint' AS kind, id, org_id, url, events, status AS extra FROM webhook_endpoints UNION ALL SELECT 'secret', id, org_id, endpoint_id, ciphertext, expires_at FROM webhook_secrets UNION ALL SELECT 'replay', id, org_id, event_id, endpoint_id, requested_at FROM webhook_replays UNION ALL SELECT 'delivery', id, org_id, event_id, endpoint_id, status FROM webhook_deliveries ORDER BY 1, 2",
  );

const webhook = (args: string[]) => admin(dir, ["webhook", ...args]);

/** `webhook add` through the real CLI, or in this process for a test's set-up. */
async function add(org: Tenant, url: string, events?: string, run = webhook): Promise<Added> {
  const extra = events === undefined ? [] : ["--events", events];
  return jsonLine<Added>(await run(["add", "--org", org.orgId, "--url", url, ...extra]), `webhook add ${url}`);
}
const setUp = (args: string[]) => admin(dir, ["webhook", ...args]);

/** Non-zero exit, nothing on stdout, `message` on stderr. */
function expectRefused(result: RunResult, message: RegExp) {
  expect(result.code, result.stderr).not.toBe(0);
  expect(result.stdout).toBe("");
  expect(result.stderr).toMatch(message);
}

/** A secret's base64 part: what must appear nowhere, not even without its prefix. */
const base64Of = (secret: string) => SECRET.exec(secret)![1]!;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-e2e-webhook-cli-"));
  await applyMigrations(dir);
  const createOrg = async (name: string) =>
    jsonLine<Tenant>(await admin(dir, ["org", "create", "--name", name]), `org create ${name}`);
  const provisionA = async () => {
    orgA = await createOrg("Webhook CLI A");
    addedA = await add(orgA, "https://hooks.example.com/a", undefined, setUp);
    // No server runs here: the event and an attempt are written as the API and the queue consumer would.
    eventAt = Date.now();
    const body = JSON.stringify({ id: EVENT_A, type: "lead.created", timestamp: new Date(eventAt).toISOString() });
    await sql(
      `INSERT INTO events (seq, id, org_id, type, created_at, body, enqueued_at) VALUES (NULL, '${EVENT_A}', '${orgA.orgId}', 'lead.created', ${eventAt}, '${body}', ${eventAt}); INSERT INTO webhook_deliveries (org_id, event_id, endpoint_id, attempt, status, http_status, duration_ms, error, at) VALUES ('${orgA.orgId}', '${EVENT_A}', '${addedA.endpointId}', 1, 'retrying', 503, 42, 'HTTP 503: busy', ${eventAt + 100})`,
    );
  };
  const provisionB = async () => {
    orgB = await createOrg("Webhook CLI B");
  };
  await Promise.all([provisionA(), provisionB()]);
}, 120_000);

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("webhook commands print exactly the documented keys", () => {
  it("add: endpointId, url, every type by default, and a whsec_ secret of 32 bytes", () => {
    expect(Object.keys(addedA).sort()).toEqual(["endpointId", "events", "secret", "url"]);
    expect(addedA).toEqual({
      endpointId: expect.stringMatching(/^ep_/),
      url: "https://hooks.example.com/a",
      events: ALL_TYPES,
      secret: expect.stringMatching(SECRET),
    });
    expect(Buffer.from(base64Of(addedA.secret), "base64")).toHaveLength(32);
  });

  it("list: the endpoints without any secret", async () => {
    const result = await webhook(["list", "--org", orgA.orgId]);
    const listed = jsonLine<{ endpoints: object[] }>(result, "webhook list");
    expect(Object.keys(listed)).toEqual(["endpoints"]);
    expect(listed.endpoints).toHaveLength(1);
    expect(Object.keys(listed.endpoints[0]!).sort()).toEqual(["createdAt", "endpointId", "events", "status", "url"]);
    expect(listed.endpoints[0]).toEqual({
      endpointId: addedA.endpointId,
      url: addedA.url,
      events: ALL_TYPES,
      status: "enabled",
      createdAt: expect.stringMatching(ISO),
    });
    expect(result.stdout).not.toContain(base64Of(addedA.secret));
  });

  it("deliveries: each attempt with its keys, never a secret", async () => {
    const result = await webhook(["deliveries", "--org", orgA.orgId, "--endpoint", addedA.endpointId]);
    const { deliveries } = jsonLine<{ deliveries: object[] }>(result, "webhook deliveries");
    expect(deliveries).toEqual([
      {
        eventId: EVENT_A,
        endpointId: addedA.endpointId,
        attempt: 1,
        status: "retrying",
        httpStatus: 503,
        durationMs: 42,
        error: "HTTP 503: busy",
        at: new Date(eventAt + 100).toISOString(),
      },
    ]);
    expect(result.stdout).not.toMatch(/whsec_/);
    expect(result.stdout).not.toContain(base64Of(addedA.secret));
  });

  it("replay: the event and how many endpoints it was queued for, recorded for the sweep", async () => {
    const queued = jsonLine(await webhook(["replay", "--org", orgA.orgId, "--event", EVENT_A]), "webhook replay");
    expect(queued).toEqual({ eventId: EVENT_A, queued: 1 });
    const replays = await sql(
      `SELECT org_id, event_id, endpoint_id FROM webhook_replays WHERE event_id = '${EVENT_A}'`,
    );
    expect(replays).toEqual([{ org_id: orgA.orgId, event_id: EVENT_A, endpoint_id: addedA.endpointId }]);
  });

  it("rotate-secret: a new secret, shown once; neither it nor the old one is in D1 in the clear", async () => {
    const rotated = jsonLine<{ endpointId: string; secret: string }>(
      await webhook(["rotate-secret", "--org", orgA.orgId, "--endpoint", addedA.endpointId]),
      "rotate-secret",
    );
    expect(rotated).toEqual({ endpointId: addedA.endpointId, secret: expect.stringMatching(SECRET) });
    expect(rotated.secret).not.toBe(addedA.secret);

    const stored = await sql("SELECT * FROM webhook_secrets");
    const mine = stored.filter((row) => row.endpoint_id === addedA.endpointId);
    // The old one still signs for 24 h beside the new one.
    expect(mine).toHaveLength(2);
    expect(mine[0].expires_at - Date.now()).toBeGreaterThan(23 * 3_600_000);
    expect(mine[1].expires_at).toBeNull();
    // Neither in what D1 answers nor in its files (database and WAL), byte for byte.
    const files = fs
      .readdirSync(path.join(dir, "v3", "d1"), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => fs.readFileSync(path.join(entry.parentPath, entry.name)));
    expect(files.length).toBeGreaterThan(0);
    for (const secret of [addedA.secret, rotated.secret]) {
      expect(JSON.stringify(stored)).not.toContain(base64Of(secret));
      for (const bytes of files) expect(bytes.includes(base64Of(secret))).toBe(false);
    }
  }, 90_000);

  it("add without --json prints the secret and says to store it; remove prints endpointId and removed", async () => {
    const human = await cli([
      "webhook",
      "add",
      "--org",
      orgB.orgId,
      "--url",
      "https://hooks.example.com/human",
      "--persist-to",
      dir,
    ]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/^secret: whsec_[A-Za-z0-9+/]{43}=$/m);
    expect(human.stdout).toMatch(/Store the signing secret now: it is shown only once\./);
    const endpointId = /^endpointId: (ep_\w+)$/m.exec(human.stdout)?.[1];
    expect(endpointId).toBeDefined();

    const removed = jsonLine(await webhook(["remove", "--org", orgB.orgId, "--endpoint", endpointId!]), "remove");
    expect(removed).toEqual({ endpointId, removed: true });
    const left = await sql(
      `SELECT (SELECT count(*) FROM webhook_endpoints WHERE id = '${endpointId}') AS endpoints, (SELECT count(*) FROM webhook_secrets WHERE endpoint_id = '${endpointId}') AS secrets`,
    );
    expect(left).toEqual([{ endpoints: 0, secrets: 0 }]);
  }, 90_000);

  it("add --events: a subset is printed in the normal order, once each (and http:// to localhost is accepted)", async () => {
    const added = await add(orgB, "http://localhost:8080/hook", "incident.cancelled, lead.created,incident.cancelled");
    expect(added).toMatchObject({ url: "http://localhost:8080/hook", events: ["lead.created", "incident.cancelled"] });
  });
});

describe("at most 10 endpoints per org", () => {
  // The race for the last places is test/integration/webhooks/consumer.test.ts
  // (CLI processes on one state folder run one at a time: see harness.ts).
  it("the 10th add is accepted, the 11th refused and writes nothing", async () => {
    const org = jsonLine<Tenant>(await admin(dir, ["org", "create", "--name", "Webhook CLI full"]), "org create");
    // Nine endpoints as `webhook add` leaves them (their secrets play no part in the count).
    const now = Date.now();
    const rows = Array.from(
      { length: 9 },
      (_, i) =>
        `('ep_0000000000full${String(i).padStart(10, "0")}', '${org.orgId}', 'https://hooks.example.com/${i}', '["lead.created"]', 'enabled', ${now}, NULL)`,
    );
    await sql(
      `INSERT INTO webhook_endpoints (id, org_id, url, events, status, created_at, disabled_at) VALUES ${rows.join(", ")}`,
    );

    const tenth = await add(org, "https://hooks.example.com/9");
    const before = await webhookState();
    expectRefused(
      await webhook(["add", "--org", org.orgId, "--url", "https://hooks.example.com/10"]),
      /already has 10 webhook endpoints/,
    );
    expect(await webhookState()).toEqual(before);
    const { endpoints } = jsonLine<{ endpoints: { endpointId: string }[] }>(
      await webhook(["list", "--org", org.orgId]),
      "webhook list",
    );
    expect(endpoints).toHaveLength(10);
    expect(endpoints.map((e) => e.endpointId)).toContain(tenth.endpointId);
  }, 120_000);
});

describe("refusals: non-zero exit, the reason on stderr, nothing changed", () => {
  it("URL rules, unknown types, unknown orgs, unknown ids, another org's endpoint or event", async () => {
    const epA = addedA.endpointId;
    const hasNo = (what: string) => new RegExp(`org ${orgB.orgId} has no ${what}`);
    const cases: [string[], RegExp][] = [
      [
        ["add", "--org", orgB.orgId, "--url", "http://example.com/hook"],
        /--url: http:\/\/ is accepted for localhost, 127\.0\.0\.1 or \[::1\] only .*use https:\/\//,
      ],
      [
        ["add", "--org", orgB.orgId, "--url", "https://example.com/hook", "--events", "lead.created,incident.deleted"],
        /unknown event type: incident\.deleted/,
      ],
      [["add", "--org", "org_unknown", "--url", "https://hooks.example.com/x"], /unknown org: org_unknown/],
      [["remove", "--org", orgA.orgId, "--endpoint", "ep_unknown"], /has no webhook endpoint ep_unknown/],
      [["remove", "--org", orgB.orgId, "--endpoint", epA], hasNo(`webhook endpoint ${epA}`)],
      [["rotate-secret", "--org", orgB.orgId, "--endpoint", epA], hasNo(`webhook endpoint ${epA}`)],
      [["replay", "--org", orgB.orgId, "--event", EVENT_A], hasNo(`event ${EVENT_A}`)],
      [["deliveries", "--org", orgB.orgId, "--event", EVENT_A], hasNo(`event ${EVENT_A}`)],
    ];
    const before = await webhookState();
    for (const [args, message] of cases) {
      const result = await webhook(args);
      expect(result.stderr, args.join(" ")).toMatch(message);
      expectRefused(result, message);
    }
    expect(await webhookState()).toEqual(before);
  }, 180_000);
});

describe("the real CLI process", () => {
  it("answers list and refusals as the in-process commands above do: the same exit code, stdout and stderr", async () => {
    for (const args of [
      ["webhook", "list", "--org", orgB.orgId],
      ["webhook", "add", "--org", orgB.orgId, "--url", "http://example.com/hook"],
      ["webhook", "replay", "--org", orgB.orgId, "--event", EVENT_A],
    ]) {
      expect(await admin(dir, args), args.join(" ")).toEqual(await adminProcess(dir, args));
    }
  }, 120_000);
});

describe("--remote", () => {
  it("add and rotate-secret refuse a missing WEBHOOK_SECRET_KEY before reaching Cloudflare", async () => {
    // The harness passes this process's environment on; the test needs the key absent from it.
    expect(process.env.WEBHOOK_SECRET_KEY).toBeUndefined();
    for (const args of [
      ["add", "--org", "org_x", "--url", "https://crm.example.com/hook"],
      ["rotate-secret", "--org", "org_x", "--endpoint", "ep_x"],
    ]) {
      expectRefused(
        await cli(["webhook", ...args, "--remote", "--json"]),
        /WEBHOOK_SECRET_KEY is not set .*export the deployed key as WEBHOOK_SECRET_KEY for --remote/,
      );
    }
  });
});
