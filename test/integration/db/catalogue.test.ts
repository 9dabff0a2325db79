// The `service …` and `technician …` commands of the admin CLI (docs/operations.md,
// "Services and technicians"), called directly as the CLI calls them, on the
// real D1: what they print, every refusal (a CliError, and nothing written),
// the default mark, max_slot_minutes, imports, and technician changes that
// would strand a visit: refused with the visits named, or with --reassign
// moved to other technicians in one all-or-nothing batch. Visits are booked
// through the real API.
import { env } from "cloudflare:test";
import { writeFile } from "node:fs/promises";
import { asc, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { events, incidents, orgs, services, technicians } from "../../../drizzle/schema";
import { COMMANDS, type Flags } from "../../../src/cli/commands";
import { CliError } from "../../../src/cli/errors";
import { createKey } from "../../../src/db/api-keys";
import { createDb, type D1Client } from "../../../src/db/client";
import { MAX_SERVICES } from "../../../src/db/services";
import { newId } from "../../../src/lib/ids";
import { call } from "../../support/request";
import { db, openTenant, type Tenant } from "../../support/tenants";
import { DAY, daysAhead, HOUR, iso } from "../../support/time";

const cliEnv = { webhookKey: () => "" };

const run = (command: string, flags: Flags, on = db()) => COMMANDS[command]!(on, flags, cliEnv);

/** Runs a command that must be refused with a CliError matching `message`. */
async function refused(command: string, flags: Flags, message: RegExp) {
  const error = await run(command, flags).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `${command} ${JSON.stringify(flags)}`).toBeInstanceOf(CliError);
  expect((error as Error).message).toMatch(message);
}

interface ServiceOut {
  id: string;
  name: string;
  durationMinutes: number;
  bufferMinutes: number;
  arrivalWindowMinutes: number;
  skills: string[];
  keywords: string[];
  default: boolean;
  active: boolean;
}

interface TechnicianOut {
  id: string;
  name: string;
  skills: string[];
  postalCodes: string[];
  weeklyHours: unknown;
  daysOff: string[];
  active: boolean;
}

const addService = async (t: Tenant, flags: Flags) =>
  (await run("service add", { org: t.orgId, ...flags })) as ServiceOut;

const addTechnician = async (t: Tenant, flags: Flags) =>
  (await run("technician add", { org: t.orgId, ...flags })) as TechnicianOut;

const listServices = async (t: Tenant) =>
  ((await run("service list", { org: t.orgId })) as { services: ServiceOut[] }).services;

const listTechnicians = async (t: Tenant) =>
  ((await run("technician list", { org: t.orgId })) as { technicians: TechnicianOut[] }).technicians;

const updateTechnician = async (t: Tenant, id: string, flags: Flags) =>
  (await run("technician update", { org: t.orgId, id, ...flags })) as {
    technician: TechnicianOut;
    reassigned: string[];
  };

/** Everything the commands may write for an org: a refused one must leave it exactly so. */
async function stateOf(t: Tenant) {
  const d = db();
  const [serviceRows, technicianRows, incidentRows, eventRows, orgRows] = await d.batch([
    d.select().from(services).where(eq(services.orgId, t.orgId)).orderBy(asc(services.id)),
    d.select().from(technicians).where(eq(technicians.orgId, t.orgId)).orderBy(asc(technicians.id)),
    d.select().from(incidents).where(eq(incidents.orgId, t.orgId)).orderBy(asc(incidents.id)),
    d.select().from(events).where(eq(events.orgId, t.orgId)).orderBy(asc(events.seq)),
    d.select().from(orgs).where(eq(orgs.id, t.orgId)),
  ]);
  return { serviceRows, technicianRows, incidentRows, eventRows, orgRows };
}

const maxSlotMinutes = async (t: Tenant) => (await stateOf(t)).orgRows[0]!.maxSlotMinutes;

/**
 * The tenant with a key no request has used: the API keeps an org's catalogue
 * with its verified key for up to 3 s (src/middleware/auth.ts), so a booking
 * right after a catalogue change goes through a new key.
 */
const fresh = async (t: Tenant): Promise<Tenant> => ({ ...t, apiKey: (await createKey(db(), t.orgId))!.apiKey });

interface Visit {
  id: string;
  technicianId: string | null;
  serviceId: string | null;
  postalCode: string | null;
  updatedAt: string;
}

/** Books through create-incident; fails the test unless it is booked. */
async function book(t: Tenant, at: number, body: Record<string, unknown>): Promise<Visit> {
  const res = await call(t, "/api/v1/ai-agent/create-incident", {
    body: { dateTime: iso(at), clientName: "Ann Caller", insectName: "termites", ...body },
  });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const incidentNow = async (t: Tenant, id: string): Promise<Visit> => {
  const res = await call(t, `/api/v1/incidents/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
};

let files = 0;
/** A file in workerd's /tmp, for the commands that read one. */
async function file(name: string, content: string): Promise<string> {
  const path = `/tmp/catalogue-${++files}-${name}`;
  await writeFile(path, content);
  return path;
}

const TERMITES = {
  name: "Termite treatment",
  duration: "180",
  buffer: "30",
  window: "120",
  skills: "termite-license",
  keywords: "termites, White Ants ,",
};

describe("service add, update, list", () => {
  it("add prints the service, defaults filled in; list shows inactive ones too, by name case-insensitively", async () => {
    const t = await openTenant();
    const termites = await addService(t, TERMITES);
    expect(termites).toEqual({
      id: expect.stringMatching(/^svc_[0-9a-z]{26}$/),
      name: "Termite treatment",
      durationMinutes: 180,
      bufferMinutes: 30,
      arrivalWindowMinutes: 120,
      skills: ["termite-license"],
      keywords: ["termites", "White Ants"],
      default: false,
      active: true,
    });
    const ants = await addService(t, { name: "  ants  ", duration: "60" });
    expect(ants).toEqual({
      id: expect.stringMatching(/^svc_/),
      name: "ants",
      durationMinutes: 60,
      bufferMinutes: 0,
      arrivalWindowMinutes: 0,
      skills: [],
      keywords: [],
      default: false,
      active: true,
    });
    const bees = await addService(t, { name: "Bees", duration: "45" });
    const off = await run("service update", { org: t.orgId, id: bees.id, active: "false" });
    expect(off).toEqual({ ...bees, active: false });
    expect(await listServices(t)).toEqual([ants, { ...bees, active: false }, termites]);
    // The API lists the active ones only.
    const listed = await call(t, "/api/v1/services");
    expect(listed.body).toEqual({ services: [ants, termites] });
  });

  it("update changes only the given fields and can clear a list", async () => {
    const t = await openTenant();
    const added = await addService(t, TERMITES);
    const renamed = await run("service update", { org: t.orgId, id: added.id, name: "Termites", window: "0" });
    expect(renamed).toEqual({ ...added, name: "Termites", arrivalWindowMinutes: 0 });
    const cleared = await run("service update", { org: t.orgId, id: added.id, skills: "", keywords: "" });
    expect(cleared).toEqual({ ...added, name: "Termites", arrivalWindowMinutes: 0, skills: [], keywords: [] });
    expect(await listServices(t)).toEqual([cleared]);
  });

  it("--default takes the mark from the previous default; deactivating drops it; an inactive service cannot take it", async () => {
    const t = await openTenant();
    const a = await addService(t, { name: "A", duration: "60", default: true });
    expect(a.default).toBe(true);
    const b = await addService(t, { name: "B", duration: "60", default: true });
    expect((await listServices(t)).map((s) => [s.name, s.default])).toEqual([
      ["A", false],
      ["B", true],
    ]);
    // Adding or changing another service leaves the mark where it is.
    const c = await addService(t, { name: "C", duration: "60" });
    await run("service update", { org: t.orgId, id: c.id, duration: "90", active: "false" });
    await run("service update", { org: t.orgId, id: a.id, name: "A" });
    expect((await listServices(t)).map((s) => [s.name, s.default])).toEqual([
      ["A", false],
      ["B", true],
      ["C", false],
    ]);
    await run("service update", { org: t.orgId, id: a.id, default: true });
    expect((await listServices(t)).map((s) => [s.name, s.default])).toEqual([
      ["A", true],
      ["B", false],
      ["C", false],
    ]);
    const off = (await run("service update", { org: t.orgId, id: a.id, active: "false" })) as ServiceOut;
    expect(off).toMatchObject({ default: false, active: false });
    expect((await listServices(t)).every((s) => !s.default)).toBe(true);

    const before = await stateOf(t);
    await refused("service update", { org: t.orgId, id: a.id, default: true }, /inactive.*--active true/);
    await refused(
      "service update",
      { org: t.orgId, id: b.id, default: true, active: "false" },
      /cannot be the default/,
    );
    expect(await stateOf(t)).toEqual(before);
    const back = await run("service update", { org: t.orgId, id: a.id, default: true, active: "true" });
    expect(back).toMatchObject({ default: true, active: true });
  });

  it("a name is unique in the org whatever its case, on add and on rename; other orgs may use it", async () => {
    const t = await openTenant();
    const first = await addService(t, { name: "Rodent exclusion", duration: "120" });
    const second = await addService(t, { name: "Ants", duration: "60" });
    const before = await stateOf(t);
    await refused(
      "service add",
      { org: t.orgId, name: "RODENT exclusion", duration: "60" },
      /already has a service named/,
    );
    await refused(
      "service update",
      { org: t.orgId, id: second.id, name: "rodent Exclusion" },
      new RegExp(`already has a service named "rodent Exclusion" \\(${first.id}\\)`),
    );
    expect(await stateOf(t)).toEqual(before);
    // Its own name in another case is a rename, not a clash.
    expect(await run("service update", { org: t.orgId, id: first.id, name: "RODENT EXCLUSION" })).toMatchObject({
      name: "RODENT EXCLUSION",
    });
    const other = await openTenant();
    expect(await addService(other, { name: "rodent exclusion", duration: "60" })).toMatchObject({
      name: "rodent exclusion",
    });
  });

  it("refuses every bad flag, writing nothing", async () => {
    const t = await openTenant();
    const kept = await addService(t, { name: "Kept", duration: "60" });
    const before = await stateOf(t);
    const org = t.orgId;
    const add = (flags: Flags) => ({ org, name: "New", duration: "60", ...flags });
    const cases: [string, Flags, RegExp][] = [
      ["service add", { org, duration: "60" }, /--name is required/],
      ["service add", add({ name: "   " }), /--name is required/],
      ["service add", add({ name: "x".repeat(201) }), /--name: must be at most 200 characters/],
      ["service add", { org, name: "New" }, /--duration is required/],
      ["service add", { name: "New", duration: "60" }, /--org is required/],
      ...["0", "3", "62", "1445", "abc", "60.5", "-5", "1e2"].map((duration): [string, Flags, RegExp] => [
        "service add",
        add({ duration }),
        /--duration must be a multiple of 5 from 5 to 1440/,
      ]),
      ["service add", add({ buffer: "241" }), /--buffer must be a whole number from 0 to 240/],
      ["service add", add({ buffer: "-1" }), /--buffer must be a whole number from 0 to 240/],
      ["service add", add({ window: "481" }), /--window must be a whole number from 0 to 480/],
      ["service add", add({ window: "1.5" }), /--window must be a whole number from 0 to 480/],
      ["service add", add({ skills: "Termite" }), /--skills: "Termite" must be 1 to 50 characters of a-z, 0-9/],
      ["service add", add({ skills: "a b" }), /--skills: "a b" must be/],
      ["service add", add({ skills: "s".repeat(51) }), /--skills: "s{51}" must be 1 to 50/],
      [
        "service add",
        add({ skills: Array.from({ length: 11 }, (_, i) => `s${i}`).join(",") }),
        /--skills: at most 10 skills/,
      ],
      [
        "service add",
        add({ keywords: Array.from({ length: 51 }, (_, i) => `k${i}`).join(",") }),
        /--keywords: at most 50 keywords/,
      ],
      [
        "service add",
        add({ keywords: `ok,${"k".repeat(201)}` }),
        /--keywords: "k{201}" must be at most 200 characters/,
      ],
      ["service add", add({ active: "false" }), /--active is for `service update` only/],
      ["service add", add({ id: kept.id }), /--id is for `service update` only/],
      ["service add", add({ org: "org_missing" }), /^unknown org: org_missing$/],
      ["service update", { org, name: "X" }, /--id is required/],
      ["service update", { org, id: kept.id, active: "yes" }, /--active must be true or false/],
      ["service update", { org, id: kept.id, duration: "7" }, /--duration must be a multiple of 5/],
      ["service update", { org, id: kept.id, reassign: true }, /--reassign is for `technician update` only/],
      ["service update", { org, id: "svc_missing", name: "X" }, new RegExp(`org ${org} has no service svc_missing`)],
      ["service update", { org: "org_missing", id: kept.id }, /^unknown org: org_missing$/],
      ["service list", { org: "org_missing" }, /^unknown org: org_missing$/],
    ];
    for (const [command, flags, message] of cases) await refused(command, flags, message);
    expect(await stateOf(t)).toEqual(before);
  });

  it("add and update raise max_slot_minutes to duration + buffer, never lower it, and leave booked visits alone", async () => {
    const t = await openTenant();
    expect(await maxSlotMinutes(t)).toBe(60);
    const s = await addService(t, { name: "Long", duration: "90", buffer: "15" });
    expect(await maxSlotMinutes(t)).toBe(105);
    await addService(t, { name: "Short", duration: "30" });
    expect(await maxSlotMinutes(t)).toBe(105);
    const at = daysAhead(2, 10);
    const visit = await book(await fresh(t), at, { serviceId: s.id });
    await run("service update", { org: t.orgId, id: s.id, buffer: "60" });
    expect(await maxSlotMinutes(t)).toBe(150);
    await run("service update", { org: t.orgId, id: s.id, duration: "20", buffer: "0" });
    expect(await maxSlotMinutes(t)).toBe(150);
    const [row] = (await stateOf(t)).incidentRows;
    expect(row).toMatchObject({
      id: visit.id,
      startsAt: at,
      endsAt: at + 90 * 60_000,
      occupiedUntil: at + 105 * 60_000,
      updatedAt: Date.parse(visit.updatedAt),
    });
  });

  it(`refuses a service beyond ${MAX_SERVICES}, writing nothing`, async () => {
    const t = await openTenant();
    const now = Date.now();
    const d = db();
    const rows = Array.from({ length: MAX_SERVICES }, (_, i) => ({
      id: newId("svc", now),
      orgId: t.orgId,
      name: `S${i}`,
      nameLower: `s${i}`,
      durationMinutes: 60,
      skills: [],
      keywords: [],
      createdAt: now,
      updatedAt: now,
    }));
    const [first, ...rest] = rows.map((row) => d.insert(services).values(row));
    await d.batch([first!, ...rest]);
    const before = await stateOf(t);
    await refused("service add", { org: t.orgId, name: "One more", duration: "60" }, /already has 200 services/);
    expect(await stateOf(t)).toEqual(before);
  });

  it("an add racing another past the limit or to the same name writes nothing", async () => {
    /** `service add` with another add run between its read and its write: the CliError it ends in. */
    const racing = async (t: Tenant, meddle: () => Promise<unknown>, flags: Flags) => {
      const on = createDb(beforeWrite(meddle));
      const error = await run("service add", { org: t.orgId, ...flags }, on).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CliError);
      return (error as Error).message;
    };

    const t = await openTenant();
    const before = await stateOf(t);
    const named = await racing(t, () => addService(t, { name: "Rats", duration: "30" }), {
      name: "RATS",
      duration: "300",
    });
    expect(named).toMatch(/already has a service named "RATS"; names are unique/);
    const after = await stateOf(t);
    expect(after.serviceRows.map((r) => r.name)).toEqual(["Rats"]);
    // The one that lost wrote nothing, not even its longer span.
    expect(after.orgRows[0]).toEqual(before.orgRows[0]);

    const full = await openTenant();
    const now = Date.now();
    const d = db();
    const [first, ...rest] = Array.from({ length: MAX_SERVICES - 1 }, (_, i) =>
      d.insert(services).values({
        id: newId("svc", now),
        orgId: full.orgId,
        name: `S${i}`,
        nameLower: `s${i}`,
        durationMinutes: 60,
        skills: [],
        keywords: [],
        createdAt: now,
        updatedAt: now,
      }),
    );
    await d.batch([first!, ...rest]);
    const last = await racing(full, () => addService(full, { name: "Last", duration: "60" }), {
      name: "Mice",
      duration: "600",
      default: true,
    });
    expect(last).toMatch(/already has 200 services/);
    const served = await stateOf(full);
    expect(served.serviceRows).toHaveLength(MAX_SERVICES);
    expect(served.serviceRows.filter((r) => r.name === "Mice" || r.isDefault)).toEqual([]);
    expect(served.orgRows[0]!.maxSlotMinutes).toBe(60);
  });
});

const NINE_TO_FIVE = {
  mon: [["09:00", "17:00"]],
  tue: [
    ["09:00", "12:00"],
    ["13:00", "17:00"],
  ],
};

describe("technician add, list, import", () => {
  it("add prints the technician: postal prefixes normalised, days off sorted, hours from the file; list shows them all", async () => {
    const t = await openTenant();
    const hours = await file("hours.json", JSON.stringify(NINE_TO_FIVE));
    const sam = await addTechnician(t, {
      name: "Sam Ortiz",
      skills: "termite-license,rodent,termite-license",
      "postal-codes": "100, sw1a-1 ,1120",
      "hours-file": hours,
      "days-off": "2026-12-31,2026-12-24",
    });
    expect(sam).toEqual({
      id: expect.stringMatching(/^tech_[0-9a-z]{26}$/),
      name: "Sam Ortiz",
      skills: ["termite-license", "rodent"],
      postalCodes: ["100", "SW1A1", "1120"],
      weeklyHours: { ...NINE_TO_FIVE, wed: [], thu: [], fri: [], sat: [], sun: [] },
      daysOff: ["2026-12-24", "2026-12-31"],
      active: true,
    });
    const dana = await addTechnician(t, { name: "Dana" });
    expect(dana).toEqual({
      id: expect.stringMatching(/^tech_/),
      name: "Dana",
      skills: [],
      postalCodes: [],
      weeklyHours: null,
      daysOff: [],
      active: true,
    });
    expect(await listTechnicians(t)).toEqual([sam, dana].sort((a, b) => (a.id < b.id ? -1 : 1)));
    // A file holding null puts a technician back on the org's hours.
    const back = await updateTechnician(t, sam.id, { "hours-file": await file("null.json", "null") });
    expect(back).toEqual({ technician: { ...sam, weeklyHours: null }, reassigned: [] });
  });

  it("refuses every bad flag and hours file, writing nothing", async () => {
    const t = await openTenant();
    const kept = await addTechnician(t, { name: "Kept" });
    const before = await stateOf(t);
    const org = t.orgId;
    const add = (flags: Flags) => ({ org, name: "New", ...flags });
    const hours = (content: string) => file("bad-hours.json", content);
    const cases: [string, Flags, RegExp][] = [
      ["technician add", { org }, /--name is required/],
      ["technician add", add({ name: "y".repeat(201) }), /--name: must be at most 200 characters/],
      ["technician add", add({ skills: "Licensed" }), /--skills: "Licensed" must be 1 to 50 characters/],
      ["technician add", add({ "postal-codes": "100,10 01!" }), /--postal-codes: "10 01!" must be 1 to 12 letters/],
      ["technician add", add({ "postal-codes": "ABCDEFGHIJKLM" }), /--postal-codes: "ABCDEFGHIJKLM" must be 1 to 12/],
      ["technician add", add({ "days-off": "2026-02-30" }), /--days-off: "2026-02-30" must be a date YYYY-MM-DD/],
      ["technician add", add({ "days-off": "2026-1-1" }), /--days-off: "2026-1-1" must be a date/],
      [
        "technician add",
        add({
          "days-off": Array.from({ length: 367 }, (_, i) => iso(Date.UTC(2027, 0, 1) + i * DAY).slice(0, 10)).join(","),
        }),
        /--days-off: at most 366 days off/,
      ],
      ["technician add", add({ "hours-file": "/tmp/no-such-file.json" }), /cannot read \/tmp\/no-such-file.json/],
      ["technician add", add({ "hours-file": await hours("{") }), /is not valid JSON/],
      ["technician add", add({ "hours-file": await hours("[]") }), /must hold one weeklyHours object/],
      [
        "technician add",
        add({ "hours-file": await hours('{"mon": [["09:00", "08:00"]]}') }),
        /invalid weeklyHours, nothing stored:\n {2}mon: opens at 09:00, not before it closes at 08:00/,
      ],
      ["technician add", add({ "hours-file": await hours('{"monday": []}') }), /unknown field "monday"/],
      [
        "technician add",
        add({ "hours-file": await hours('{"tue": [["9:00", "17:00"]]}') }),
        /tue: "9:00" must be a time/,
      ],
      ["technician add", add({ active: "true" }), /--active is for `technician update` only/],
      ["technician add", add({ reassign: true }), /--reassign is for `technician update` only/],
      ["technician add", add({ org: "org_missing" }), /^unknown org: org_missing$/],
      ["technician update", { org, id: kept.id, active: "no" }, /--active must be true or false/],
      [
        "technician update",
        { org, id: "tech_missing", name: "X" },
        new RegExp(`org ${org} has no technician tech_missing`),
      ],
      ["technician update", { org: "org_missing", id: kept.id }, /^unknown org: org_missing$/],
      ["technician list", { org: "org_missing" }, /^unknown org: org_missing$/],
    ];
    for (const [command, flags, message] of cases) await refused(command, flags, message);
    expect(await stateOf(t)).toEqual(before);
  });

  it("import adds every technician of a JSON file, in the file's order, defaults filled in", async () => {
    const t = await openTenant();
    const json = await file(
      "technicians.json",
      JSON.stringify([
        { name: "Sam Ortiz", skills: ["termite-license"], postalCodes: ["112", "100"], daysOff: ["2026-12-24"] },
        { name: "Priya Shah", weeklyHours: NINE_TO_FIVE, active: false },
        { name: "Marcus Lee", postalCodes: ["sw1a 1"], weeklyHours: null },
      ]),
    );
    const result = (await run("technician import", { org: t.orgId, file: json })) as {
      imported: number;
      technicians: { id: string; name: string }[];
    };
    expect(result).toEqual({
      imported: 3,
      technicians: ["Sam Ortiz", "Priya Shah", "Marcus Lee"].map((name) => ({
        id: expect.stringMatching(/^tech_/),
        name,
      })),
    });
    const listed = await listTechnicians(t);
    expect(listed.map((x) => x.id)).toEqual(result.technicians.map((x) => x.id));
    expect(listed).toEqual([
      {
        id: result.technicians[0]!.id,
        name: "Sam Ortiz",
        skills: ["termite-license"],
        postalCodes: ["112", "100"],
        weeklyHours: null,
        daysOff: ["2026-12-24"],
        active: true,
      },
      {
        id: result.technicians[1]!.id,
        name: "Priya Shah",
        skills: [],
        postalCodes: [],
        weeklyHours: { ...NINE_TO_FIVE, wed: [], thu: [], fri: [], sat: [], sun: [] },
        daysOff: [],
        active: false,
      },
      {
        id: result.technicians[2]!.id,
        name: "Marcus Lee",
        skills: [],
        postalCodes: ["SW1A1"],
        weeklyHours: null,
        daysOff: [],
        active: true,
      },
    ]);
  });

  it("import reads a CSV file: lists separated by ';', weeklyHours a JSON cell, empty cells left out", async () => {
    const t = await openTenant();
    const csv = await file(
      "technicians.csv",
      [
        "name,skills,postalCodes,weeklyHours,daysOff,active",
        `Sam Ortiz,termite-license;rodent,100; 1120,"${JSON.stringify(NINE_TO_FIVE).replaceAll('"', '""')}",2026-12-24;2026-12-25,true`,
        "Dana Kim,,,,,false",
        "",
      ].join("\r\n"),
    );
    const result = (await run("technician import", { org: t.orgId, file: csv })) as { imported: number };
    expect(result.imported).toBe(2);
    expect((await listTechnicians(t)).map(({ id: _, ...rest }) => rest)).toEqual([
      {
        name: "Sam Ortiz",
        skills: ["termite-license", "rodent"],
        postalCodes: ["100", "1120"],
        weeklyHours: { ...NINE_TO_FIVE, wed: [], thu: [], fri: [], sat: [], sun: [] },
        daysOff: ["2026-12-24", "2026-12-25"],
        active: true,
      },
      { name: "Dana Kim", skills: [], postalCodes: [], weeklyHours: null, daysOff: [], active: false },
    ]);
  });

  it("an import with bad records imports nothing and names each bad record", async () => {
    const t = await openTenant();
    await addTechnician(t, { name: "Already here" });
    const before = await stateOf(t);
    const json = await file(
      "bad.json",
      JSON.stringify([
        { name: "Good One" },
        { name: "Bad Skills", skills: ["Termite"] },
        { skills: [] },
        { name: "Extra", colour: "red" },
        { name: "Good Two" },
      ]),
    );
    const error = await run("technician import", { org: t.orgId, file: json }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CliError);
    const message = (error as Error).message;
    expect(message).toMatch(/3 problem\(s\), nothing imported/);
    expect(message).toContain('record 2 (Bad Skills): skills: "Termite" must be 1 to 50 characters');
    expect(message).toContain("record 3: name: is required");
    expect(message).toContain('record 4 (Extra): unknown field "colour"');
    expect(message).not.toMatch(/record [15]/);

    const csv = await file(
      "bad.csv",
      ["name,weeklyHours,daysOff,active", "Ok,,,", "Broken,{mon,,", "Dates,,2026-13-01,maybe"].join("\n"),
    );
    const csvError = await run("technician import", { org: t.orgId, file: csv }).catch((e: unknown) => e);
    expect((csvError as Error).message).toMatch(/3 problem\(s\), nothing imported/);
    expect((csvError as Error).message).toContain("record 2 (Broken): weeklyHours: must be a weeklyHours object");
    expect((csvError as Error).message).toContain('record 3 (Dates): daysOff: "2026-13-01" must be a date YYYY-MM-DD');
    expect((csvError as Error).message).toContain("record 3 (Dates): active: must be true or false");

    await refused(
      "technician import",
      { org: t.orgId, file: await file("object.json", "{}") },
      /an array of technician objects/,
    );
    await refused(
      "technician import",
      { org: "org_missing", file: await file("one.json", '[{"name":"A"}]') },
      /unknown org/,
    );
    expect(await stateOf(t)).toEqual(before);
  });
});

/**
 * An org with the termite service and technician A, licensed and covering
 * "100", who takes two visits on one day (at 10:00 and 14:00, postal code
 * 10001); other technicians are added after the bookings.
 */
async function orgWithVisits() {
  const t = await openTenant();
  const service = await addService(t, { name: "Termites", duration: "120", buffer: "30", skills: "termite-license" });
  const a = await addTechnician(t, { name: "A", skills: "termite-license", "postal-codes": "100" });
  const day = daysAhead(3, 0);
  const fields = { serviceId: service.id, postalCode: "100 01" };
  const first = await book(t, day + 10 * HOUR, fields);
  const second = await book(t, day + 14 * HOUR, fields);
  expect([first.technicianId, second.technicianId]).toEqual([a.id, a.id]);
  return { t, service, a, day, fields, visits: [first.id, second.id] };
}

describe("technician update: a change never strands a visit", () => {
  it("refuses, naming the future visits, to deactivate, give a day off on their date, or take a skill or postal code they need", async () => {
    const { t, a, day, visits } = await orgWithVisits();
    const date = iso(day).slice(0, 10);
    const before = await stateOf(t);
    const both = new RegExp(
      `technician ${a.id} has future visits this change would leave without a technician: ${visits.join(", ")}; nothing changed \\(add --reassign`,
    );
    await refused("technician update", { org: t.orgId, id: a.id, active: "false" }, both);
    await refused("technician update", { org: t.orgId, id: a.id, "days-off": `2026-01-01,${date}` }, both);
    await refused("technician update", { org: t.orgId, id: a.id, skills: "" }, both);
    await refused("technician update", { org: t.orgId, id: a.id, skills: "rodent" }, both);
    await refused("technician update", { org: t.orgId, id: a.id, "postal-codes": "112" }, both);
    await refused("technician update", { org: t.orgId, id: a.id, "postal-codes": "1001" }, both);
    expect(await stateOf(t)).toEqual(before);

    // What leaves every visit doable goes through.
    const next = iso(day + DAY).slice(0, 10);
    const changed = await updateTechnician(t, a.id, {
      name: "A. Renamed",
      skills: "termite-license,rodent",
      "postal-codes": "10001,112",
      "days-off": next,
    });
    expect(changed).toEqual({
      technician: {
        ...a,
        name: "A. Renamed",
        skills: ["termite-license", "rodent"],
        postalCodes: ["10001", "112"],
        daysOff: [next],
      },
      reassigned: [],
    });
    expect(await updateTechnician(t, a.id, { "postal-codes": "" })).toMatchObject({ reassigned: [] });
    expect((await stateOf(t)).incidentRows).toEqual(before.incidentRows);
  });

  it("--reassign moves each visit to an eligible free technician, the fewest visits that day first, with an incident.reassigned event", async () => {
    const { t, a, visits } = await orgWithVisits();
    // B and C can take them; D lacks the licence, E covers elsewhere, F is inactive.
    const b = await addTechnician(t, { name: "B", skills: "termite-license" });
    const c = await addTechnician(t, { name: "C", skills: "termite-license", "postal-codes": "1000" });
    await addTechnician(t, { name: "D" });
    await addTechnician(t, { name: "E", skills: "termite-license", "postal-codes": "112" });
    const f = await addTechnician(t, { name: "F", skills: "termite-license" });
    await updateTechnician(t, f.id, { active: "false" });

    const result = await updateTechnician(t, a.id, { active: "false", reassign: true });
    expect(result).toEqual({ technician: { ...a, active: false }, reassigned: visits });
    // Both were free with no visit that day: the first goes to the lower id, the second to the other.
    const [low, high] = [b.id, c.id].sort();
    const [first, second] = await Promise.all(visits.map((id) => incidentNow(t, id)));
    expect([first!.technicianId, second!.technicianId]).toEqual([low, high]);

    const listed = await call(t, "/api/v1/events?type=incident.reassigned");
    // Made by the admin CLI: no key, no call.
    const CLI_ACTOR = { keyId: null, role: null, channel: "cli", callId: null, callerPhone: null };
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data).toEqual([
      {
        id: expect.stringMatching(/^evt_/),
        type: "incident.reassigned",
        timestamp: first!.updatedAt,
        actor: CLI_ACTOR,
        data: first,
        previous: { technicianId: a.id },
      },
      {
        id: expect.stringMatching(/^evt_/),
        type: "incident.reassigned",
        timestamp: second!.updatedAt,
        actor: CLI_ACTOR,
        data: second,
        previous: { technicianId: a.id },
      },
    ]);
    // A is off the schedule: a new booking goes to someone else.
    expect(await listTechnicians(t)).toContainEqual({ ...a, active: false });
  });

  it("--reassign that cannot place every visit changes nothing and names the visits no one can take", async () => {
    const { t, a, day, fields, visits } = await orgWithVisits();
    const deactivate = { org: t.orgId, id: a.id, active: "false", reassign: true };
    const b = await addTechnician(t, { name: "B", skills: "termite-license" });
    // B takes a visit at 11:00, overlapping A's at 10:00 (till 12:30 with its buffer), not the one at 14:00.
    const taken = await book(await fresh(t), day + 11 * HOUR, fields);
    expect(taken.technicianId).toBe(b.id);
    const before = await stateOf(t);
    const onlyFirst = new RegExp(
      `no other technician is eligible, on duty and free for these visits of ${a.id}: ${visits[0]}; nothing changed$`,
    );
    await refused("technician update", deactivate, onlyFirst);
    expect(await stateOf(t)).toEqual(before);

    // None of these can take the one at 10:00 either: off that day, on duty only from 12:00, unlicensed, elsewhere.
    await addTechnician(t, { name: "C", skills: "termite-license", "days-off": iso(day).slice(0, 10) });
    const afternoons = await file("afternoons.json", JSON.stringify({ [weekdayOf(day)]: [["12:00", "18:00"]] }));
    const d = await addTechnician(t, { name: "D", skills: "termite-license", "hours-file": afternoons });
    await addTechnician(t, { name: "E" });
    await addTechnician(t, { name: "F", skills: "termite-license", "postal-codes": "112" });
    const withOthers = await stateOf(t);
    await refused("technician update", deactivate, onlyFirst);
    await refused("technician update", { ...deactivate, active: undefined, skills: "" }, onlyFirst);
    expect(await stateOf(t)).toEqual(withOthers);
    expect(withOthers.incidentRows).toEqual(before.incidentRows);
    expect(withOthers.eventRows).toEqual(before.eventRows);

    // G can take it; the one at 14:00 then goes to D, the only one with no visit that day.
    const g = await addTechnician(t, { name: "G", skills: "termite-license" });
    expect(await updateTechnician(t, a.id, { active: "false", reassign: true })).toMatchObject({ reassigned: visits });
    expect((await incidentNow(t, visits[0]!)).technicianId).toBe(g.id);
    expect((await incidentNow(t, visits[1]!)).technicianId).toBe(d.id);
  });

  it("--reassign counts live holds: a held technician takes no visit the hold overlaps, and a hold made meanwhile fails the write", async () => {
    const { t, a, day, fields, visits } = await orgWithVisits();
    const b = await addTechnician(t, { name: "B", skills: "termite-license" });
    const caller = await fresh(t);
    const hold = async (at: number) => {
      const res = await call(caller, "/api/v1/ai-agent/hold-slot", { body: { dateTime: iso(at), ...fields } });
      expect(res.status, res.text).toBe(200);
      expect(res.body.technicianId).toBe(b.id);
      return res.body.holdId as string;
    };
    const deactivate = { org: t.orgId, id: a.id, active: "false", reassign: true };
    // B is held 11:00–13:30: the visit at 10:00 (till 12:30) has no one to go to.
    const held = await hold(day + 11 * HOUR);
    const before = await stateOf(t);
    await refused(
      "technician update",
      deactivate,
      new RegExp(
        `no other technician is eligible, on duty and free for these visits of ${a.id}: ${visits[0]}; nothing changed$`,
      ),
    );
    expect(await stateOf(t)).toEqual(before);

    // Released, B is free again; a hold at 14:00 made between the update's read and its write fails it whole.
    const released = await call(caller, "/api/v1/ai-agent/release-hold", { body: { holdId: held } });
    expect(released.status, released.text).toBe(200);
    const on = createDb(beforeWrite(() => hold(day + 14 * HOUR)));
    const error = await run("technician update", deactivate, on).catch((e: unknown) => e);
    expect((error as Error).message).toBe("the schedule changed while reassigning; nothing changed, run it again");
    expect((await incidentNow(t, visits[1]!)).technicianId).toBe(a.id);
  });

  it("a write whose visits changed after they were read fails whole: nothing changes, and the CLI says to run it again", async () => {
    const { t, a, day, fields, visits } = await orgWithVisits();
    const b = await addTechnician(t, { name: "B", skills: "termite-license" });
    const booker = await fresh(t);
    /** The update, with `meddle` run between its read and its write, must be refused. */
    const meddled = async (meddle: () => Promise<unknown>, flags: Flags) => {
      const on = createDb(beforeWrite(meddle));
      const error = await run("technician update", { org: t.orgId, id: a.id, ...flags }, on).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CliError);
      expect((error as Error).message).toBe("the schedule changed while reassigning; nothing changed, run it again");
    };
    const unchanged = (now: Awaited<ReturnType<typeof stateOf>>, then: Awaited<ReturnType<typeof stateOf>>) => {
      expect(now.technicianRows).toEqual(then.technicianRows);
      expect(now.eventRows.filter((e) => e.type === "incident.reassigned")).toEqual([]);
      expect(now.incidentRows.filter((r) => r.technicianId === a.id).map((r) => r.id)).toEqual(visits);
    };

    // The visit at 10:00 is changed by someone else: its move no longer applies.
    const before = await stateOf(t);
    await meddled(
      () =>
        db()
          .update(incidents)
          .set({ updatedAt: Date.now() + 1 })
          .where(eq(incidents.id, visits[0]!)),
      { active: "false", reassign: true },
    );
    unchanged(await stateOf(t), before);

    // B is booked at 14:00 meanwhile: the visit moved there would overlap it.
    await meddled(async () => expect((await book(booker, day + 14 * HOUR, fields)).technicianId).toBe(b.id), {
      active: "false",
      reassign: true,
    });
    unchanged(await stateOf(t), before);

    // Without --reassign: a day off on a free day, while A is booked on it (A has the lower id).
    const next = day + DAY;
    await meddled(async () => expect((await book(booker, next + 10 * HOUR, fields)).technicianId).toBe(a.id), {
      "days-off": iso(next).slice(0, 10),
    });
    expect((await listTechnicians(t)).find((x) => x.id === a.id)!.daysOff).toEqual([]);
  });
});

/** The weekday key of the UTC date of `instant`. */
const weekdayOf = (instant: number) =>
  ["sun", "mon", "tue", "wed", "thu", "fri", "sat"][new Date(instant).getUTCDay()]!;

/**
 * The test D1 with `meddle` run just before the command's write batch (its
 * second batch: the first one reads), as another writer would between them.
 */
function beforeWrite(meddle: () => Promise<unknown>): D1Client {
  let batches = 0;
  return {
    prepare: (query: string) => env.DB.prepare(query),
    batch: async (statements: D1PreparedStatement[]) => {
      if (++batches === 2) await meddle();
      return env.DB.batch(statements);
    },
  } as D1Client;
}
