// The data repair (docs/operations.md, "Dates outside the years 0001–9999"), done when the events feed of a repaired database
// validates against the OpenAPI document. Over a real `wrangler dev`: leads
// whose instants the code before the range check stored out of range (seeded
// into D1 as it wrote them), an events feed that the served document's own
// schema refuses, `dates check` and `dates repair` through the real CLI on the
// server's state folder, and then every page of the feed valid. The org is
// created, and the rows moved out of range and read back, in this process
// (admin, d1Execute: see harness.ts).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ApiResponse,
  admin,
  adminProcess,
  applyMigrations,
  cli,
  DevServer,
  d1Execute,
  freePort,
  jsonLine,
  type RequestOptions,
  request,
  type Tenant,
} from "./harness";

/** What "9999-12-31T23:00:00-14:00" and "0001-01-01T00:00:00+00:01" were stored as, and how toISOString wrote them. */
const LATE = { millis: 253402347600000, iso: "+010000-01-01T13:00:00.000Z", sent: "9999-12-31T00:00:00.000Z" };
const EARLY = { millis: -62135596860000, iso: "0000-12-31T23:59:00.000Z", sent: "0001-01-01T00:00:00.000Z" };

let dir: string;
let server: DevServer | undefined;
let org: Tenant;
/** The served document's schemas of a 200 events page and of a created lead (ajv, JSON Schema 2020-12, formats checked). */
let validEventPage: ValidateFunction;
let validLead: ValidateFunction;

/** The 200 schema of `path`'s `method`, from the document added as `base`. */
const responseSchema = (base: string, pathName: string, method: string) => ({
  $ref: `${base}#/paths/${pathName.replaceAll("/", "~1")}/${method}/responses/200/content/application~1json/schema`,
});

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-dates-"));
  await applyMigrations(dir);
  server = await DevServer.start(dir, await freePort());
  org = jsonLine<Tenant>(await admin(dir, ["org", "create", "--name", "Dates Org"]), "org create");
  const document = await (await fetch(`${server.baseUrl}/api/v1/openapi.json`)).json<Record<string, unknown>>();
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  const base = "https://field-service.test/openapi.json";
  ajv.addSchema(document, base);
  validEventPage = ajv.compile(responseSchema(base, "/api/v1/events", "get"));
  validLead = ajv.compile(responseSchema(base, "/api/v1/leads", "post"));
});

afterAll(async () => {
  await server?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

function call(urlPath: string, options?: RequestOptions): Promise<ApiResponse> {
  if (!server) throw new Error("the server did not start");
  return request(server.baseUrl, org, urlPath, options);
}

/** Every page of the events feed, one event a page. */
async function eventPages(): Promise<ApiResponse[]> {
  const pages: ApiResponse[] = [];
  for (let cursor = ""; ; ) {
    const page = await call(`/api/v1/events?limit=1${cursor && `&cursor=${encodeURIComponent(cursor)}`}`);
    expect(page.status, page.text).toBe(200);
    pages.push(page);
    if (!page.body.hasMore) return pages;
    cursor = page.body.nextCursor;
  }
}

/** The document's complaints about each page, by its event's id (none: valid). */
const complaints = (pages: ApiResponse[]) =>
  Object.fromEntries(
    pages.map((page) => [
      page.body.data[0]?.id,
      validEventPage(page.body) ? [] : (validEventPage.errors ?? []).map((e) => `${e.instancePath} ${e.message}`),
    ]),
  );

const LATE_LEAD = { firstName: "Late", estimatedCloseDate: LATE.sent };
const LATE_KEY = { "Idempotency-Key": "dates-late-lead" };

async function createLead(body: object, headers?: Record<string, string>): Promise<string> {
  const res = await call("/api/v1/leads", { body, headers });
  expect(res.status, res.text).toBe(200);
  return res.body.id;
}

/**
 * Stores each `iso` where its lead's `sent` instant is: in its column (as
 * millis), its event and its recorded answer, as the code before the range
 * check stored an instant it had read out of range. One batch.
 */
const moveOutOfRange = (moves: [string, typeof LATE][]) =>
  d1Execute(
    dir,
    moves
      .map(
        ([leadId, { millis, iso, sent }]) =>
          `UPDATE leads SET estimated_close_date = ${millis} WHERE id = '${leadId}';
           UPDATE events SET body = replace(body, '"${sent}"', '"${iso}"') WHERE body LIKE '%"${leadId}"%';
           UPDATE idempotency_keys SET body = replace(body, '"${sent}"', '"${iso}"') WHERE body LIKE '%"${leadId}"%';`,
      )
      .join("\n"),
  );

describe("dates check and dates repair, end to end", () => {
  it("turn an events feed the OpenAPI document refuses into one it accepts, page by page", async () => {
    const late = await createLead(LATE_LEAD, LATE_KEY);
    const early = await createLead({ firstName: "Early", estimatedCloseDate: EARLY.sent });
    const fine = await createLead({ firstName: "Fine", estimatedCloseDate: "2026-12-15" });
    await moveOutOfRange([
      [late, LATE],
      [early, EARLY],
    ]);

    const before = await eventPages();
    const eventOf = (leadId: string) => before.find((page) => page.body.data[0].data.id === leadId)!.body.data[0].id;
    const [lateEvent, earlyEvent, fineEvent] = [eventOf(late), eventOf(early), eventOf(fine)];
    // Year 0000 is RFC 3339 and passes the document's format; only the expanded year fails it.
    expect(complaints(before)).toEqual({
      [lateEvent]: expect.arrayContaining(['/data/0/data/estimatedCloseDate must match format "date-time"']),
      [earlyEvent]: [],
      [fineEvent]: [],
    });

    const finding = (table: string, id: string, field: string, value: number | string) => ({
      table,
      id,
      orgId: org.orgId,
      field,
      value,
      repairable: true,
    });
    const byId = <T extends { id: string }>(items: T[]) => items.sort((a, b) => (a.id < b.id ? -1 : 1));
    const expected = [
      ...byId([
        finding("leads", late, "estimated_close_date", LATE.millis),
        finding("leads", early, "estimated_close_date", EARLY.millis),
      ]),
      ...byId([
        finding("events", lateEvent, "$.data.estimatedCloseDate", LATE.iso),
        finding("events", earlyEvent, "$.data.estimatedCloseDate", EARLY.iso),
      ]),
      finding("idempotency_keys", LATE_KEY["Idempotency-Key"], "$.estimatedCloseDate", LATE.iso),
    ];
    const checked = jsonLine<{ findings: unknown[] }>(await adminProcess(dir, ["dates", "check"]), "dates check");
    expect(checked).toEqual({ findings: expected });
    // The check wrote nothing.
    expect(complaints(await eventPages())[lateEvent]).not.toEqual([]);

    const repaired = jsonLine(await adminProcess(dir, ["dates", "repair"]), "dates repair");
    expect(repaired).toEqual({
      changes: expected.map(({ table, id, orgId, field, value }) => ({
        table,
        id,
        orgId,
        field,
        oldValue: value,
        newValue: null,
      })),
      eventIds: byId([{ id: lateEvent }, { id: earlyEvent }]).map((event) => event.id),
      unrepaired: [],
    });

    const after = await eventPages();
    expect(complaints(after)).toEqual({ [lateEvent]: [], [earlyEvent]: [], [fineEvent]: [] });
    expect(after.map((page) => page.body.data[0].data.estimatedCloseDate)).toEqual(
      before.map((page) => (page.body.data[0].id === fineEvent ? "2026-12-15T00:00:00.000Z" : null)),
    );
    expect(await d1Execute(dir, `SELECT id, estimated_close_date AS d FROM leads ORDER BY id`)).toEqual(
      byId([
        { id: late, d: null },
        { id: early, d: null },
        { id: fine, d: Date.parse("2026-12-15T00:00:00Z") },
      ]),
    );
    // A replay of the late lead's request answers the repaired lead, which the document accepts.
    const replay = await call("/api/v1/leads", { body: LATE_LEAD, headers: LATE_KEY });
    expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
    expect(replay.body).toMatchObject({ id: late, estimatedCloseDate: null });
    expect(validLead(replay.body), JSON.stringify(validLead.errors)).toBe(true);

    // Nothing left: a second repair changes nothing and says so.
    const again = await cli(["dates", "repair", "--persist-to", dir]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe("changes: none\neventIds: none\nunrepaired: none\n");
  }, 180_000); // three CLI runs

  it("refuses an unknown org, exiting non-zero with nothing on stdout", async () => {
    const result = await adminProcess(dir, ["dates", "check", "--org", "org_unknown"]);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/unknown org: org_unknown/);
  });
});
