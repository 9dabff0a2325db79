// The admin CLI's failure paths, through the real CLI on a real local state
// folder: bad input exits non-zero with a message on stderr, prints nothing on
// stdout, and writes nothing (read back independently with `wrangler d1 execute`).
// The commands run in this process as src/cli/main.ts runs them (admin, and
// d1Execute to read back: see harness.ts); the last test holds a refusal of
// each command against the real CLI process, byte for byte.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin, adminProcess, applyMigrations, cli, d1Execute, jsonLine } from "./harness";

let dir: string;
let orgId: string;

async function count(table: string): Promise<number> {
  return (await d1Execute(dir, `SELECT count(*) AS n FROM ${table}`))[0]!.n as number;
}

function file(name: string, text: string): string {
  const filePath = path.join(dir, name);
  writeFileSync(filePath, text);
  return filePath;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "fs-cli-"));
  await applyMigrations(dir);
  orgId = jsonLine<{ orgId: string }>(await admin(dir, ["org", "create", "--name", "CLI Org"]), "org create").orgId;
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("accounts import refuses bad input and writes nothing", () => {
  it.each([
    [
      "a record without a name and one with an unknown field",
      "bad.json",
      '[{"name":"Fine"},{"city":"Boston"},{"name":"X","nmae":"typo"}]',
      /record 2: name: is required[\s\S]*record 3: nmae: unknown field/,
    ],
    ["a file that is not JSON", "broken.json", '[{"name":', /not valid JSON/],
    ["a JSON object instead of an array", "object.json", '{"name":"A"}', /array/],
    ["a CSV row with too many cells", "cells.csv", "name,city\nA,Boston\nB,Boston,extra\n", /row 3 has 3 cells/],
    [
      "a CSV accountType that is not an integer",
      "type.csv",
      "name,accountType\nA,1.5\n",
      /accountType: must be an integer/,
    ],
  ])("%s", async (_case, name, text, message) => {
    const result = await admin(dir, ["accounts", "import", "--org", orgId, "--file", file(name, text)]);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(message);
    expect(await count("accounts")).toBe(0);
  });

  it("refuses an unknown org", async () => {
    const result = await admin(dir, [
      "accounts",
      "import",
      "--org",
      "org_unknown",
      "--file",
      file("ok.json", '[{"name":"A"}]'),
    ]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/unknown org: org_unknown/);
    expect(await count("accounts")).toBe(0);
  });
});

describe("org create", () => {
  it("refuses an unknown time zone and writes no org", async () => {
    const before = await count("orgs");
    const result = await admin(dir, ["org", "create", "--name", "Nowhere", "--time-zone", "Mars/Olympus_Mons"]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/unknown IANA time zone/);
    expect(await count("orgs")).toBe(before);
  });
});

describe("key roles", () => {
  it("key create --role read prints the role; --role boss exits non-zero and creates nothing; key list gives each key's role", async () => {
    const read = jsonLine<{ keyId: string; apiKey: string; role: string }>(
      await admin(dir, ["key", "create", "--org", orgId, "--role", "read"]),
      "key create --role read",
    );
    expect(read).toEqual({
      keyId: expect.stringMatching(/^key_/),
      apiKey: expect.stringMatching(/^fsk_/),
      role: "read",
    });

    const boss = await admin(dir, ["key", "create", "--org", orgId, "--role", "boss"]);
    expect(boss.code).not.toBe(0);
    expect(boss.stdout).toBe("");
    expect(boss.stderr).toMatch(/--role must be one of office, agent, read/);

    // The org's first key (org create's, office) and the read key: nothing of the refused one.
    const { keys } = jsonLine<{ keys: { keyId: string; role: string; revokedAt: string | null }[] }>(
      await admin(dir, ["key", "list", "--org", orgId]),
      "key list",
    );
    expect(keys).toHaveLength(2);
    expect(keys.map((key) => key.role).sort()).toEqual(["office", "read"]);
    expect(keys.find((key) => key.role === "read")).toMatchObject({ keyId: read.keyId, revokedAt: null });
    expect(JSON.stringify(keys)).not.toContain(read.apiKey);
    // Three processes in a row, each starting wrangler.
  }, 120_000);
});

describe("demo seed", () => {
  it("is idempotent and refuses --remote", async () => {
    const first = jsonLine<{ orgId: string; accounts: number }>(await admin(dir, ["demo", "seed"]), "demo seed");
    const second = jsonLine<{ orgId: string; accounts: number }>(await admin(dir, ["demo", "seed"]), "demo seed again");
    expect(first).toEqual(second);
    expect(first).toMatchObject({ orgId: "org_demo", accounts: 3 });
    const remote = await cli(["demo", "seed", "--remote", "--json"]);
    expect(remote.code).not.toBe(0);
    expect(remote.stderr).toMatch(/never seeded with --remote/);
  });
});

describe("phones backfill", () => {
  const sql = (command: string) => d1Execute(dir, command);

  it("stores the E.164 form of rows written before it existed, once, and refuses an unknown org", async () => {
    const { orgId: org } = jsonLine<{ orgId: string }>(
      await admin(dir, ["org", "create", "--name", "Phones Org"]),
      "org create",
    );
    const accounts = file("phones.json", '[{"name":"Old Line","businessPhone":"(212) 555-0100"},{"name":"No Phone"}]');
    expect((await admin(dir, ["accounts", "import", "--org", org, "--file", accounts])).code).toBe(0);
    // As a row from before migration 0005: free text only.
    await sql(`UPDATE accounts SET business_e164 = NULL WHERE org_id = '${org}'`);

    const first = jsonLine<Record<string, { scanned: number; updated: number }>>(
      await admin(dir, ["phones", "backfill", "--org", org]),
      "phones backfill",
    );
    expect(first).toEqual({
      contacts: { scanned: 0, updated: 0 },
      accounts: { scanned: 1, updated: 1 },
      leads: { scanned: 0, updated: 0 },
    });
    const stored = await sql(`SELECT business_e164 AS e FROM accounts WHERE org_id = '${org}'`);
    expect(stored.map((row) => row.e).sort()).toEqual(["+12125550100", null]);

    const again = jsonLine<typeof first>(await admin(dir, ["phones", "backfill", "--org", org]), "again");
    expect(again.accounts).toEqual({ scanned: 1, updated: 0 });

    const unknown = await admin(dir, ["phones", "backfill", "--org", "org_missing"]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr).toMatch(/unknown org/);
  }, 180_000);
});

describe("the harness's in-process admin (the set-up above)", () => {
  it("answers as the CLI process does: the same exit code, stdout and stderr", async () => {
    for (const args of [
      ["key", "list", "--org", orgId],
      ["key", "revoke", "--org", orgId, "--key", "key_unknown"],
      ["key", "create", "--org", orgId, "--role", "boss"],
      ["org", "create", "--name", "Nowhere", "--time-zone", "Mars/Olympus_Mons"],
      ["accounts", "import", "--org", "org_unknown", "--file", file("equal.csv", "name\nAcme\n")],
      ["phones", "backfill", "--org", "org_missing"],
    ]) {
      expect(await admin(dir, args), args.join(" ")).toEqual(await adminProcess(dir, args));
    }
  }, 120_000);
});
