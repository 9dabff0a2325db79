// The edges of input a hostile integrator probes (docs/api.md, "Conventions"
// and "Validation"): one test per finding, each failing without its fix.
import { describe, expect, it } from "vitest";
import { bookIncident } from "../../support/incidents";
import { mcpCall } from "../../support/mcp";
import { expectProblem } from "../../support/problem";
import { call } from "../../support/request";
import { addAccount, newTenant, openTenant } from "../../support/tenants";

const ISO_FORM = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe("date-times stay within 0001–9999 in UTC", () => {
  it.each([
    "9999-12-31T23:00:00-14:00", // year 10000 in UTC
    "9999-12-31T23:59:59.999-00:01",
    "0001-01-01T00:00:00+00:01", // year 0000 in UTC
  ])("refuses %s with 422 invalid_format, and stores nothing", async (instant) => {
    const tenant = await newTenant();
    const lead = await call(tenant, "/api/v1/leads", { body: { estimatedCloseDate: instant } });
    expectProblem(lead, 422, "validation_failed");
    expect(lead.body.errors).toEqual([
      { path: "estimatedCloseDate", code: "invalid_format", message: expect.any(String) },
    ]);
    const check = await call(tenant, "/api/v1/ai-agent/is-booking-available", { body: { dateTime: instant } });
    expect(check.body.errors).toEqual([{ path: "dateTime", code: "invalid_format", message: expect.any(String) }]);
    expect((await call(tenant, "/api/v1/events")).body.data).toEqual([]);
  });

  it.each([
    ["9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"],
    ["9999-12-31T09:59:59.999-14:00", "9999-12-31T23:59:59.999Z"],
    ["0001-01-01T00:00:00Z", "0001-01-01T00:00:00.000Z"],
    ["0001-01-01", "0001-01-01T00:00:00.000Z"],
  ])("takes %s, the edge itself, and writes it back as %s in the lead and its event", async (instant, written) => {
    const tenant = await newTenant();
    const lead = await call(tenant, "/api/v1/leads", { body: { estimatedCloseDate: instant } });
    expect(lead.body.estimatedCloseDate).toBe(written);
    const [event] = (await call(tenant, "/api/v1/events")).body.data;
    expect(event.data.estimatedCloseDate).toBe(written);
    expect(event.data.estimatedCloseDate).toMatch(ISO_FORM);
  });

  it("offers no slot whose local end would fall after 9999-12-31 (its local form could not be written)", async () => {
    const tenant = await openTenant("Edge", { timeZone: "Pacific/Kiritimati" });
    const check = (dateTime: string) => call(tenant, "/api/v1/ai-agent/is-booking-available", { body: { dateTime } });
    // 23:00–24:00 local (+14:00) on 9999-12-31 would end at 10000-01-01T00:00:00+14:00.
    const last = await check("9999-12-31T09:00:00Z");
    expect(last.status).toBe(200);
    expect(last.body).toMatchObject({ available: false, reason: "beyond_horizon", slot: null });
    const before = await check("9999-12-31T08:00:00Z");
    expect(before.body.slot).toMatchObject({
      end: "9999-12-31T09:00:00.000Z",
      localEnd: "9999-12-31T23:00:00+14:00",
    });
    // In UTC the same hour ends within 9999: it is a slot there.
    const utc = await openTenant("Edge UTC");
    const lastUtc = await call(utc, "/api/v1/ai-agent/is-booking-available", {
      body: { dateTime: "9999-12-31T22:00:00Z" },
    });
    expect(lastUtc.body.slot).toMatchObject({ end: "9999-12-31T23:00:00.000Z", localEnd: "9999-12-31T23:00:00+00:00" });
    const pastUtc = await call(utc, "/api/v1/ai-agent/is-booking-available", {
      body: { dateTime: "9999-12-31T23:00:00Z" },
    });
    expect(pastUtc.body.slot).toBeNull();
  });
});

describe("lengths are UTF-16 code units", () => {
  it("refuses 101 emoji (202 units) in a 200-character field, and takes 100 (200 units)", async () => {
    const tenant = await newTenant();
    const over = await call(tenant, "/api/v1/leads", { body: { firstName: "😀".repeat(101) } });
    expectProblem(over, 422, "validation_failed");
    expect(over.body.errors).toEqual([{ path: "firstName", code: "too_long", message: expect.any(String) }]);
    const at = await call(tenant, "/api/v1/leads", { body: { firstName: "😀".repeat(100) } });
    expect(at.status).toBe(200);
    expect(at.body.firstName).toBe("😀".repeat(100));
  });
});

describe("query strings are strict on every operation", () => {
  it("refuses an unknown parameter on a GET by id, a POST and an action with 422 unknown_field", async () => {
    const tenant = await openTenant();
    const account = await addAccount(tenant, "Acme");
    const incident = await bookIncident(tenant);
    const cases: [string, { body?: unknown }, string][] = [
      [`/api/v1/accounts/${account.id}?foo=1`, {}, "foo"],
      [`/api/v1/incidents/${incident.id}?foo=1`, {}, "foo"],
      ["/api/v1/leads?foo=1", { body: { firstName: "Ann" } }, "foo"],
      ["/api/v1/ai-agent/find-caller?phone=x", { body: { phone: "+12125550100" } }, "phone"],
      [`/api/v1/incidents/${incident.id}/cancel?force=true`, { body: {} }, "force"],
    ];
    for (const [path, options, name] of cases) {
      const res = await call(tenant, path, options);
      expectProblem(res, 422, "validation_failed");
      expect(res.body.errors).toEqual([{ path: name, code: "unknown_field", message: "unknown field" }]);
    }
    // Nothing was written by the refused writes.
    expect((await call(tenant, `/api/v1/incidents/${incident.id}`)).body.status).toBe("scheduled");
    expect((await call(tenant, "/api/v1/events?type=lead.created")).body.data).toEqual([]);
  });

  it("lists the body's and the query's failing fields in one 422", async () => {
    const tenant = await newTenant();
    const res = await call(tenant, "/api/v1/leads?force=1", { body: { firstName: 5 } });
    expectProblem(res, 422, "validation_failed");
    expect(res.body.errors).toEqual([
      { path: "firstName", code: "invalid_type", message: "must be a string" },
      { path: "force", code: "unknown_field", message: "unknown field" },
    ]);
  });

  it.each([
    ["/api/v1/contacts", ["phone", "email", "accountId", "updatedSince", "limit", "cursor"]],
    ["/api/v1/incidents", ["phone", "from", "to", "accountId", "status", "updatedSince"]],
    ["/api/v1/events", ["type", "cursor"]],
  ])("%s: an empty (or blank) value is 422 empty_value, never the whole list", async (path, names) => {
    const tenant = await newTenant();
    for (const name of names) {
      for (const value of ["", "%20"]) {
        const res = await call(tenant, `${path}?${name}=${value}`);
        expectProblem(res, 422, "validation_failed");
        expect(res.body.errors).toEqual([
          {
            path: name,
            code: expect.stringMatching(/^(empty_value|invalid_format|invalid_value)$/),
            message: expect.any(String),
          },
        ]);
      }
    }
    const res = await call(tenant, `${path}?phone=`);
    if (names.includes("phone"))
      expect(res.body.errors).toEqual([{ path: "phone", code: "empty_value", message: expect.any(String) }]);
  });
});

describe("cursors are authenticated whole", () => {
  const b64url = (text: string) => btoa(text).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
  const unb64url = (text: string) => atob(text.replaceAll("-", "+").replaceAll("_", "/"));

  it.each([
    ["t", (p: { t: number; i: string }) => ({ ...p, t: p.t - 1 })],
    // Another last character: "0" would leave an id already ending in "0" (1 in 32) unchanged.
    ["i", (p: { t: number; i: string }) => ({ ...p, i: `${p.i.slice(0, -1)}${p.i.endsWith("0") ? "1" : "0"}` })],
  ])("a cursor whose %s was changed and re-encoded is 422 invalid_cursor", async (_, change) => {
    const tenant = await newTenant();
    for (let i = 0; i < 3; i++) await call(tenant, "/api/v1/contacts", { body: { firstName: `C${i}` } });
    for (const path of ["/api/v1/contacts?limit=1", "/api/v1/events?limit=1"]) {
      const { nextCursor } = (await call(tenant, path)).body;
      expect((await call(tenant, `${path}&cursor=${nextCursor}`)).status).toBe(200);
      const [payload, mac] = nextCursor.split(".");
      const forged = `${b64url(JSON.stringify(change(JSON.parse(unb64url(payload)))))}.${mac}`;
      const res = await call(tenant, `${path}&cursor=${forged}`);
      expectProblem(res, 422, "validation_failed");
      expect(res.body.errors).toEqual([{ path: "cursor", code: "invalid_cursor", message: expect.any(String) }]);
    }
  });
});

describe("MCP arguments of the wrong shape", () => {
  it.each([
    ["an array", [1, 2]],
    ["a string", "phone=+12125550100"],
    ["a number", 7],
  ])("arguments that are %s: JSON-RPC -32602 invalid params, said in a sentence", async (_, args) => {
    const tenant = await newTenant();
    const res = await mcpCall(tenant, "find_caller", args);
    expect(res.status).toBe(200);
    expect(res.body.error).toEqual({
      code: -32602,
      message:
        "MCP error -32602: Invalid tools/call params: arguments must be an object of the tool's arguments by name",
    });
  });

  it("null arguments are absent arguments: the tool answers its own validation problem", async () => {
    const tenant = await newTenant();
    const res = await mcpCall(tenant, "find_caller", null);
    expect(res.body.result.isError).toBe(true);
    expect(JSON.parse(res.body.result.content[0].text).errors).toEqual([
      { path: "phone", code: "required", message: "is required" },
    ]);
  });
});
