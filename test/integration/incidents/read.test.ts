// An incident read by id, and the list of incidents (docs/api.md, "Incidents"):
// its order, keyset paging, limits, every filter and their combinations,
// cursors bound to the org and the filters, and strict validation of the query.
import { beforeAll, describe, expect, it } from "vitest";
import { incidents } from "../../../drizzle/schema";
import { newId } from "../../../src/lib/ids";
import { problem } from "../../../src/openapi/problems";
import { incident, incidentPage } from "../../../src/schemas/incidents";
import { expectProblem } from "../../support/problem";
import { strict } from "../../support/strict";
import { addAccount, db, openTenant, type Tenant } from "../../support/tenants";
import { DAY, daysAhead, HOUR, hoursAhead, iso, MINUTE } from "../../support/time";
import {
  book,
  cancel,
  getIncident,
  type Incident,
  inListOrder,
  listIncidents,
  pageThrough,
  pause,
  utcAppointment,
} from "./helpers";

const UNKNOWN_ID = "inc_00000000000000000000000000";

/** `t` written with a +02:00 offset instead of Z: the same instant. */
const plusTwo = (t: number) => `${iso(t + 2 * HOUR).slice(0, 19)}+02:00`;

const q = encodeURIComponent;

/** For the query-validation tests: an org with one incident. */
let shared: Tenant;
beforeAll(async () => {
  shared = await openTenant("Shared Read Org");
  await book(shared, daysAhead(2, 15));
});

describe("GET /api/v1/incidents/{id}", () => {
  it("returns the whole incident: normalised phone, notes, linked account, appointment without remaining", async () => {
    const tenant = await openTenant("Read Org");
    const account = await addAccount(tenant, "Jane Homeowner");
    const at = daysAhead(2, 15);
    const created = await book(tenant, at, {
      clientName: "  jane HOMEOWNER ",
      insectName: "termites",
      phone: "(917) 555-0134",
      notes: "Side gate code 4412",
    });
    const res = await getIncident(tenant, created.id);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(strict(incident()).safeParse(res.body).success).toBe(true);
    expect(res.body).toEqual({
      id: created.id,
      status: "scheduled",
      dateTime: iso(at),
      clientName: "jane HOMEOWNER",
      insectName: "termites",
      accountId: account.id,
      phone: "+19175550134",
      notes: "Side gate code 4412",
      serviceId: null,
      technicianId: null,
      postalCode: null,
      appointment: utcAppointment(at),
      arrivalWindow: null,
      createdAt: created.createdAt,
      updatedAt: created.createdAt,
      cancelledAt: null,
      cancelReason: null,
      closedAt: null,
      outcomeNote: null,
      planId: null,
    });
    expect(res.body.id).toMatch(/^inc_/);
    expect(res.body.appointment).not.toHaveProperty("remaining");
    // create-incident answered the same object, its appointment with `remaining` besides.
    const { remaining, ...appointment } = created.appointment;
    expect(remaining).toBe(0);
    expect(res.body).toEqual({ ...created, appointment });
  });

  it("returns absent optional fields as null, and the appointment in the org's zone", async () => {
    const tenant = await openTenant("Kolkata Org", { timeZone: "Asia/Kolkata" });
    // Open around the clock in +05:30: hourly slots start at hh:30 UTC.
    const at = daysAhead(2, 15) + 30 * MINUTE;
    const created = await book(tenant, at, { clientName: "Nobody Known" });
    const res = await getIncident(tenant, created.id);
    expect(res.status, res.text).toBe(200);
    expect(strict(incident()).safeParse(res.body).success).toBe(true);
    expect(res.body).toMatchObject({
      accountId: null,
      phone: null,
      notes: null,
      serviceId: null,
      technicianId: null,
      postalCode: null,
      arrivalWindow: null,
      cancelledAt: null,
      cancelReason: null,
    });
    expect(res.body.dateTime).toBe(res.body.appointment.start);
    expect(res.body.appointment).toEqual({
      start: iso(at),
      end: iso(at + HOUR),
      localStart: `${iso(at + 5.5 * HOUR).slice(0, 19)}+05:30`,
      localEnd: `${iso(at + 6.5 * HOUR).slice(0, 19)}+05:30`,
    });
  });

  it("answers 404 incident_not_found for an unknown, a malformed and another org's id", async () => {
    const owner = await openTenant("Owner");
    const other = await openTenant("Other");
    const theirs = await book(owner, daysAhead(2, 15));
    for (const id of [UNKNOWN_ID, theirs.id.toUpperCase(), "nope", "inc_", "inc_!!", "x".repeat(300), theirs.id]) {
      const res = await getIncident(other, id);
      const body = expectProblem(res, 404, "incident_not_found");
      expect(strict(problem()).safeParse(body).success).toBe(true);
    }
    // The owner still reads it.
    expect((await getIncident(owner, theirs.id)).status).toBe(200);
  });
});

describe("GET /api/v1/incidents: order and paging", () => {
  it("lists by appointment start, then id, every status, each as GET shows it", async () => {
    const tenant = await openTenant("Order Org", { capacity: 3 });
    const base = hoursAhead(30);
    const created: Incident[] = [];
    for (const offset of [5, 2, 2, 9, 2, 5]) created.push(await book(tenant, base + offset * HOUR));
    await cancel(tenant, created[1]!.id);
    const res = await listIncidents(tenant);
    expect(res.status, res.text).toBe(200);
    expect(strict(incidentPage()).safeParse(res.body).success).toBe(true);
    expect(res.body.hasMore).toBe(false);
    expect(res.body.nextCursor).toBeNull();
    const ids = res.body.data.map((i: Incident) => i.id);
    expect(ids).toEqual(inListOrder(created));
    // Same start: by id. The three at +2 h come before the two at +5 h, then +9 h.
    expect(res.body.data.map((i: Incident) => Date.parse(i.dateTime) - base)).toEqual(
      [2, 2, 2, 5, 5, 9].map((h) => h * HOUR),
    );
    for (const row of res.body.data) {
      expect(row).toEqual((await getIncident(tenant, row.id)).body);
    }
    expect(res.body.data.find((i: Incident) => i.id === created[1]!.id).status).toBe("cancelled");
  });

  it("sees each incident exactly once across pages while incidents are added and the limit changes", async () => {
    const tenant = await openTenant("Paging Org", { capacity: 2 });
    const base = hoursAhead(40);
    const initial: Incident[] = [];
    for (let i = 0; i < 9; i++) initial.push(await book(tenant, base + Math.floor(i / 2) * HOUR));
    const laterAdded: Incident[] = [];
    const earlierAdded: Incident[] = [];
    const seen = await pageThrough(tenant, "", [2, 3, 1, 4], async (page) => {
      // Behind the reader (an offset would shift and repeat rows) and ahead of it.
      earlierAdded.push(await book(tenant, base - (page + 1) * HOUR));
      laterAdded.push(await book(tenant, base + (20 + page) * HOUR));
    });
    const ids = seen.map((i) => i.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(inListOrder([...initial, ...laterAdded]));
    for (const early of earlierAdded) expect(ids).not.toContain(early.id);
    expect(laterAdded.length).toBeGreaterThan(2);
    // Read again from the start: everything, once, in order.
    const all = await pageThrough(tenant, "", [5]);
    expect(all.map((i) => i.id)).toEqual(inListOrder([...initial, ...laterAdded, ...earlierAdded]));
  });

  it("pages 50 by default, takes limits 1 to 200, and ends with hasMore false and a null cursor", async () => {
    const tenant = await openTenant("Limit Org");
    const now = Date.now();
    const start = hoursAhead(30);
    const rows = Array.from({ length: 51 }, (_, i) => ({
      id: newId("inc", now),
      orgId: tenant.orgId,
      status: "scheduled" as const,
      clientName: `Client ${i}`,
      insectName: "ants",
      startsAt: start + i * HOUR,
      endsAt: start + (i + 1) * HOUR,
      createdAt: now,
      updatedAt: now,
    }));
    // D1 binds at most 100 parameters a statement: 8 rows (88, the column defaults included) at a time, in one batch.
    const [first8, ...more] = Array.from({ length: 7 }, (_, i) =>
      db()
        .insert(incidents)
        .values(rows.slice(i * 8, i * 8 + 8)),
    );
    await db().batch([first8!, ...more]);
    const expected = rows.map((r) => r.id);

    const first = await listIncidents(tenant);
    expect(first.status, first.text).toBe(200);
    expect(first.body.data.map((i: Incident) => i.id)).toEqual(expected.slice(0, 50));
    expect(first.body.hasMore).toBe(true);
    expect(typeof first.body.nextCursor).toBe("string");
    const rest = await listIncidents(tenant, `cursor=${first.body.nextCursor}`);
    expect(rest.body).toMatchObject({ hasMore: false, nextCursor: null });
    expect(rest.body.data.map((i: Incident) => i.id)).toEqual(expected.slice(50));

    const one = await listIncidents(tenant, "limit=1");
    expect(one.body.data.map((i: Incident) => i.id)).toEqual([expected[0]]);
    expect(one.body.hasMore).toBe(true);
    const max = await listIncidents(tenant, "limit=200");
    expect(max.body.data.map((i: Incident) => i.id)).toEqual(expected);
    expect(max.body).toMatchObject({ hasMore: false, nextCursor: null });
    // Exactly `limit` rows left: the last page, not a page announcing an empty one.
    const exact = await listIncidents(tenant, "limit=51");
    expect(exact.body.data).toHaveLength(51);
    expect(exact.body).toMatchObject({ hasMore: false, nextCursor: null });
  });

  it.each([
    ["limit=0", "out_of_range"],
    ["limit=201", "out_of_range"],
    ["limit=-1", "invalid_format"],
    ["limit=ten", "invalid_format"],
    ["limit=1.5", "invalid_format"],
  ])("refuses ?%s with 422 naming limit", async (query, code) => {
    const body = expectProblem(await listIncidents(shared, query), 422, "validation_failed");
    expect(body.errors).toEqual([{ path: "limit", code, message: expect.any(String) }]);
  });

  it("never lists another org's incidents", async () => {
    const a = await openTenant("A");
    const b = await openTenant("B");
    await book(a, daysAhead(2, 15));
    const res = await listIncidents(b);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [], hasMore: false, nextCursor: null });
  });
});

describe("GET /api/v1/incidents: filters", () => {
  async function fiveIncidents() {
    const tenant = await openTenant("Filter Org", { capacity: 2 });
    const acme = await addAccount(tenant, "Acme");
    const base = hoursAhead(30);
    const a = await book(tenant, base, { clientName: "Acme", phone: "(917) 555-0134" });
    const b = await book(tenant, base + HOUR, { clientName: "Bob", phone: "+1 917 555 0134" });
    const c = await book(tenant, base + 2 * HOUR, { clientName: "ACME" });
    const d = await book(tenant, base + 3 * HOUR, { clientName: "Dan", phone: "+12125550100" });
    const e = await book(tenant, base + 4 * HOUR, { clientName: "acme", phone: "917.555.0134" });
    await pause();
    const cancelled = await cancel(tenant, e.id);
    expect(cancelled.status, cancelled.text).toBe(200);
    return { tenant, acme, base, a, b, c, d, e: cancelled.body as Incident };
  }

  it("filters by from (≥), to (<), status, accountId, phone in any spelling and updatedSince (≥), alone and combined", async () => {
    const { tenant, acme, base, a, b, c, d, e } = await fiveIncidents();
    expect(a.accountId).toBe(acme.id);
    expect(e.status).toBe("cancelled");
    const ids = async (query: string) => {
      const res = await listIncidents(tenant, query);
      expect(res.status, res.text).toBe(200);
      expect(strict(incidentPage()).safeParse(res.body).success).toBe(true);
      return res.body.data.map((i: Incident) => i.id);
    };
    const cases: [string, Incident[]][] = [
      ["", [a, b, c, d, e]],
      [`from=${q(b.dateTime)}`, [b, c, d, e]],
      [`from=${q(plusTwo(base + HOUR))}`, [b, c, d, e]],
      [`from=${q(iso(base + HOUR + 1))}`, [c, d, e]],
      [`to=${q(d.dateTime)}`, [a, b, c]],
      [`to=${q(iso(base + 3 * HOUR + 1))}`, [a, b, c, d]],
      [`from=${q(b.dateTime)}&to=${q(plusTwo(base + 3 * HOUR))}`, [b, c]],
      [`from=${q(d.dateTime)}&to=${q(b.dateTime)}`, []],
      ["status=scheduled", [a, b, c, d]],
      ["status=cancelled", [e]],
      [`accountId=${acme.id}`, [a, c, e]],
      [`accountId=acct_00000000000000000000000000`, []],
      [`phone=${q("(917) 555-0134")}`, [a, b, e]],
      [`phone=${q("+19175550134")}`, [a, b, e]],
      [`phone=${q("917-555-0134")}`, [a, b, e]],
      [`phone=${q(" +1 (917) 555 0134 ")}`, [a, b, e]],
      [`phone=${q("2125550100")}`, [d]],
      [`phone=${q("+12125550101")}`, []],
      [`updatedSince=${q(e.updatedAt)}`, [e]],
      [`updatedSince=${q(iso(Date.parse(e.updatedAt) + 1))}`, []],
      [`updatedSince=${q(a.createdAt)}`, [a, b, c, d, e]],
      [`accountId=${acme.id}&phone=${q("917 555 0134")}`, [a, e]],
      [`accountId=${acme.id}&phone=${q("917 555 0134")}&status=scheduled`, [a]],
      [`phone=${q("+19175550134")}&status=cancelled`, [e]],
      [`from=${q(b.dateTime)}&to=${q(d.dateTime)}&phone=${q("9175550134")}`, [b]],
      [`accountId=${acme.id}&from=${q(c.dateTime)}&updatedSince=${q(e.updatedAt)}`, [e]],
      [`status=scheduled&updatedSince=${q(e.updatedAt)}`, []],
    ];
    for (const [query, expected] of cases) {
      expect(await ids(query), query).toEqual(expected.map((i) => i.id));
    }
  });

  it("keeps the filters across pages: a filtered list read one by one is the filtered list", async () => {
    const { tenant, acme, a, b, c, e } = await fiveIncidents();
    const byPhone = await pageThrough(tenant, `phone=${q("(917) 555-0134")}`, [1]);
    expect(byPhone.map((i) => i.id)).toEqual([a.id, b.id, e.id]);
    const byAccount = await pageThrough(tenant, `accountId=${acme.id}&status=scheduled`, [1]);
    expect(byAccount.map((i) => i.id)).toEqual([a.id, c.id]);
  });

  it("never matches another org's account or phone", async () => {
    const { acme } = await fiveIncidents();
    const other = await openTenant("Other Filter Org");
    await book(other, daysAhead(2, 15), { phone: "+19175550134" });
    const res = await listIncidents(other, `accountId=${acme.id}`);
    expect(res.body).toEqual({ data: [], hasMore: false, nextCursor: null });
    const mine = await listIncidents(other, `phone=${q("+19175550134")}`);
    expect(mine.body.data).toHaveLength(1);
  });
});

describe("GET /api/v1/incidents: cursors and validation", () => {
  async function threeIncidents(name: string) {
    const tenant = await openTenant(name);
    const base = hoursAhead(30);
    const booked = [
      await book(tenant, base, { phone: "+19175550134" }),
      await book(tenant, base + HOUR, { phone: "+19175550134" }),
      await book(tenant, base + 2 * HOUR, { phone: "+19175550134" }),
    ];
    return { tenant, booked };
  }

  it("refuses, as 422 invalid_cursor, a cursor of another org or of other filters", async () => {
    const { tenant, booked } = await threeIncidents("Cursor Org");
    const { tenant: other } = await threeIncidents("Cursor Other Org");
    const first = await listIncidents(tenant, "limit=1&status=scheduled");
    const cursor = first.body.nextCursor as string;
    expect(typeof cursor).toBe("string");
    for (const [who, query] of [
      [other, "limit=1&status=scheduled"],
      [tenant, "limit=1"],
      [tenant, "limit=1&status=cancelled"],
      [tenant, "limit=1&status=scheduled&phone=%2B19175550134"],
      [tenant, `limit=1&status=scheduled&from=${q(booked[0]!.dateTime)}`],
    ] as const) {
      const res = await listIncidents(who, `${query}&cursor=${cursor}`);
      const body = expectProblem(res, 422, "validation_failed");
      expect(body.errors).toEqual([{ path: "cursor", code: "invalid_cursor", message: expect.any(String) }]);
    }
    // The same org and filters, with another limit: the next page.
    const next = await listIncidents(tenant, `limit=5&status=scheduled&cursor=${cursor}`);
    expect(next.status, next.text).toBe(200);
    expect(next.body.data.map((i: Incident) => i.id)).toEqual([booked[1]!.id, booked[2]!.id]);
  });

  it("takes a cursor back with the same filters written another way (phone spelling, date-time offset)", async () => {
    const { tenant, booked } = await threeIncidents("Cursor Spelling Org");
    const from = Date.parse(booked[0]!.dateTime);
    const first = await listIncidents(tenant, `limit=1&phone=${q("(917) 555-0134")}&from=${q(iso(from))}`);
    expect(first.status, first.text).toBe(200);
    const next = await listIncidents(
      tenant,
      `limit=1&phone=${q("+19175550134")}&from=${q(plusTwo(from))}&cursor=${first.body.nextCursor}`,
    );
    expect(next.status, next.text).toBe(200);
    expect(next.body.data.map((i: Incident) => i.id)).toEqual([booked[1]!.id]);
  });

  it.each([
    ["cursor=%25%25%25"],
    ["cursor=abc"],
    // Well-formed, but its fingerprint is no org's and no filters'.
    [`cursor=${btoa(JSON.stringify({ t: 1, i: "inc_00000000000000000000000000", s: "0" })).replace(/=+$/, "")}`],
  ])("refuses a malformed ?%s as 422 invalid_cursor", async (query) => {
    const body = expectProblem(await listIncidents(shared, query), 422, "validation_failed");
    expect(body.errors).toEqual([{ path: "cursor", code: "invalid_cursor", message: expect.any(String) }]);
  });

  it.each([
    ["foo=1", "foo", "unknown_field"],
    ["Status=cancelled", "Status", "unknown_field"],
    ["account_id=acct_x", "account_id", "unknown_field"],
    ["status=done", "status", "invalid_value"],
    ["status=SCHEDULED", "status", "invalid_value"],
    ["phone=abc", "phone", "invalid_phone"],
    ["phone=12", "phone", "invalid_phone"],
    ["phone=%2B1917555013", "phone", "invalid_phone"],
    ["from=2026-11-23T14:00:00", "from", "invalid_format"],
    ["to=tomorrow", "to", "invalid_format"],
    ["updatedSince=2026-02-30T10:00:00Z", "updatedSince", "invalid_format"],
  ])("refuses ?%s with 422 naming %s (%s)", async (query, path, code) => {
    const body = expectProblem(await listIncidents(shared, query), 422, "validation_failed");
    expect(body.errors).toEqual([{ path, code, message: expect.any(String) }]);
  });

  it("hints at the known name of a misspelt query parameter", async () => {
    const body = expectProblem(
      await listIncidents(shared, "updated_since=2026-11-23T14:00:00Z"),
      422,
      "validation_failed",
    );
    expect(body.errors).toEqual([
      { path: "updated_since", code: "unknown_field", message: expect.stringContaining("updatedSince") },
    ]);
  });

  it("lists every failing query field at once, the phone among them", async () => {
    const body = expectProblem(await listIncidents(shared, "status=done&phone=abc"), 422, "validation_failed");
    expect(body.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: "status", code: "invalid_value" }),
        expect.objectContaining({ path: "phone", code: "invalid_phone" }),
      ]),
    );
  });

  it("treats an empty accountId as absent or refuses it, but never filters on an empty id", async () => {
    const all = await listIncidents(shared);
    expect(all.body.data).toHaveLength(1);
    for (const query of ["accountId=", "accountId=%20%20"]) {
      const res = await listIncidents(shared, query);
      if (res.status === 200) expect(res.body, query).toEqual(all.body);
      else
        expect(expectProblem(res, 422, "validation_failed").errors, query).toEqual([
          expect.objectContaining({ path: "accountId" }),
        ]);
    }
  });

  it("reads a list of a day's appointments", async () => {
    // A whole UTC day two days ahead, by from and to.
    const tenant = await openTenant("Day Org");
    const day = daysAhead(2, 0);
    const inside = [await book(tenant, day), await book(tenant, day + 23 * HOUR)];
    await book(tenant, day + DAY);
    await book(tenant, day - HOUR);
    const res = await listIncidents(tenant, `from=${q(iso(day))}&to=${q(iso(day + DAY))}`);
    expect(res.body.data.map((i: Incident) => i.id)).toEqual(inside.map((i) => i.id));
  });
});
