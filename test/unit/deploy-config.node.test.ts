// wrangler.toml deploys as committed (a dashboard build edits nothing): no
// resource id, no placeholder, every binding described for the Deploy button,
// and the secret's example value refused by the worker.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { unstable_readConfig } from "wrangler";
import { keyProblem } from "../../src/webhooks/key";

const ROOT = path.resolve(import.meta.dirname, "../..");
const TOML = fs.readFileSync(path.join(ROOT, "wrangler.toml"), "utf8");
const config = unstable_readConfig({ config: path.join(ROOT, "wrangler.toml") });
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));

/** NAME=value lines of a .dev.vars-style file (the value may hold "=" and be quoted). */
const assignments = (file: string) =>
  fs
    .readFileSync(path.join(ROOT, file), "utf8")
    .split("\n")
    .filter((line) => /^[A-Z_]+=/.test(line))
    .map(
      (line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1).replace(/^"|"$/g, "")] as const,
    );

// A UUID (D1, Hyperdrive) or a 32-hex id (KV namespaces, accounts, zones): what a hand-copied id looks like.
const ID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\b[0-9a-f]{32}\b/i;

describe("wrangler.toml holds no id", () => {
  it("no UUID or 32-hex id anywhere in the file", () => {
    expect(TOML.match(ID)).toBeNull();
  });

  it("the D1 database is named, never identified, in every environment", () => {
    expect(config.d1_databases).toEqual([
      expect.objectContaining({ binding: "DB", database_name: "field-service", migrations_dir: "migrations" }),
    ]);
    for (const database of config.d1_databases) expect(database.database_id).toBeUndefined();
    expect(TOML).not.toMatch(/^\s*(database_id|preview_database_id|account_id|id)\s*=/m);
    expect(TOML).not.toMatch(/^\s*\[env\./m);
  });

  it("the queue, its consumer and its dead-letter queue are named", () => {
    expect(config.queues.producers).toEqual([{ binding: "WEBHOOKS", queue: "field-service-webhooks" }]);
    expect(config.queues.consumers).toEqual([
      expect.objectContaining({ queue: "field-service-webhooks", dead_letter_queue: "field-service-webhooks-dlq" }),
    ]);
  });

  it("Workers Logs are on, the crons are set, the deploy command is npm run deploy", () => {
    expect(config.observability?.enabled).toBe(true);
    expect(config.triggers.crons).toEqual(["* * * * *", "23 * * * *"]);
    expect(pkg.scripts.deploy).toBe("tsx src/cli/deploy.ts");
  });
});

describe("what the Deploy button shows", () => {
  const described = Object.keys(pkg.cloudflare.bindings);
  const exampleSecrets = assignments(".dev.vars.example");

  it("package.json describes every binding, var and secret", () => {
    const bindings = [
      ...config.d1_databases.map((d: { binding: string }) => d.binding),
      ...config.queues.producers.map((q: { binding: string }) => q.binding),
      ...config.ratelimits.map((r: { name: string }) => r.name),
      ...Object.keys(config.vars),
      ...exampleSecrets.map(([name]) => name),
    ];
    expect(bindings).toContain("WEBHOOK_SECRET_KEY");
    expect(new Set(described)).toEqual(new Set(bindings));
    for (const name of described) expect(pkg.cloudflare.bindings[name].description.length).toBeGreaterThan(20);
  });

  it("the example secret, accepted as pre-filled, is refused by the worker (no known key signs)", () => {
    for (const [name, value] of exampleSecrets) {
      expect(name).toBe("WEBHOOK_SECRET_KEY");
      expect(keyProblem({ WEBHOOK_SECRET_KEY: value })).toMatch(/base64 of 32 random bytes/);
    }
    // And the published development key needs the flag only .dev.vars sets.
    const dev = Object.fromEntries(assignments(".dev.vars"));
    expect(keyProblem({ WEBHOOK_SECRET_KEY: dev.WEBHOOK_SECRET_KEY })).toMatch(/published local-development default/);
    expect(keyProblem(dev)).toBeUndefined();
  });
});
