import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../../support/request";
import { newTenant, type Tenant } from "../../support/tenants";

let t: Tenant;
beforeAll(async () => {
  t = await newTenant();
});

const SPEC_FIELDS = [
  "firstName",
  "lastName",
  "title",
  "companyName",
  "email",
  "mobilePhone",
  "businessPhone",
  "leadSource",
  "accountType",
  "rating",
  "estimatedValue",
  "estimatedCloseDate",
  "buildingLocation",
  "street1",
  "street2",
  "city",
  "postalCode",
  "state",
  "country",
];

describe("POST /api/v1/leads", () => {
  it("stores {} as a lead with every field null", async () => {
    const res = await call(t, "/api/v1/leads", { body: {} });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["id", ...SPEC_FIELDS, "createdAt"]);
    expect(res.body.id).toMatch(/^lead_[0-9a-z]{26}$/);
    for (const field of SPEC_FIELDS) expect(res.body[field]).toBeNull();
    expect(new Date(res.body.createdAt).toISOString()).toBe(res.body.createdAt);
  });

  it("stores every field, normalised, exactly as it reads back", async () => {
    const body = {
      firstName: "  Zoë ",
      lastName: "O'Brien",
      title: "Facilities manager",
      companyName: "Acme 🐜 Ltd",
      email: "zoe@acme.example",
      mobilePhone: "+44 7700 900123",
      businessPhone: "",
      leadSource: 3,
      accountType: 0,
      rating: 2147483647,
      estimatedValue: 1250.75,
      estimatedCloseDate: "2026-12-01T09:30:00-05:00",
      buildingLocation: null,
      street1: "1 High St",
      street2: "Unit 4",
      city: "London",
      postalCode: "EC1A 1BB",
      state: "Greater London",
      country: "GB",
    };
    const res = await call(t, "/api/v1/leads", { body });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      ...body,
      firstName: "Zoë",
      businessPhone: null,
      estimatedCloseDate: "2026-12-01T14:30:00.000Z",
    });
    const stored = await env.DB.prepare("SELECT first_name, company_name, estimated_close_date FROM leads WHERE id = ?")
      .bind(res.body.id)
      .first();
    expect(stored).toEqual({
      first_name: "Zoë",
      company_name: "Acme 🐜 Ltd",
      estimated_close_date: Date.parse("2026-12-01T14:30:00Z"),
    });
  });

  it("reads a plain estimatedCloseDate as midnight UTC", async () => {
    const res = await call(t, "/api/v1/leads", { body: { estimatedCloseDate: "2027-01-15" } });
    expect(res.body.estimatedCloseDate).toBe("2027-01-15T00:00:00.000Z");
  });

  it("lists every failing field and stores nothing", async () => {
    const before = await env.DB.prepare("SELECT count(*) AS n FROM leads").first<{ n: number }>();
    const res = await call(t, "/api/v1/leads", {
      body: {
        email: "nope",
        rating: 1.5,
        estimatedValue: -1,
        estimatedCloseDate: "2026-02-30",
        firstname: "x",
        id: "lead_mine",
        orgId: "org_other",
      },
    });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: { path: string; code: string }) => `${e.path}:${e.code}`).sort()).toEqual([
      "email:invalid_format",
      "estimatedCloseDate:invalid_format",
      "estimatedValue:out_of_range",
      "firstname:unknown_field",
      "id:unknown_field",
      "orgId:unknown_field",
      "rating:invalid_type",
    ]);
    expect(res.body.detail).toBe("7 fields are invalid");
    const after = await env.DB.prepare("SELECT count(*) AS n FROM leads").first<{ n: number }>();
    expect(after?.n).toBe(before?.n);
  });
});
