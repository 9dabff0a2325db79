// The E.164 backfill (`phones backfill`): rows stored before the columns
// existed get them, in their org's country; a second run changes nothing.
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { accounts, contacts, leads } from "../../../drizzle/schema";
import { setCountry } from "../../../src/db/orgs";
import { backfillPhones } from "../../../src/db/phones";
import { newId } from "../../../src/lib/ids";
import { addAccount, db, newTenant } from "../../support/tenants";

/** A contact as a row from before migration 0005: free text only. */
async function oldContact(orgId: string, mobilePhone: string | null, businessPhone: string | null) {
  const now = Date.now();
  const id = newId("ct", now);
  await db().insert(contacts).values({ id, orgId, mobilePhone, businessPhone, createdAt: now, updatedAt: now });
  return id;
}

const columnsOf = async (id: string) =>
  (
    await db().select({ m: contacts.mobileE164, b: contacts.businessE164 }).from(contacts).where(eq(contacts.id, id))
  )[0];

describe("backfillPhones", () => {
  it("stores the E.164 form of every parsable phone of one org, in its country, and is idempotent", async () => {
    const us = await newTenant();
    const gb = await newTenant();
    await setCountry(db(), gb.orgId, "GB");
    const a = await oldContact(us.orgId, "(917) 555-0134", "not a phone");
    const b = await oldContact(gb.orgId, "07911 123456", null);
    const account = await addAccount(us, "Old Account", { businessPhone: "212-555-0100" });
    await db().update(accounts).set({ businessE164: null }).where(eq(accounts.id, account.id));
    const lead = newId("lead", Date.now());
    await db()
      .insert(leads)
      .values({ id: lead, orgId: us.orgId, mobilePhone: "+44 7911 123457", createdAt: Date.now() });

    const first = await backfillPhones(db(), us.orgId);
    expect(first).toEqual({
      contacts: { scanned: 1, updated: 1 },
      accounts: { scanned: 1, updated: 1 },
      leads: { scanned: 1, updated: 1 },
    });
    expect(await columnsOf(a)).toEqual({ m: "+19175550134", b: null });
    // Another org's rows wait for their own run.
    expect(await columnsOf(b)).toEqual({ m: null, b: null });
    const [stored] = await db().select().from(accounts).where(eq(accounts.id, account.id));
    expect(stored?.businessE164).toBe("+12125550100");
    const [storedLead] = await db().select().from(leads).where(eq(leads.id, lead));
    expect(storedLead?.mobileE164).toBe("+447911123457");

    expect((await backfillPhones(db(), us.orgId)).contacts).toEqual({ scanned: 1, updated: 0 });
    await backfillPhones(db(), gb.orgId);
    expect(await columnsOf(b)).toEqual({ m: "+447911123456", b: null });
  });

  it("recomputes after a change of country, and clears a number the new country does not read", async () => {
    const t = await newTenant();
    const id = await oldContact(t.orgId, "07911 123456", null);
    await backfillPhones(db(), t.orgId);
    expect(await columnsOf(id)).toEqual({ m: null, b: null });
    await setCountry(db(), t.orgId, "GB");
    expect((await backfillPhones(db(), t.orgId)).contacts).toEqual({ scanned: 1, updated: 1 });
    expect(await columnsOf(id)).toEqual({ m: "+447911123456", b: null });
    await setCountry(db(), t.orgId, "US");
    await backfillPhones(db(), t.orgId);
    expect(await columnsOf(id)).toEqual({ m: null, b: null });
  });

  it("pages through more rows than one batch", async () => {
    const t = await newTenant();
    for (let i = 0; i < 130; i++) await oldContact(t.orgId, `917 555 ${String(1000 + i)}`, null);
    expect((await backfillPhones(db(), t.orgId)).contacts).toEqual({ scanned: 130, updated: 130 });
    expect((await backfillPhones(db(), t.orgId)).contacts).toEqual({ scanned: 130, updated: 0 });
  });
});
