// Rows-read budgets, from D1's own `meta.rows_read` on a recording binding:
// a contacts or incidents page reads O(limit) rows however deep it is (limit +
// 1 under every incidents filter but updatedSince), and an availability call
// reads the bookings of the window it scans, not the org's history.
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { createKey } from "../../../src/db/api-keys";
import { storeSchedule } from "../../../src/db/orgs";
import { newId } from "../../../src/lib/ids";
import { rowsRead, wrapD1 } from "../../support/d1";
import { call } from "../../support/request";
import { everyDay } from "../../support/schedules";
import { addAccount, db, newTenant, openAlways, type Tenant } from "../../support/tenants";
import { DAY, daysAhead, HOUR, iso, today } from "../../support/time";

const CONTACTS = 3_000;
const BOOKINGS = 3_000;
const LIMIT = 50;
// An index seek costs D1 a row or two beyond the rows it returns.
const SEEK_SLACK = 3;

let crm: Tenant;
let accountId: string;
let heavy: Tenant;
let empty: Tenant;
let booked: Tenant;
let bookedAccount: string;
const INCIDENTS = 3_000;
const PHONE = "+19175550134";
// Starts one hour apart from here; updated either a month ago or now.
const FIRST_START = Date.now() + 2 * DAY;
const RECENTLY = Date.now() - HOUR;

async function send(tenant: Tenant, path: string, body?: unknown) {
  const recorder = wrapD1(env.DB);
  const response = await call(tenant, path, { body, bindings: { DB: recorder.db } });
  expect(response.status, response.text).toBe(200);
  // The operation's trips: the isolate's key cache (3 s) may have lapsed during
  // a long walk, and authentication's read is budgeted elsewhere.
  const trips = recorder.trips.filter((trip) => !trip.sql.some((sql) => sql.includes('from "api_keys"')));
  return { json: response.body, trips };
}

/** Inserts rows through json_each, one statement per 500 rows, in one batch. */
async function bulkInsert(table: string, columns: string[], orgId: string, rows: unknown[][]) {
  const sql = `INSERT INTO ${table} (org_id, ${columns.join(", ")}) SELECT ?1, ${columns.map((_, i) => `value ->> ${i}`).join(", ")} FROM json_each(?2)`;
  const statements = [];
  for (let i = 0; i < rows.length; i += 500)
    statements.push(env.DB.prepare(sql).bind(orgId, JSON.stringify(rows.slice(i, i + 500))));
  await env.DB.batch(statements);
}

beforeAll(async () => {
  const now = Date.now();
  crm = await newTenant("Rows CRM");
  accountId = (await addAccount(crm, "Rows Account")).id;
  await bulkInsert(
    "contacts",
    ["id", "first_name", "email", "email_lower", "account_id", "created_at", "updated_at"],
    crm.orgId,
    Array.from({ length: CONTACTS }, (_, i) => [
      newId("ct", now - i * 1000),
      `C${i}`,
      `c${i}@x.co`,
      `c${i}@x.co`,
      i % 2 ? accountId : null,
      now - i * 1000,
      now - i * 1000,
    ]),
  );

  const schedule = {
    timeZone: "UTC",
    minNoticeMinutes: 0,
    capacity: 50,
    horizonDays: 365,
    weeklyHours: everyDay(["08:00", "18:00"]),
  };
  heavy = await newTenant("Rows Heavy");
  empty = await newTenant("Rows Empty");
  await storeSchedule(db(), heavy.orgId, schedule);
  await storeSchedule(db(), empty.orgId, schedule);
  // A year of history around now: whole hours from 08:00 to 17:00 UTC, several per slot.
  const midnight = today(now);
  await bulkInsert(
    "incidents",
    ["id", "client_name", "insect_name", "starts_at", "ends_at", "created_at"],
    heavy.orgId,
    Array.from({ length: BOOKINGS }, (_, i) => {
      const start = midnight + ((i % 365) - 182) * DAY + (8 + (i % 10)) * HOUR;
      return [newId("inc", start), `Client ${i}`, "Ants", start, start + HOUR, start];
    }),
  );
  // An org whose incidents every list filter splits: phone or account by
  // parity, cancelled one in three, changed recently by halves of each day.
  booked = await newTenant("Rows Incidents");
  bookedAccount = (await addAccount(booked, "Rows Incident Account")).id;
  await bulkInsert(
    "incidents",
    [
      "id",
      "status",
      "client_name",
      "insect_name",
      "account_id",
      "phone",
      "starts_at",
      "ends_at",
      "created_at",
      "updated_at",
    ],
    booked.orgId,
    Array.from({ length: INCIDENTS }, (_, i) => {
      const start = FIRST_START + i * HOUR;
      const updated = Math.floor(i / 12) % 2 ? now : now - 30 * DAY;
      return [
        newId("inc", now - i),
        i % 3 === 0 ? "cancelled" : "scheduled",
        `Client ${i}`,
        "Ants",
        i % 2 ? null : bookedAccount,
        i % 2 ? PHONE : null,
        start,
        start + HOUR,
        now - 60 * DAY,
        updated,
      ];
    }),
  );
  // Verify each key once, so that the measured requests are the operations alone.
  for (const tenant of [crm, heavy, empty, booked]) await send(tenant, "/api/v1/contacts?limit=1");
});

describe("rows read by a contacts page", () => {
  async function pages(filter: string) {
    const first = await send(crm, `/api/v1/contacts?limit=${LIMIT}${filter}`);
    let cursor: string = first.json.nextCursor;
    let depth = LIMIT;
    // Walk in big pages to the last full page of the filter.
    const total = filter ? CONTACTS / 2 : CONTACTS;
    while (depth + 200 + LIMIT <= total) {
      const page = await send(crm, `/api/v1/contacts?limit=200${filter}&cursor=${cursor}`);
      cursor = page.json.nextCursor;
      depth += 200;
    }
    const deep = await send(crm, `/api/v1/contacts?limit=${LIMIT}${filter}&cursor=${cursor}`);
    expect(deep.json.data).toHaveLength(LIMIT);
    return { first, deep, depth };
  }

  it.each([
    ["no filter", ""],
    ["accountId", () => `&accountId=${accountId}`],
  ] as const)("%s: page 1 and a page thousands of rows deep both read about `limit` rows", async (_name, filter) => {
    const { first, deep, depth } = await pages(typeof filter === "function" ? filter() : filter);
    expect(depth).toBeGreaterThan(1_000);
    expect(first.trips).toHaveLength(1);
    expect(deep.trips).toHaveLength(1);
    // limit + 1 rows tell whether there is a next page.
    expect(rowsRead(first.trips)).toBeLessThanOrEqual(LIMIT + 1 + SEEK_SLACK);
    expect(rowsRead(deep.trips)).toBeLessThanOrEqual(LIMIT + 1 + SEEK_SLACK);
    // D1 does count them: at least the rows returned.
    expect(rowsRead(deep.trips)).toBeGreaterThanOrEqual(LIMIT);
  });

  it("the budget can fail: a query that counts the org's contacts reads them all", async () => {
    const { meta } = await env.DB.prepare("SELECT count(*) FROM contacts WHERE org_id = ? AND first_name LIKE 'C%'")
      .bind(crm.orgId)
      .all();
    expect(meta.rows_read).toBeGreaterThanOrEqual(CONTACTS);
  });
});

describe("rows read by availability", () => {
  const body = { dateTime: iso(Date.now() + DAY), limit: 10 };

  it("reads the bookings of the scanned window, not the org's year of history", async () => {
    const { json, trips } = await send(heavy, "/api/v1/ai-agent/available-appointments", body);
    expect(json.slots).toHaveLength(10);
    // The window is in the statement's parameters: count the bookings it spans. Its bookings' branch
    // comes first (the live holds' follows it: docs/api.md, "Holding a slot"), its start bound less the
    // longest visit in a parameter of its own: org, start, longest visit, end.
    const [statement] = trips.flatMap((trip) => trip.statements);
    expect(statement!.sql).toMatch(
      /^select .* from "incidents" where \("incidents"\."org_id" = \? and .*"incidents"\."starts_at" > \? - \? and "incidents"\."starts_at" < \? /,
    );
    const [orgId, start, longest, end] = statement!.params as [string, number, number, number];
    expect(orgId).toBe(heavy.orgId);
    const inWindow = await env.DB.prepare(
      "SELECT count(*) AS n FROM incidents WHERE org_id = ? AND starts_at > ? AND starts_at < ?",
    )
      .bind(orgId, start - longest, end)
      .first<number>("n");
    expect(inWindow).toBeGreaterThan(0);
    expect(rowsRead(trips)).toBeLessThanOrEqual(inWindow! + SEEK_SLACK);
    expect(rowsRead(trips)).toBeGreaterThanOrEqual(inWindow!);
    expect(rowsRead(trips)).toBeLessThan(BOOKINGS / 20);
  });

  it("the empty org reads next to nothing, the heavy one only its window more", async () => {
    const emptyRead = rowsRead((await send(empty, "/api/v1/ai-agent/available-appointments", body)).trips);
    expect(emptyRead).toBeLessThanOrEqual(SEEK_SLACK);
    for (const path of ["/api/v1/ai-agent/is-booking-available", "/api/v1/ai-agent/create-incident"]) {
      // 09:00 UTC three days after today: within the opening hours.
      const slot = { dateTime: iso(daysAhead(3, 9)) };
      const request = path.endsWith("create-incident") ? { ...slot, clientName: "Rows", insectName: "Ants" } : slot;
      const { trips } = await send(heavy, path, request);
      expect(rowsRead(trips), path).toBeLessThan(BOOKINGS / 20);
    }
  });
});

describe("rows read by an incidents page", () => {
  async function pages(filter: string) {
    const first = await send(booked, `/api/v1/incidents?limit=${LIMIT}${filter}`);
    let cursor: string = first.json.nextCursor;
    let depth = LIMIT;
    let next = await send(booked, `/api/v1/incidents?limit=200${filter}&cursor=${cursor}`);
    // Walk in big pages while a full page of `limit` remains beyond.
    while (next.json.data.length === 200) {
      const peek = await send(booked, `/api/v1/incidents?limit=${LIMIT}${filter}&cursor=${next.json.nextCursor}`);
      if (peek.json.data.length < LIMIT) break;
      cursor = next.json.nextCursor;
      depth += 200;
      next = await send(booked, `/api/v1/incidents?limit=200${filter}&cursor=${cursor}`);
    }
    const deep = await send(booked, `/api/v1/incidents?limit=${LIMIT}${filter}&cursor=${cursor}`);
    expect(deep.json.data).toHaveLength(LIMIT);
    return { first, deep, depth };
  }

  const window = `&from=${iso(FIRST_START + 500 * HOUR)}&to=${iso(FIRST_START + 2_500 * HOUR)}`;
  it.each([
    ["no filter", ""],
    ["from and to", window],
    ["status", "&status=scheduled"],
    ["accountId", () => `&accountId=${bookedAccount}`],
    ["phone", `&phone=${encodeURIComponent(PHONE)}`],
    ["status within a window", `&status=cancelled${window}`],
  ] as const)("%s: page 1 and a page hundreds of rows deep both read limit + 1 rows", async (_name, filter) => {
    const { first, deep, depth } = await pages(typeof filter === "function" ? filter() : filter);
    expect(depth).toBeGreaterThanOrEqual(400);
    expect(first.trips).toHaveLength(1);
    expect(deep.trips).toHaveLength(1);
    expect(rowsRead(first.trips)).toBeLessThanOrEqual(LIMIT + 1 + SEEK_SLACK);
    expect(rowsRead(deep.trips)).toBeLessThanOrEqual(LIMIT + 1 + SEEK_SLACK);
    expect(rowsRead(deep.trips)).toBeGreaterThanOrEqual(LIMIT);
  });

  it("updatedSince (no index orders by start): a deep page reads what page 1 reads, and only the rows it skips", async () => {
    const { first, deep, depth } = await pages(`&updatedSince=${iso(RECENTLY)}`);
    expect(depth).toBeGreaterThanOrEqual(400);
    // Half the rows match, in runs of 12: a page reads about twice its length.
    expect(rowsRead(first.trips)).toBeLessThanOrEqual(2 * (LIMIT + 1) + 12 + SEEK_SLACK);
    expect(rowsRead(deep.trips)).toBeLessThanOrEqual(1.3 * rowsRead(first.trips));
  });

  it("find-caller reads the caller's rows, not the org's thousands of incidents and contacts", async () => {
    const account = await addAccount(booked, "Rows Caller");
    const contact = await call(booked, "/api/v1/contacts", {
      body: { firstName: "Rows", mobilePhone: "+1 646 555 0123", accountId: account.id },
    });
    expect(contact.status).toBe(200);
    // Room beside the seeded incidents, seen by a key verified after the change.
    await openAlways(booked, { capacity: 5 });
    const fresh = { ...booked, apiKey: (await createKey(db(), booked.orgId))!.apiKey };
    for (const hour of [5, 7]) {
      const booking = await call(fresh, "/api/v1/ai-agent/create-incident", {
        body: { dateTime: iso(daysAhead(3, hour)), clientName: "Rows Caller", insectName: "Ants" },
      });
      expect(booking.status, booking.text).toBe(200);
    }
    const { json, trips } = await send(booked, "/api/v1/ai-agent/find-caller", { phone: "646-555-0123" });
    expect([json.contacts.length, json.accounts.length, json.upcomingIncidents.length]).toEqual([1, 1, 2]);
    expect(trips).toHaveLength(1);
    // Its rows and a few index seeks (its plans' read too), against 2,000 scheduled incidents to come.
    expect(rowsRead(trips)).toBeLessThanOrEqual(24);
  });
});
