import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../../support/request";
import { addAccount, newTenant, type Tenant } from "../../support/tenants";

let a: Tenant;
let b: Tenant;
beforeAll(async () => {
  a = await newTenant("Org A");
  b = await newTenant("Org B");
});

describe("GET /api/v1/accounts/{id}", () => {
  it("returns the account with every documented field", async () => {
    const account = await addAccount(a, "Blue Bakery", { accountType: 2, city: "Brooklyn", email: "hi@blue.example" });
    const res = await call(a, `/api/v1/accounts/${account.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: account.id,
      name: "Blue Bakery",
      accountType: 2,
      email: "hi@blue.example",
      mobilePhone: null,
      businessPhone: null,
      buildingLocation: null,
      street1: null,
      street2: null,
      city: "Brooklyn",
      postalCode: null,
      state: null,
      country: null,
      createdAt: new Date(account.createdAt).toISOString(),
      updatedAt: new Date(account.updatedAt).toISOString(),
    });
  });

  it("answers 404 account_not_found for another org's, unknown and malformed ids alike", async () => {
    const account = await addAccount(a, "Private");
    for (const id of [account.id, "acct_00000000000000000000000000", "not-an-id", "%27%20OR%201%3D1"]) {
      const res = await call(b, `/api/v1/accounts/${id}`);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("account_not_found");
      expect(JSON.stringify(res.body)).not.toContain("Private");
    }
  });

  it("is read-only", async () => {
    const res = await call(a, "/api/v1/accounts/acct_x", { method: "DELETE" });
    expect(res.status).toBe(405);
    expect(res.headers.get("Allow")).toBe("GET, HEAD");
  });
});
