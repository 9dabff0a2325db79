// What src/db/drizzle-internals.ts relies on in drizzle-orm beyond its types,
// checked against the installed version: a drizzle upgrade that moves any of
// it fails here, by name, before a prepared statement misbehaves anywhere.
import { env } from "cloudflare:test";
import { eq, SQL, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { leads } from "../../../drizzle/schema";
import { createDb, param, prepared } from "../../../src/db/client";
import { type Bindable, TEMPLATES, templateOf } from "../../../src/db/drizzle-internals";
import { newTenant } from "../../support/tenants";

const select = () => TEMPLATES.select({ id: leads.id, n: sql<number>`1`.mapWith(Number) }).from(leads);

describe("drizzle's internals, as drizzle-internals.ts uses them", () => {
  it("a prepared D1 query holds its SQL and parameters (placeholders kept), D1's statement, its fields and values()", () => {
    const query = select()
      .where(eq(leads.orgId, param("orgId")))
      .prepare() as unknown as Bindable;
    expect(query.query.sql).toMatch(/^select .* from "leads" where "leads"\."org_id" = \?$/);
    expect(query.query.params).toEqual([param("orgId")]);
    expect(query).toHaveProperty("stmt");
    expect(typeof query.values).toBe("function");
    expect(query.fields?.map(({ path }) => path)).toEqual([["id"], ["n"]]);
    // A batch asks each item for its prepared query through _prepare.
    expect(typeof (select() as unknown as { _prepare: unknown })._prepare).toBe("function");
  });

  it("a selected column and an SQL expression each carry the decoder drizzle's row mapping uses", () => {
    const { fields } = select().prepare() as unknown as Bindable;
    const [column, expression] = fields!.map(({ field }) => field);
    expect(typeof (column as { mapFromDriverValue: unknown }).mapFromDriverValue).toBe("function");
    expect(expression).toBeInstanceOf(SQL);
    expect(
      (expression as unknown as { decoder: { mapFromDriverValue(v: unknown): unknown } }).decoder.mapFromDriverValue(
        "7",
      ),
    ).toBe(7);
  });

  it("a template built once runs on a request's session with its values, alone and in a batch, rows mapped", async () => {
    const t = await newTenant();
    const db = createDb(env.DB);
    await db.insert(leads).values({ id: "lead_internals", orgId: t.orgId, createdAt: 1 });
    const byOrg = prepared((templates) =>
      templates
        .select({ id: leads.id, n: sql<number>`2`.mapWith(Number).as("n") })
        .from(leads)
        .where(eq(leads.orgId, param("orgId"))),
    );
    expect(await byOrg(db, { orgId: t.orgId }).all()).toEqual([{ id: "lead_internals", n: 2 }]);
    const [first, second] = await db.batch([byOrg(db, { orgId: t.orgId }), byOrg(db, { orgId: "org_none" })]);
    expect([first, second]).toEqual([[{ id: "lead_internals", n: 2 }], []]);
    expect(templateOf((templates) => templates.select().from(leads))).toBeDefined();
  });
});
