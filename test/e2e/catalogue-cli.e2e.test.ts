// The `service …` and `technician …` commands of the admin CLI (docs/operations.md,
// "Services and technicians") through the real CLI on a real local state
// folder: what --json prints, a weekly-hours file, refusals that exit
// non-zero, say why on stderr and change nothing (read back with `wrangler d1
// execute`), and a reassignment. No server runs: the visits are written as
// the API would write them. The commands run in this process as
// src/cli/main.ts runs them (admin, and d1Execute to read back: see
// harness.ts); the last test holds a list and a refusal against the real CLI
// process byte for byte. The rules themselves are
// test/integration/db/catalogue.test.ts.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin, adminProcess, applyMigrations, d1Execute, jsonLine, type RunResult, type Tenant } from "./harness";

const DAY = 86_400_000;
const HOUR = 3_600_000;

let dir: string;
let org: Tenant;

// biome-ignore lint/suspicious/noExplicitAny: rows of `wrangler d1 execute --json`
const sql = (command: string): Promise<any[]> => d1Execute(dir, command);

/** Non-zero exit, nothing on stdout, `message` on stderr. */
function expectRefused(result: RunResult, message: RegExp) {
  expect(result.code, result.stderr).not.toBe(0);
  expect(result.stdout).toBe("");
  expect(result.stderr).toMatch(message);
}

/** What the catalogue commands may write: a refused one must leave it exactly so. */
const catalogueState = () =>
  sql(
    "SELECT 'service' AS kind, id, name AS a, is_default AS b, active AS c, updated_at AS d FROM services UNION ALL SELECT 'technician', id, name, days_off, active, updated_at FROM technicians UNION ALL SELECT 'incident', id, technician_id, status, starts_at, updated_at FROM incidents UNION ALL SELECT 'event', id, type, org_id, body, created_at FROM events ORDER BY 1, 2",
  );

/** 10:00 UTC on the first Wednesday at least three days ahead: inside the default weekly hours (Mon–Fri 08–17). */
function nextWednesdayAt10(): number {
  let day = Math.floor(Date.now() / DAY) * DAY + 3 * DAY;
  while (new Date(day).getUTCDay() !== 3) day += DAY;
  return day + 10 * HOUR;
}

const ALWAYS = Object.fromEntries(
  ["mon", "tue", "wed", "thu", "fri", "sat", "sun"].map((d) => [d, [["00:00", "24:00"]]]),
);

interface Technician {
  id: string;
  name: string;
  skills: string[];
  postalCodes: string[];
  weeklyHours: unknown;
  daysOff: string[];
  active: boolean;
}

let sam: Technician;
let visits: string[];

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-e2e-catalogue-cli-"));
  await applyMigrations(dir);
  org = jsonLine<Tenant>(await admin(dir, ["org", "create", "--name", "Catalogue CLI"]), "org create");
}, 120_000);

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("the catalogue commands of the real CLI", () => {
  it("service add --json prints exactly the service, and raises the org's longest span", async () => {
    const result = await admin(dir, [
      "service",
      "add",
      "--org",
      org.orgId,
      "--name",
      "Termite treatment",
      "--duration",
      "180",
      "--buffer",
      "30",
      "--window",
      "120",
      "--skills",
      "termite-license",
      "--keywords",
      "termites,white ants",
      "--default",
    ]);
    const service = jsonLine<Record<string, unknown>>(result, "service add");
    expect(service).toEqual({
      id: expect.stringMatching(/^svc_[0-9a-z]{26}$/),
      name: "Termite treatment",
      durationMinutes: 180,
      bufferMinutes: 30,
      arrivalWindowMinutes: 120,
      skills: ["termite-license"],
      keywords: ["termites", "white ants"],
      default: true,
      active: true,
    });
    expect(Object.keys(service)).toEqual([
      "id",
      "name",
      "durationMinutes",
      "bufferMinutes",
      "arrivalWindowMinutes",
      "skills",
      "keywords",
      "default",
      "active",
    ]);
    expect(await sql(`SELECT max_slot_minutes FROM orgs WHERE id = '${org.orgId}'`)).toEqual([
      { max_slot_minutes: 210 },
    ]);
  });

  it("a bad flag exits non-zero with the reason and writes nothing", async () => {
    const before = await catalogueState();
    const result = await admin(dir, ["service", "add", "--org", org.orgId, "--name", "Ants", "--duration", "7"]);
    expectRefused(result, /^error: --duration must be a multiple of 5 from 5 to 1440 \(minutes\)\n$/);
    expect(await catalogueState()).toEqual(before);
  });

  it("technician add reads --hours-file and normalises postal codes", async () => {
    const hours = path.join(dir, "hours.json");
    fs.writeFileSync(hours, JSON.stringify(ALWAYS));
    const result = await admin(dir, [
      "technician",
      "add",
      "--org",
      org.orgId,
      "--name",
      "Sam Ortiz",
      "--skills",
      "termite-license",
      "--postal-codes",
      "100, sw1a-1",
      "--hours-file",
      hours,
      "--days-off",
      "2026-12-24",
    ]);
    sam = jsonLine<Technician>(result, "technician add");
    expect(sam).toEqual({
      id: expect.stringMatching(/^tech_[0-9a-z]{26}$/),
      name: "Sam Ortiz",
      skills: ["termite-license"],
      postalCodes: ["100", "SW1A1"],
      weeklyHours: ALWAYS,
      daysOff: ["2026-12-24"],
      active: true,
    });
  });

  it("technician list prints them all", async () => {
    const listed = jsonLine(await admin(dir, ["technician", "list", "--org", org.orgId]), "technician list");
    expect(listed).toEqual({ technicians: [sam] });
  });

  it("an update that would strand future visits exits non-zero, names them, and changes nothing", async () => {
    // Two visits of Sam's, written as create-incident writes them.
    const [service] = await sql(`SELECT id FROM services WHERE org_id = '${org.orgId}'`);
    const at = nextWednesdayAt10();
    visits = ["inc_0000000000catalogueclie01", "inc_0000000000catalogueclie02"];
    const values = visits.map((id, i) => {
      const start = at + i * 4 * HOUR;
      return `('${id}', '${org.orgId}', 'scheduled', 'Ann Caller', 'termites', ${start}, ${start + 3 * HOUR}, ${start + 3.5 * HOUR}, 1000, 1000, '${service.id}', '${sam.id}', '10001', 120)`;
    });
    await sql(
      `INSERT INTO incidents (id, org_id, status, client_name, insect_name, starts_at, ends_at, occupied_until, created_at, updated_at, service_id, technician_id, postal_code, arrival_window_minutes) VALUES ${values.join(", ")}`,
    );
    const before = await catalogueState();
    const result = await admin(dir, ["technician", "update", "--org", org.orgId, "--id", sam.id, "--active", "false"]);
    expectRefused(
      result,
      new RegExp(
        `^error: technician ${sam.id} has future visits this change would leave without a technician: ${visits.join(", ")}; nothing changed \\(add --reassign`,
      ),
    );
    expect(await catalogueState()).toEqual(before);
  }, 120_000);

  it("technician import, then update --reassign moves the visits to the imported technician", async () => {
    const file = path.join(dir, "technicians.csv");
    fs.writeFileSync(file, "name,skills,postalCodes\nPriya Shah,termite-license,100;112\nDana Kim,,\n");
    const imported = jsonLine<{ imported: number; technicians: { id: string; name: string }[] }>(
      await admin(dir, ["technician", "import", "--org", org.orgId, "--file", file]),
      "technician import",
    );
    expect(imported).toEqual({
      imported: 2,
      technicians: [
        { id: expect.stringMatching(/^tech_/), name: "Priya Shah" },
        { id: expect.stringMatching(/^tech_/), name: "Dana Kim" },
      ],
    });
    const priya = imported.technicians[0]!.id;

    const moved = jsonLine(
      await admin(dir, ["technician", "update", "--org", org.orgId, "--id", sam.id, "--active", "false", "--reassign"]),
      "technician update --reassign",
    );
    expect(moved).toEqual({ technician: { ...sam, active: false }, reassigned: visits });
    expect(
      await sql(
        `SELECT i.id, i.technician_id, json_extract(e.body, '$.previous.technicianId') AS previous, json_extract(e.body, '$.data.technicianId') AS now FROM incidents i JOIN events e ON e.type = 'incident.reassigned' AND json_extract(e.body, '$.data.id') = i.id ORDER BY i.id`,
      ),
    ).toEqual(visits.map((id) => ({ id, technician_id: priya, previous: sam.id, now: priya })));
  }, 120_000);
});

describe("the real CLI process", () => {
  it("answers a list and a refusal as the in-process commands above do: the same exit code, stdout and stderr", async () => {
    for (const args of [
      ["technician", "list", "--org", org.orgId],
      ["service", "add", "--org", org.orgId, "--name", "Ants", "--duration", "7"],
    ]) {
      expect(await admin(dir, args), args.join(" ")).toEqual(await adminProcess(dir, args));
    }
  }, 120_000);
});
