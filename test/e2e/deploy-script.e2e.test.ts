// `npm run deploy` against a stand-in for wrangler (an `npx` first on PATH
// that records its arguments and answers like wrangler): the order of the
// steps — database, queues, migrations, then the code — and that nothing is
// created twice. What only a Cloudflare account shows is listed in
// docs/operations.md.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "./harness";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-e2e-deploy-script-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

// The stand-in: `npx wrangler …` only. State: which resources exist.
const FAKE = `#!/usr/bin/env node
const fs = require("node:fs");
const path = require("node:path");
const state = process.env.FAKE_STATE;
const read = () => JSON.parse(fs.readFileSync(state, "utf8"));
const s = read();
const args = process.argv.slice(3); // after "wrangler"
s.calls.push(args.join(" "));
let code = 0;
const cmd = args.slice(0, 2).join(" ");
if (cmd === "d1 list") process.stdout.write(JSON.stringify(s.databases));
else if (cmd === "d1 create") s.databases.push({ uuid: "11111111-2222-4333-8444-555555555555", name: args[2] });
else if (cmd === "queues info") code = s.queues.includes(args[2]) ? 0 : 1;
else if (cmd === "queues create") s.queues.push(args[2]);
else if (cmd === "d1 migrations") {
  const config = JSON.parse(fs.readFileSync(args[args.indexOf("--config") + 1], "utf8"));
  s.migratedWith = config.d1_databases[0];
  s.deployedBeforeMigrations = s.deployed;
} else if (cmd === "deploy") s.deployed = true;
else if (cmd === "secret list") process.stdout.write(JSON.stringify(s.secrets));
fs.writeFileSync(state, JSON.stringify(s));
process.exit(code);
`;

function deploy(initial: object) {
  const bin = path.join(dir, "bin");
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(path.join(bin, "npx"), FAKE, { mode: 0o755 });
  const state = path.join(dir, "state.json");
  fs.writeFileSync(state, JSON.stringify({ calls: [], deployed: false, ...initial }));
  const result = spawnSync(path.join(ROOT, "node_modules/.bin/tsx"), ["src/cli/deploy.ts"], {
    cwd: ROOT,
    env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}`, FAKE_STATE: state },
    encoding: "utf8",
  });
  return { ...result, state: JSON.parse(fs.readFileSync(state, "utf8")) };
}

describe("npm run deploy", () => {
  it("on a fresh account: creates the database and both queues, migrates, then deploys, and warns of the missing key", () => {
    const run = deploy({ databases: [], queues: [], secrets: [] });
    expect(run.status, run.stderr).toBe(0);
    expect(run.state.calls).toEqual([
      "d1 list --json",
      "d1 create field-service",
      "d1 list --json",
      "queues info field-service-webhooks",
      "queues create field-service-webhooks",
      "queues info field-service-webhooks-dlq",
      "queues create field-service-webhooks-dlq",
      `d1 migrations apply DB --remote --config ${path.join(ROOT, ".wrangler/remote/wrangler.json")}`,
      "deploy",
      "secret list --format json",
    ]);
    expect(run.state.deployedBeforeMigrations).toBe(false);
    expect(run.state.migratedWith).toEqual({
      binding: "DB",
      database_name: "field-service",
      database_id: "11111111-2222-4333-8444-555555555555",
      migrations_dir: path.join(ROOT, "migrations"),
      remote: true,
    });
    expect(run.stderr).toMatch(/WEBHOOK_SECRET_KEY is not set/);
  });

  it("on an account that has it all: creates nothing, migrates, deploys, and says nothing of the key", () => {
    const run = deploy({
      databases: [{ uuid: "99999999-2222-4333-8444-555555555555", name: "field-service" }],
      queues: ["field-service-webhooks", "field-service-webhooks-dlq"],
      secrets: [{ name: "WEBHOOK_SECRET_KEY", type: "secret_text" }],
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.state.calls.filter((call: string) => call.includes("create"))).toEqual([]);
    expect(run.state.calls.slice(-2)).toEqual(["deploy", "secret list --format json"]);
    expect(run.state.migratedWith.database_id).toBe("99999999-2222-4333-8444-555555555555");
    expect(run.stderr).not.toMatch(/WEBHOOK_SECRET_KEY/);
  });
});
