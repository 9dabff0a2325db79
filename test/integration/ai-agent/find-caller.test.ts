// POST /api/v1/ai-agent/find-caller (docs/api.md, "Phone numbers" and "Find a
// caller"). Contacts and accounts are matched on the E.164 form of their
// free-text phones, in any spelling; incidents on their stored E.164 phone or
// on a matched account. Every list is bounded (10) and ordered; other orgs
// never show through.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { insertAccounts } from "../../../src/db/accounts";
import { createKey } from "../../../src/db/api-keys";
import { createOrg, setCountry } from "../../../src/db/orgs";
import { importAccount } from "../../../src/schemas/accounts";
import { caller } from "../../../src/schemas/ai-agent";
import { wrapD1 } from "../../support/d1";
import { bookIncident } from "../../support/incidents";
import { expectProblem } from "../../support/problem";
import { call } from "../../support/request";
import { strict } from "../../support/strict";
import { db, newTenant, openTenant, type Tenant } from "../../support/tenants";
import { HOUR, hoursAhead, MINUTE } from "../../support/time";
import { book, cancel, current, insertIncident } from "../incidents/helpers";

const FIND = "/api/v1/ai-agent/find-caller";
const PHONE = "+19175550134";
const SPELLINGS = ["(917) 555-0134", "917.555.0134", "+1 917 555 0134", "9175550134", "1-917-555-0134"];

const find = (t: Tenant, phone: unknown) => call(t, FIND, { body: { phone } });
const pause = (ms = 3) => new Promise((resolve) => setTimeout(resolve, ms));

/** Creates a contact through the API; fails the test unless it is stored. Pauses so createdAt values differ. */
async function addContact(t: Tenant, body: Record<string, unknown>) {
  await pause();
  const res = await call(t, "/api/v1/contacts", { body });
  expect(res.status, res.text).toBe(200);
  return res.body as { id: string; createdAt: string; mobilePhone: string | null; businessPhone: string | null };
}

/** Imports one account the way `accounts import` does (E.164 columns included), created at `createdAt`. */
async function importOne(t: Tenant, fields: Record<string, unknown>, createdAt: number) {
  const result = await insertAccounts(db(), t.orgId, [importAccount().parse(fields)], createdAt);
  return result!.accounts[0]!.id;
}

/** The account as GET /accounts/{id} shows it. */
async function accountView(t: Tenant, id: string) {
  const res = await call(t, `/api/v1/accounts/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const ids = (rows: { id: string }[]) => rows.map((row) => row.id);

/** A 200 find-caller answer of the documented shape (no undocumented field anywhere); returns its body. */
function expectCaller(res: Awaited<ReturnType<typeof find>>) {
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
  const parsed = strict(caller()).safeParse(res.body);
  expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
  expect(res.text).not.toMatch(/e164/i);
  return res.body as {
    phone: string;
    contacts: { id: string }[];
    accounts: { id: string }[];
    upcomingIncidents: { id: string }[];
  };
}

describe("find-caller: an unknown caller", () => {
  it("is 200 with empty lists and the phone normalised to E.164", async () => {
    const t = await newTenant();
    for (const spelling of [PHONE, ...SPELLINGS]) {
      const body = expectCaller(await find(t, spelling));
      expect(body).toEqual({ phone: PHONE, contacts: [], accounts: [], upcomingIncidents: [], plans: [] });
    }
    // A number of another country, written with "+".
    expect(expectCaller(await find(t, "+44 7911 123456")).phone).toBe("+447911123456");
  });
});

describe("find-caller: contacts", () => {
  it("matches mobilePhone or businessPhone in any spelling, newest first, at most 10, returned as stored", async () => {
    const t = await newTenant();
    const matching = [];
    for (let i = 0; i < 12; i++) {
      const spelling = SPELLINGS[i % SPELLINGS.length]!;
      const phones = i % 2 === 0 ? { mobilePhone: spelling } : { businessPhone: spelling, mobilePhone: "212-555-0100" };
      matching.push(await addContact(t, { firstName: `Match ${i}`, ...phones }));
    }
    // Near misses: another number, free text that is no number, no phone.
    await addContact(t, { firstName: "Near", mobilePhone: "+1 917 555 0135" });
    await addContact(t, { firstName: "Text", mobilePhone: "917 555 013", businessPhone: "call the office" });
    await addContact(t, { firstName: "None", email: "none@example.com" });

    const newestTen = [...matching].reverse().slice(0, 10);
    for (const spelling of [PHONE, "(917) 555-0134", "+1 917-555-0134"]) {
      const body = expectCaller(await find(t, spelling));
      expect(body.phone).toBe(PHONE);
      // Exactly the API's own contact objects: free text as given, no E.164 column.
      expect(body.contacts).toEqual(newestTen);
      expect(body.accounts).toEqual([]);
      expect(body.upcomingIncidents).toEqual([]);
    }
    // The business phone of the odd ones is another number, found by itself.
    const other = expectCaller(await find(t, "(212) 555-0100"));
    expect(ids(other.contacts)).toEqual(ids(matching.filter((_, i) => i % 2 === 1).reverse()));
  });
});

describe("find-caller: accounts", () => {
  it("lists accounts matched by their own phones and the accounts of matched contacts, newest first, once each", async () => {
    const t = await newTenant();
    const base = Date.now() - 60 * MINUTE;
    const byMobile = await importOne(t, { name: "By Mobile", mobilePhone: "917 555 0134" }, base + 1000);
    const byBusiness = await importOne(t, { name: "By Business", businessPhone: "+1 (917) 555-0134" }, base + 2000);
    const linkedOnly = await importOne(t, { name: "Linked Only", email: "linked@example.com" }, base + 3000);
    const both = await importOne(t, { name: "Both Ways", mobilePhone: "917.555.0134" }, base + 4000);
    const notCalling = await importOne(t, { name: "Not Calling", businessPhone: "212-555-0100" }, base + 5000);
    const otherContact = await importOne(t, { name: "Other Contact" }, base + 6000);
    const unparsable = await importOne(t, { name: "Unparsable", mobilePhone: "917-555-01" }, base + 7000);

    // Two matched contacts of one account: the account is listed once.
    await addContact(t, { firstName: "L1", mobilePhone: "(917) 555-0134", accountId: linkedOnly });
    await addContact(t, { firstName: "L2", businessPhone: PHONE, accountId: linkedOnly });
    await addContact(t, { firstName: "B1", mobilePhone: "+19175550134", accountId: both });
    // A contact of another number: its account is not the caller's.
    await addContact(t, { firstName: "O1", mobilePhone: "+1 917 555 0199", accountId: otherContact });
    // A matched contact without an account adds nothing.
    await addContact(t, { firstName: "Free", mobilePhone: "917 555 0134" });

    const body = expectCaller(await find(t, "(917) 555-0134"));
    expect(ids(body.accounts)).toEqual([both, linkedOnly, byBusiness, byMobile]);
    expect(body.accounts).toEqual(await Promise.all(ids(body.accounts).map((id) => accountView(t, id))));
    expect(body.accounts[0]).toMatchObject({ name: "Both Ways", mobilePhone: "917.555.0134" });
    expect(body.accounts[2]).toMatchObject({ name: "By Business", businessPhone: "+1 (917) 555-0134" });
    expect(ids(body.contacts)).toHaveLength(4);
    for (const id of [notCalling, otherContact, unparsable]) expect(ids(body.accounts)).not.toContain(id);
    // The other number finds its own account.
    expect(ids(expectCaller(await find(t, "+12125550100")).accounts)).toEqual([notCalling]);
  });

  it("lists at most 10 accounts, the newest across both ways of matching", async () => {
    const t = await newTenant();
    const base = Date.now() - 60 * MINUTE;
    const created: string[] = [];
    for (let i = 0; i < 12; i++) {
      const at = base + i * 1000;
      if (i % 2 === 0) {
        created.push(await importOne(t, { name: `Own ${i}`, businessPhone: SPELLINGS[i % SPELLINGS.length] }, at));
      } else {
        const id = await importOne(t, { name: `Linked ${i}` }, at);
        await addContact(t, { lastName: `Of ${i}`, mobilePhone: PHONE, accountId: id });
        created.push(id);
      }
    }
    const body = expectCaller(await find(t, PHONE));
    expect(ids(body.accounts)).toEqual([...created].reverse().slice(0, 10));
    expect(new Set(ids(body.accounts)).size).toBe(10);
  });
});

describe("find-caller: upcoming incidents", () => {
  it("lists scheduled, not-ended incidents by phone or by a matched account, soonest first", async () => {
    const t = await openTenant("Incidents Org");
    const past = Date.now() - HOUR;
    const acme = await importOne(t, { name: "Acme Homes", mobilePhone: "(917) 555-0134" }, past);
    const linked = await importOne(t, { name: "Linked Homes" }, past + 1);
    const other = await importOne(t, { name: "Other Homes", businessPhone: "+12125550100" }, past + 2);
    await addContact(t, { firstName: "Caller", mobilePhone: "917.555.0134", accountId: linked });

    // bookIncident takes a later hour each call: booking order is start order.
    const byPhone = await bookIncident(t, { clientName: "Walk In", phone: "917-555-0134" });
    const byAccount = await bookIncident(t, { clientName: "Acme Homes" });
    const byLinkedAccount = await bookIncident(t, { clientName: "linked homes", phone: "+1 212 555 0199" });
    const unrelated = await bookIncident(t, { clientName: "Other Homes", phone: "+12125550100" });
    const cancelled = await bookIncident(t, { clientName: "Acme Homes", phone: PHONE });
    const otherAccountSamePhone = await bookIncident(t, { clientName: "Other Homes", phone: "(917) 555-0134" });
    expect([byAccount.accountId, byLinkedAccount.accountId, otherAccountSamePhone.accountId]).toEqual([
      acme,
      linked,
      other,
    ]);
    const cancelRes = await cancel(t, cancelled.id, { reason: "caller moved" });
    expect(cancelRes.status, cancelRes.text).toBe(200);

    // Stored directly: appointments that have ended (by phone, by account) and one under way.
    const now = Date.now();
    await insertIncident(t, { startsAt: now - 3 * HOUR, endsAt: now - 2 * HOUR, phone: PHONE });
    await insertIncident(t, { startsAt: now - 2 * HOUR, endsAt: now - HOUR, accountId: acme });
    await insertIncident(t, { startsAt: now - 61 * MINUTE, endsAt: now - MINUTE, phone: PHONE });
    const underWay = await insertIncident(t, { startsAt: now - 30 * MINUTE, endsAt: now + 30 * MINUTE, phone: PHONE });
    // Cancelled and in the future, stored directly too.
    await insertIncident(t, { startsAt: hoursAhead(1000), status: "cancelled", phone: PHONE, cancelledAt: now });

    const body = expectCaller(await find(t, "+1 (917) 555-0134"));
    const expected = [underWay.id, byPhone.id, byAccount.id, byLinkedAccount.id, otherAccountSamePhone.id];
    expect(ids(body.upcomingIncidents)).toEqual(expected);
    expect(ids(body.upcomingIncidents)).not.toContain(unrelated.id);
    // Each is the incident as GET /incidents/{id} shows it.
    for (const incident of body.upcomingIncidents.slice(1)) expect(incident).toEqual(await current(t, incident.id));
    expect(body.upcomingIncidents[0]).toMatchObject({ status: "scheduled", phone: PHONE, accountId: null });
    expect(ids(body.accounts)).toEqual([linked, acme]);
  });

  it("lists at most 10, soonest first, whatever order they were booked in", async () => {
    const t = await openTenant("Ten Org");
    const starts = Array.from({ length: 12 }, (_, i) => hoursAhead(30 + ((i * 5) % 12)));
    const booked = [];
    for (const start of starts) booked.push(await book(t, start, { phone: SPELLINGS[booked.length % 5] }));
    const soonest = [...booked].sort((a, b) => Date.parse(a.dateTime) - Date.parse(b.dateTime)).slice(0, 10);
    const body = expectCaller(await find(t, PHONE));
    expect(ids(body.upcomingIncidents)).toEqual(ids(soonest));
  });
});

describe("find-caller: tenancy", () => {
  it("never shows another org's contacts, accounts or incidents with the same phone", async () => {
    const mine = await openTenant("Mine");
    const theirs = await openTenant("Theirs");
    const theirAccount = await importOne(theirs, { name: "Their Account", mobilePhone: PHONE }, Date.now());
    const theirLinked = await importOne(theirs, { name: "Their Linked" }, Date.now() + 1);
    const theirContact = await addContact(theirs, { firstName: "T", mobilePhone: PHONE, accountId: theirLinked });
    const theirIncident = await bookIncident(theirs, { clientName: "Their Linked", phone: PHONE });
    const theirAccountIncident = await bookIncident(theirs, { clientName: "Their Account" });

    // The other org does find them: the setup matches.
    const theirView = expectCaller(await find(theirs, PHONE));
    expect(ids(theirView.contacts)).toEqual([theirContact.id]);
    expect(ids(theirView.accounts)).toEqual([theirLinked, theirAccount]);
    expect(ids(theirView.upcomingIncidents)).toEqual([theirIncident.id, theirAccountIncident.id]);

    expect(expectCaller(await find(mine, PHONE))).toEqual({
      phone: PHONE,
      contacts: [],
      accounts: [],
      upcomingIncidents: [],
      plans: [],
    });
    // With a record of its own, only that one shows.
    const myContact = await addContact(mine, { firstName: "M", businessPhone: "(917) 555-0134" });
    const myIncident = await bookIncident(mine, { phone: "917 555 0134" });
    const myView = expectCaller(await find(mine, PHONE));
    expect(ids(myView.contacts)).toEqual([myContact.id]);
    expect(myView.accounts).toEqual([]);
    expect(ids(myView.upcomingIncidents)).toEqual([myIncident.id]);
  });
});

describe("find-caller: validation", () => {
  it.each([
    ["hello", "invalid_phone"],
    ["123", "invalid_phone"],
    ["+1917555013", "invalid_phone"],
    ["917 555 013", "invalid_phone"],
    ["+", "invalid_phone"],
    ["9".repeat(41), "too_long"],
    [`+1 917 555 0134${" x".repeat(13)}`, "too_long"],
    ["", "required"],
    ["   ", "required"],
    [null, "required"],
    [9175550134, "invalid_type"],
  ])("phone %j is 422 with errors [{path: phone, code: %s}]", async (phone, code) => {
    const t = await newTenant();
    const body = expectProblem(await find(t, phone), 422, "validation_failed");
    expect(body.errors).toEqual([{ path: "phone", code, message: expect.any(String) }]);
  });

  it("requires phone and refuses unknown fields", async () => {
    const t = await newTenant();
    const missing = expectProblem(await call(t, FIND, { body: {} }), 422, "validation_failed");
    expect(missing.errors).toEqual([{ path: "phone", code: "required", message: expect.any(String) }]);
    const misspelt = expectProblem(await call(t, FIND, { body: { Phone: PHONE } }), 422, "validation_failed");
    expect(misspelt.errors).toEqual(
      expect.arrayContaining([
        { path: "phone", code: "required", message: expect.any(String) },
        { path: "Phone", code: "unknown_field", message: expect.stringContaining("'phone'") },
      ]),
    );
  });

  it("lists every failing field at once, an invalid phone among them", async () => {
    const t = await newTenant();
    const body = expectProblem(
      await call(t, FIND, { body: { phone: "hello", name: "Ann" } }),
      422,
      "validation_failed",
    );
    expect(body.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: "name", code: "unknown_field" }),
        expect.objectContaining({ path: "phone", code: "invalid_phone" }),
      ]),
    );
  });
});

describe("find-caller: the org's country", () => {
  it("reads a number without + in the org's country; a US org refuses a GB national number", async () => {
    const gb = await createOrg(db(), { name: "GB Org", timeZone: "Europe/London", country: "GB" });
    const us = await newTenant("US Org");
    // Stored in GB's reading of the same text, then found by any spelling.
    const contact = await addContact(gb, { firstName: "Nigel", mobilePhone: "07911 123456" });
    for (const spelling of ["07911 123456", "07911123456", "+44 7911 123456", "+447911123456"]) {
      const body = expectCaller(await find(gb, spelling));
      expect(body.phone).toBe("+447911123456");
      expect(body.contacts).toEqual([contact]);
    }
    // With "+", a US number is a US number in a GB org too.
    expect(expectCaller(await find(gb, "+1 917 555 0134")).phone).toBe(PHONE);

    const refused = expectProblem(await find(us, "07911 123456"), 422, "validation_failed");
    expect(refused.errors).toEqual([{ path: "phone", code: "invalid_phone", message: expect.any(String) }]);
    // The same text with its country code is found in the US org (and finds nothing there).
    expect(expectCaller(await find(us, "+44 7911 123456"))).toEqual({
      phone: "+447911123456",
      contacts: [],
      accounts: [],
      upcomingIncidents: [],
      plans: [],
    });
  });

  it("follows a change of country (a key the isolate has not cached reads it at once)", async () => {
    const t = await newTenant("Moving Org");
    expectProblem(await find(t, "07911 123456"), 422, "validation_failed");
    expect(await setCountry(db(), t.orgId, "GB")).toEqual({ orgId: t.orgId, country: "GB" });
    const fresh = { ...t, apiKey: (await createKey(db(), t.orgId))!.apiKey };
    expect(expectCaller(await find(fresh, "07911 123456")).phone).toBe("+447911123456");
    // "917 555 0134" is now a GB number, not the US one.
    expect(expectCaller(await find(fresh, "917 555 0134")).phone).not.toBe(PHONE);
  });
});

describe("find-caller: cost", () => {
  it("is one D1 round trip once the key is verified, whatever the org holds", async () => {
    const t = await openTenant("Budget Org");
    const account = await importOne(t, { name: "Budget Homes", mobilePhone: PHONE }, Date.now());
    await addContact(t, { firstName: "Budget", businessPhone: "917 555 0134", accountId: account });
    await bookIncident(t, { clientName: "Budget Homes", phone: PHONE });
    for (let i = 0; i < 5; i++) await addContact(t, { firstName: `Noise ${i}`, mobilePhone: `+1 212 555 01${10 + i}` });

    // The first call verifies the key (and records its use); the next is warm.
    const first = expectCaller(await find(t, PHONE));
    const warm = wrapD1(env.DB);
    const res = await call(t, FIND, { body: { phone: "(917) 555-0134" }, bindings: { DB: warm.db } });
    expect(expectCaller(res)).toEqual(first);
    expect(warm.trips.length, JSON.stringify(warm.trips)).toBe(1);
    // The one round trip is the batch of the four reads (contacts, accounts, visits, plans).
    expect(warm.trips[0]!.statements).toHaveLength(4);
    expect(first.contacts).toHaveLength(1);
    expect(first.accounts).toHaveLength(1);
    expect(first.upcomingIncidents).toHaveLength(1);
  });
});
