// Phones (docs/api.md, "Phone numbers") on the CRM resources: free-text phones
// are stored and returned as given, with their E.164 form beside them (never
// shown), and GET /api/v1/contacts?phone= lists the contacts of a number in any
// spelling, in list order, with cursors bound to the number.
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { contacts, leads } from "../../../drizzle/schema";
import { insertAccounts } from "../../../src/db/accounts";
import { createOrg } from "../../../src/db/orgs";
import { account, importAccount } from "../../../src/schemas/accounts";
import { contactPage, contact as contactSchema } from "../../../src/schemas/contacts";
import { lead as leadSchema } from "../../../src/schemas/leads";
import type { ReadResponse } from "../../support/http";
import { expectProblem } from "../../support/problem";
import { call } from "../../support/request";
import { strict } from "../../support/strict";
import { db, newTenant, type Tenant } from "../../support/tenants";

const PHONE = "+19175550134";
const q = encodeURIComponent;
const pause = (ms = 3) => new Promise((resolve) => setTimeout(resolve, ms));

interface Contact {
  id: string;
  createdAt: string;
  mobilePhone: string | null;
  businessPhone: string | null;
  accountId: string | null;
  email: string | null;
}

/** Creates a contact through the API; fails the test unless it is stored. Pauses so createdAt values differ. */
async function addContact(t: Tenant, body: Record<string, unknown>): Promise<Contact> {
  await pause();
  const res = await call(t, "/api/v1/contacts", { body });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const listContacts = (t: Tenant, query: string) => call(t, `/api/v1/contacts?${query}`);

/** A 200 page of the documented shape, with no E.164 column anywhere; returns its body. */
function expectPage(res: ReadResponse) {
  expect(res.status, res.text).toBe(200);
  const parsed = strict(contactPage()).safeParse(res.body);
  expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
  expect(res.text).not.toMatch(/e164/i);
  return res.body as { data: Contact[]; hasMore: boolean; nextCursor: string | null };
}

/** Every page of `query` with `limit`, following nextCursor; the rows in the order seen. */
async function pageThrough(t: Tenant, query: string, limit: number): Promise<Contact[]> {
  const seen: Contact[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 50; page++) {
    const body = expectPage(await listContacts(t, `limit=${limit}&${query}${cursor ? `&cursor=${q(cursor)}` : ""}`));
    seen.push(...body.data);
    cursor = body.nextCursor;
    expect(body.hasMore).toBe(cursor !== null);
    if (cursor === null) return seen;
    expect(body.data).toHaveLength(limit);
  }
  throw new Error("pagination did not end");
}

const ids = (rows: { id: string }[]) => rows.map((row) => row.id);

const storedContact = async (id: string) =>
  (
    await db()
      .select({ mobileE164: contacts.mobileE164, businessE164: contacts.businessE164 })
      .from(contacts)
      .where(eq(contacts.id, id))
  )[0];

const storedLead = async (id: string) =>
  (
    await db()
      .select({ mobileE164: leads.mobileE164, businessE164: leads.businessE164 })
      .from(leads)
      .where(eq(leads.id, id))
  )[0];

/** An org whose contacts the phone filter splits: five of PHONE (in five spellings, either field) among others. */
async function phoneBook() {
  const t = await newTenant("Phone Book");
  const c1 = await addContact(t, { firstName: "C1", mobilePhone: "(917) 555-0134" });
  await addContact(t, { firstName: "N1", mobilePhone: "+1 917 555 0135" });
  const c2 = await addContact(t, { firstName: "C2", businessPhone: "917.555.0134" });
  await addContact(t, { firstName: "N2", mobilePhone: "call the office", businessPhone: "917-555-013" });
  const c3 = await addContact(t, { firstName: "C3", mobilePhone: "+1 917 555 0134", businessPhone: "212-555-0100" });
  await addContact(t, { firstName: "N3", email: "n3@example.com" });
  const c4 = await addContact(t, { firstName: "C4", businessPhone: PHONE });
  const c5 = await addContact(t, { firstName: "C5", mobilePhone: "212 555 0100", businessPhone: "1 917 555 0134" });
  await addContact(t, { firstName: "N4", mobilePhone: "+44 7911 123456" });
  return { t, matching: [c1, c2, c3, c4, c5], c3, c5 };
}

describe("GET /api/v1/contacts?phone=", () => {
  it("lists the contacts whose mobilePhone or businessPhone is the number, in any spelling, oldest first", async () => {
    const { t, matching, c3, c5 } = await phoneBook();
    for (const spelling of [PHONE, "(917) 555-0134", "917-555-0134", " +1 (917) 555 0134 ", "9175550134"]) {
      const body = expectPage(await listContacts(t, `phone=${q(spelling)}`));
      // The API's own contact objects, free text as given.
      expect(body.data).toEqual(matching);
      expect(body.hasMore).toBe(false);
      expect(body.nextCursor).toBeNull();
    }
    expect(ids(expectPage(await listContacts(t, `phone=${q("(212) 555-0100")}`)).data)).toEqual(ids([c3, c5]));
    expect(ids(expectPage(await listContacts(t, `phone=${q("+44 7911 123456")}`)).data)).toHaveLength(1);
    expect(expectPage(await listContacts(t, `phone=${q("+1 212 555 0199")}`)).data).toEqual([]);
    // Without the filter, every contact is there.
    expect(expectPage(await listContacts(t, "")).data).toHaveLength(9);
  });

  it("is in (createdAt, id) order even when createdAt ties, and combines with the other filters", async () => {
    const t = await newTenant("Ties");
    const account = (await insertAccounts(db(), t.orgId, [importAccount().parse({ name: "Acme" })]))!.accounts[0]!.id;
    const created: Contact[] = [];
    // Sent together, several may share a millisecond; the id then decides.
    const bodies = Array.from({ length: 8 }, (_, i) => ({
      firstName: `T${i}`,
      mobilePhone: "917 555 0134",
      ...(i % 2 === 0 ? { accountId: account, email: `t${i}@example.com` } : {}),
    }));
    for (const res of await Promise.all(bodies.map((body) => call(t, "/api/v1/contacts", { body })))) {
      expect(res.status, res.text).toBe(200);
      created.push(res.body);
    }
    const ordered = [...created].sort((a, b) =>
      a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : Date.parse(a.createdAt) - Date.parse(b.createdAt),
    );
    expect(ids(await pageThrough(t, `phone=${q(PHONE)}`, 3))).toEqual(ids(ordered));
    expect(ids(expectPage(await listContacts(t, `phone=${q(PHONE)}&accountId=${account}`)).data)).toEqual(
      ids(ordered.filter((c) => c.accountId === account)),
    );
    expect(ids(expectPage(await listContacts(t, `phone=${q(PHONE)}&email=T2%40Example.com`)).data)).toEqual(
      ids(created.filter((c) => c.email === "t2@example.com")),
    );
    expect(expectPage(await listContacts(t, `phone=${q("+12125550100")}&accountId=${account}`)).data).toEqual([]);
  });

  it("pages by cursor, with limit free to change, and takes the cursor back with the number spelled another way", async () => {
    const { t, matching } = await phoneBook();
    expect(ids(await pageThrough(t, `phone=${q(PHONE)}`, 2))).toEqual(ids(matching));
    expect(ids(await pageThrough(t, `phone=${q("917.555.0134")}`, 1))).toEqual(ids(matching));

    const first = expectPage(await listContacts(t, `limit=2&phone=${q("(917) 555-0134")}`));
    expect(ids(first.data)).toEqual(ids(matching.slice(0, 2)));
    expect(first.hasMore).toBe(true);
    const cursor = q(first.nextCursor!);
    const second = expectPage(await listContacts(t, `limit=2&phone=${q(PHONE)}&cursor=${cursor}`));
    expect(ids(second.data)).toEqual(ids(matching.slice(2, 4)));
    const rest = expectPage(await listContacts(t, `limit=10&phone=${q("917 555 0134")}&cursor=${cursor}`));
    expect(ids(rest.data)).toEqual(ids(matching.slice(2)));
    expect(rest).toMatchObject({ hasMore: false, nextCursor: null });
  });

  it("refuses a cursor issued for another number, for no number, or for another org", async () => {
    const { t } = await phoneBook();
    const other = await newTenant("Other");
    const byPhone = q(expectPage(await listContacts(t, `limit=1&phone=${q(PHONE)}`)).nextCursor!);
    const unfiltered = q(expectPage(await listContacts(t, "limit=1")).nextCursor!);
    // Sanity: each cursor is good for its own query.
    expect((await listContacts(t, `limit=1&phone=${q(PHONE)}&cursor=${byPhone}`)).status).toBe(200);
    expect((await listContacts(t, `limit=1&cursor=${unfiltered}`)).status).toBe(200);

    for (const [tenant, query] of [
      [t, `phone=${q("+12125550100")}&cursor=${byPhone}`],
      [t, `phone=${q("+1 917 555 0135")}&cursor=${byPhone}`],
      [t, `cursor=${byPhone}`],
      [t, `phone=${q(PHONE)}&cursor=${unfiltered}`],
      [other, `phone=${q(PHONE)}&cursor=${byPhone}`],
    ] as const) {
      const body = expectProblem(await listContacts(tenant, query), 422, "validation_failed");
      expect(body.errors).toEqual([{ path: "cursor", code: "invalid_cursor", message: expect.any(String) }]);
    }
  });

  it.each([
    ["phone=hello", "invalid_phone"],
    ["phone=123", "invalid_phone"],
    [`phone=${q("+1917555013")}`, "invalid_phone"],
    [`phone=${q("917 555 013")}`, "invalid_phone"],
    [`phone=${"9".repeat(41)}`, "too_long"],
    [`phone=${q(PHONE)}&phone=${q(PHONE)}`, "invalid_type"],
  ])("%s is 422 with errors [{path: phone, code: %s}]", async (query, code) => {
    const t = await newTenant();
    const body = expectProblem(await listContacts(t, query), 422, "validation_failed");
    expect(body.errors).toEqual([{ path: "phone", code, message: expect.any(String) }]);
  });

  it("reads a number without + in the org's country", async () => {
    const gb = await createOrg(db(), { name: "GB Org", timeZone: "Europe/London", country: "GB" });
    const us = await newTenant("US Org");
    const nigel = await addContact(gb, { firstName: "Nigel", businessPhone: "07911 123456" });
    await addContact(us, { firstName: "Sam", businessPhone: "07911 123456" });
    for (const spelling of ["07911 123456", "+44 7911 123456"]) {
      expect(expectPage(await listContacts(gb, `phone=${q(spelling)}`)).data).toEqual([nigel]);
    }
    const body = expectProblem(await listContacts(us, `phone=${q("07911 123456")}`), 422, "validation_failed");
    expect(body.errors).toEqual([{ path: "phone", code: "invalid_phone", message: expect.any(String) }]);
    // The US contact's text was no US number: not found by the GB number either.
    expect(expectPage(await listContacts(us, `phone=${q("+447911123456")}`)).data).toEqual([]);
  });

  it("lists every failing query field at once, an invalid phone among them", async () => {
    const t = await newTenant();
    const body = expectProblem(await listContacts(t, "limit=0&phone=hello"), 422, "validation_failed");
    expect(body.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: "limit", code: "out_of_range" }),
        expect.objectContaining({ path: "phone", code: "invalid_phone" }),
      ]),
    );
  });
});

describe("free-text phones and their stored E.164 form", () => {
  it("stores and returns a contact's phone text as given; text that is no number is not found by phone", async () => {
    const t = await newTenant();
    const texts = ["ask for Bob, ext. 12", "917-555-01", "+1 (917) 555-0134", "00 1 917 555 0134 x"];
    const contact = await addContact(t, { firstName: "Bob", mobilePhone: texts[0], businessPhone: texts[1] });
    expect(contact).toMatchObject({ mobilePhone: texts[0], businessPhone: texts[1] });
    expect(await storedContact(contact.id)).toEqual({ mobileE164: null, businessE164: null });
    // Read back as given, through the list.
    expect(expectPage(await listContacts(t, "")).data).toEqual([contact]);
    expect(expectPage(await listContacts(t, `phone=${q("+19175550101")}`)).data).toEqual([]);

    const spelled = await addContact(t, { firstName: "Spelled", mobilePhone: texts[2] });
    expect(spelled.mobilePhone).toBe(texts[2]);
    expect(await storedContact(spelled.id)).toEqual({ mobileE164: PHONE, businessE164: null });
    expect(expectPage(await listContacts(t, `phone=${q(PHONE)}`)).data).toEqual([spelled]);
  });

  it("stores mobile_e164 and business_e164 of a contact and a lead, in the org's country, and never shows them", async () => {
    const us = await newTenant("US Org");
    const gb = await createOrg(db(), { name: "GB Org", timeZone: "UTC", country: "GB" });
    const cases: [Tenant, Record<string, string>, Record<string, string | null>][] = [
      [
        us,
        { mobilePhone: "(917) 555-0134", businessPhone: "+44 7911 123456" },
        { mobileE164: PHONE, businessE164: "+447911123456" },
      ],
      [
        us,
        { mobilePhone: "not a phone", businessPhone: "212.555.0100" },
        { mobileE164: null, businessE164: "+12125550100" },
      ],
      [us, { businessPhone: "07911 123456" }, { mobileE164: null, businessE164: null }],
      [
        gb,
        { mobilePhone: "07911 123456", businessPhone: "+1 917 555 0134" },
        { mobileE164: "+447911123456", businessE164: PHONE },
      ],
      [gb, { mobilePhone: "917-555-01" }, { mobileE164: null, businessE164: null }],
    ];
    for (const [tenant, phones, stored] of cases) {
      const contact = await call(tenant, "/api/v1/contacts", { body: { firstName: "Pat", ...phones } });
      expect(contact.status, contact.text).toBe(200);
      expect(strict(contactSchema()).safeParse(contact.body).success, contact.text).toBe(true);
      expect(contact.text).not.toMatch(/e164/i);
      expect(contact.body).toMatchObject({ mobilePhone: null, businessPhone: null, ...phones });
      expect(await storedContact(contact.body.id)).toEqual(stored);

      const lead = await call(tenant, "/api/v1/leads", { body: { lastName: "Lee", ...phones } });
      expect(lead.status, lead.text).toBe(200);
      expect(strict(leadSchema()).safeParse(lead.body).success, lead.text).toBe(true);
      expect(lead.text).not.toMatch(/e164/i);
      expect(lead.body).toMatchObject({ mobilePhone: null, businessPhone: null, ...phones });
      expect(await storedLead(lead.body.id)).toEqual(stored);
    }
    // A lead or contact without phones stores none.
    const bare = await call(us, "/api/v1/leads", { body: {} });
    expect(await storedLead(bare.body.id)).toEqual({ mobileE164: null, businessE164: null });
  });

  it("shows an imported account's phones as given, without its E.164 columns", async () => {
    const t = await newTenant();
    const imported = await insertAccounts(db(), t.orgId, [
      importAccount().parse({ name: "Acme", mobilePhone: "(917) 555-0134", businessPhone: "front desk" }),
    ]);
    const id = imported!.accounts[0]!.id;
    const res = await call(t, `/api/v1/accounts/${id}`);
    expect(res.status, res.text).toBe(200);
    expect(strict(account()).safeParse(res.body).success, res.text).toBe(true);
    expect(res.text).not.toMatch(/e164/i);
    expect(res.body).toMatchObject({ mobilePhone: "(917) 555-0134", businessPhone: "front desk" });
    const found = await call(t, "/api/v1/ai-agent/find-caller", { body: { phone: PHONE } });
    expect(found.status, found.text).toBe(200);
    expect(found.body.accounts).toEqual([res.body]);
  });
});
