// A request served against a database that lacks a table or column the code
// expects (a deploy's window before its migrations, or a migration never
// applied) is a retryable 503, never a 500: nothing internal in the answer,
// the failure in the log line for the operator.
import { applyD1Migrations, env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { wrapD1 } from "../../support/d1";
import { expectProblem } from "../../support/problem";
import { call } from "../../support/request";
import { newTenant } from "../../support/tenants";

const unmigrated = { DB: env.UNMIGRATED_DB };

afterEach(() => vi.restoreAllMocks());

describe("a database whose migrations are not applied", () => {
  it.each([
    ["create a lead", "/api/v1/leads", { body: {} }],
    ["list contacts", "/api/v1/contacts", {}],
    ["find appointments", "/api/v1/ai-agent/available-appointments", { body: { dateTime: "2026-12-01T10:00:00Z" } }],
  ])("%s: 503 unavailable with Retry-After, nothing internal, the cause logged", async (_name, path, options) => {
    const logged = vi.spyOn(console, "log").mockImplementation(() => {});
    const res = await call(await newTenant(), path, { ...options, bindings: unmigrated });
    const body = expectProblem(res, 503, "unavailable");
    expect(res.headers.get("Retry-After")).toBe("5");
    expect(res.text).not.toMatch(/no such|SQLITE|D1_ERROR|api_keys|select|insert/i);
    expect(body.detail).toBe("The service is being updated; retry shortly");
    const lines = logged.mock.calls.map(([line]) => JSON.parse(String(line)));
    expect(lines.at(-1)).toMatchObject({ status: 503, error: expect.stringMatching(/no such table/) });
  });

  it("a key the isolate already verified meets the missing table in the operation: 503 too", async () => {
    const tenant = await newTenant();
    expect((await call(tenant, "/api/v1/contacts")).status).toBe(200);
    const res = await call(tenant, "/api/v1/leads", { body: {}, bindings: unmigrated });
    expectProblem(res, 503, "unavailable");
  });

  it("a database behind the code (the window of a deploy that ran the code first): 503, and 200 once migrated", async () => {
    // Every migration but the newest; the key is verified (and cached) on the migrated database,
    // so the request reaches the operation, whose batch needs the newest migration's table.
    // Up to 0005: the events table of 0006 is what every write's batch needs.
    const events = env.TEST_MIGRATIONS.findIndex((m) => m.name.startsWith("0006"));
    await applyD1Migrations(env.BEHIND_DB, env.TEST_MIGRATIONS.slice(0, events));
    const tenant = await newTenant();
    expect((await call(tenant, "/api/v1/contacts")).status).toBe(200);
    // The org exists there too (with the columns orgs had before 0007).
    const { cursor_secret: _, ...org } = (await env.DB.prepare("SELECT * FROM orgs WHERE id = ?")
      .bind(tenant.orgId)
      .first()) as Record<string, unknown>;
    const columns = Object.keys(org);
    await env.BEHIND_DB.prepare(
      `INSERT INTO orgs (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
    )
      .bind(...Object.values(org))
      .run();
    const behind = { DB: env.BEHIND_DB };
    const res = await call(tenant, "/api/v1/leads", { body: {}, bindings: behind });
    expectProblem(res, 503, "unavailable");
    expect(res.headers.get("Retry-After")).toBe("5");
    expect((await call(tenant, "/api/v1/events", { bindings: behind })).status).toBe(503);
    expect((await call(tenant, "/api/v1/leads", { body: {} })).status).toBe(200);
  });

  it("a write to a column a migration has not added yet (SQLite: 'has no column named'): 503 too", async () => {
    const tenant = await newTenant();
    expect((await call(tenant, "/api/v1/contacts")).status).toBe(200);
    const logged = vi.spyOn(console, "log").mockImplementation(() => {});
    // SQLite's own message for an INSERT naming a missing column.
    const missing = "D1_ERROR: table leads has no column named mobile_e164: SQLITE_ERROR";
    const behind = wrapD1(env.DB, {
      fail: (trip) => trip.sql.some((sql) => /^insert into "leads"/i.test(sql)),
      error: () => new Error(missing, { cause: new Error(missing.replace(/^D1_ERROR: /, "")) }),
    });
    const res = await call(tenant, "/api/v1/leads", { body: {}, bindings: { DB: behind.db } });
    expectProblem(res, 503, "unavailable");
    expect(res.headers.get("Retry-After")).toBe("5");
    expect(res.text).not.toMatch(/mobile_e164|SQLITE/);
    expect(logged.mock.calls.map(([line]) => JSON.parse(String(line))).at(-1)).toMatchObject({
      status: 503,
      error: expect.stringMatching(/has no column named/),
    });
  });

  it("/health does not need the database", async () => {
    expect((await call(null, "/health", { bindings: unmigrated })).status).toBe(200);
  });
});
