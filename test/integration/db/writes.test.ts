// src/db query functions of the API's resources, called directly: what each
// stores and returns, the conditions in its one statement, and what its batch
// records for a held Idempotency-Key (the recorded text is the answer).
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { contacts, idempotencyKeys, incidents } from "../../../drizzle/schema";
import { getAccount, insertAccounts } from "../../../src/db/accounts";
import { findActiveKey, orgOfKey } from "../../../src/db/api-keys";
import { createContact, listContacts } from "../../../src/db/contacts";
import { actorOf } from "../../../src/db/events";
import { type IdempotencyKey, KeyTaken, recordOutcome, releaseKey } from "../../../src/db/idempotency";
import { bookSlot } from "../../../src/db/incidents";
import { createLead } from "../../../src/db/leads";
import { bookingsOverlapping } from "../../../src/db/occupancy";
import type { Org } from "../../../src/db/orgs";
import { hashApiKey } from "../../../src/lib/api-keys";
import type { SlotTimes } from "../../../src/scheduling/slots";
import { importAccount } from "../../../src/schemas/accounts";
import { createContactBody } from "../../../src/schemas/contacts";
import { createLeadBody } from "../../../src/schemas/leads";
import { slotRequest } from "../../support/schedules";
import { addAccount, db, newTenant, openTenant, type Tenant } from "../../support/tenants";
import { DAY, daysAhead, HOUR } from "../../support/time";

/** Who makes these writes: nobody with a key, as the admin CLI. */
const actor = actorOf("cli");

/** The org as the auth middleware reads it. */
async function orgOf(tenant: Tenant): Promise<Org> {
  return orgOfKey((await findActiveKey(db(), await hashApiKey(tenant.apiKey)))!);
}

/** A visit of no service (one slot long) at `slot`, in crew mode. */
const crew = (org: Org, slot: SlotTimes) => ({ request: slotRequest(org.schedule), slot, candidates: null });

/** A key of `tenant`'s request, as the idempotency middleware holds one: claimed by the first batch that writes. */
const held = (tenant: Tenant, key: string = crypto.randomUUID()): IdempotencyKey => ({
  orgId: tenant.orgId,
  key,
  claimedAt: Date.now(),
  requestHash: "hash",
});

const recordOf = async (key: IdempotencyKey) =>
  (
    await db()
      .select()
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.orgId, key.orgId), eq(idempotencyKeys.key, key.key)))
  )[0];

describe("accounts", () => {
  it("insertAccounts stores every row across several statements; null and nothing written for an unknown org", async () => {
    const t = await newTenant();
    const rows = Array.from({ length: 1_201 }, (_, i) => importAccount().parse({ name: `Acct ${i}`, city: "Leeds" }));
    const result = (await insertAccounts(db(), t.orgId, rows))!;
    expect(result.imported).toBe(1_201);
    const last = result.accounts.at(-1)!;
    expect(await getAccount(db(), t.orgId, last.id)).toMatchObject({ id: last.id, name: "Acct 1200", city: "Leeds" });
    expect(await getAccount(db(), (await newTenant()).orgId, last.id)).toBeUndefined();
    expect(await insertAccounts(db(), "org_missing", rows)).toBeNull();
  });
});

describe("leads and contacts", () => {
  it("createLead returns the stored row's JSON, recorded for a held key in the same batch", async () => {
    const t = await newTenant();
    const lead = createLeadBody().parse({ firstName: "Ann", estimatedCloseDate: "2026-12-01" });
    const plain = await createLead(db(), { actor, orgId: t.orgId, country: "US", lead, now: 1_700_000_000_000 });
    expect(plain.recorded).toBe(false);
    expect(JSON.parse(plain.body)).toMatchObject({ firstName: "Ann", estimatedCloseDate: "2026-12-01T00:00:00.000Z" });
    const key = held(t);
    const written = await createLead(db(), {
      actor,
      orgId: t.orgId,
      country: "US",
      lead,
      now: Date.now(),
      idempotencyKey: key,
    });
    expect(written.recorded).toBe(true);
    expect(await recordOf(key)).toMatchObject({ status: 200, body: written.body });
  });

  it("createContact refuses another org's account (null, nothing stored, nothing recorded)", async () => {
    const t = await newTenant();
    const foreign = await addAccount(await newTenant(), "Theirs");
    const key = held(t);
    const contact = createContactBody().parse({ firstName: "Bo", accountId: foreign.id });
    expect(
      await createContact(db(), {
        actor,
        orgId: t.orgId,
        country: "US",
        contact,
        now: Date.now(),
        idempotencyKey: key,
      }),
    ).toBeNull();
    expect(await db().select().from(contacts).where(eq(contacts.orgId, t.orgId))).toEqual([]);
    expect(await recordOf(key)).toMatchObject({ status: null, body: null });
    await releaseKey(db(), key);
    expect(await recordOf(key)).toBeUndefined();
  });

  it("listContacts pages by keyset with any limit, filters as asked", async () => {
    const t = await newTenant();
    const account = await addAccount(t, "Linked");
    for (let i = 0; i < 5; i++) {
      const contact = createContactBody().parse({ firstName: `C${i}`, accountId: i % 2 ? account.id : null });
      await createContact(db(), { actor, orgId: t.orgId, country: "US", contact, now: 1_000 + i });
    }
    const first = await listContacts(db(), { orgId: t.orgId, filters: {}, limit: 2 });
    expect(first.rows.map((r) => r.firstName)).toEqual(["C0", "C1"]);
    expect(first.hasMore).toBe(true);
    const rest = await listContacts(db(), {
      orgId: t.orgId,
      filters: {},
      after: { at: first.rows[1]!.createdAt, id: first.rows[1]!.id },
      limit: 10,
    });
    expect(rest).toMatchObject({
      hasMore: false,
      rows: [{ firstName: "C2" }, { firstName: "C3" }, { firstName: "C4" }],
    });
    const linked = await listContacts(db(), { orgId: t.orgId, filters: { accountId: account.id }, limit: 10 });
    expect(linked.rows.map((r) => r.firstName)).toEqual(["C1", "C3"]);
  });
});

describe("bookings", () => {
  const incident = { clientName: "Acme", insectName: "Ants", phone: null, notes: null, postalCode: null };

  it("bookSlot books up to capacity, links the one account of the name, and answers the places left", async () => {
    const t = await openTenant("Booker", { capacity: 2 });
    const account = await addAccount(t, "ACME");
    const org = await orgOf(t);
    const slot = { start: daysAhead(2, 10), end: daysAhead(2, 11) };
    const now = Date.now();
    const first = JSON.parse(
      (await bookSlot(db(), { actor, org, placement: crew(org, slot), incident, now })).written!.body,
    );
    expect(first).toMatchObject({ accountId: account.id, dateTime: new Date(slot.start).toISOString() });
    expect(first.appointment).toMatchObject({ start: new Date(slot.start).toISOString(), remaining: 1 });
    const second = JSON.parse(
      (await bookSlot(db(), { actor, org, placement: crew(org, slot), incident, now })).written!.body,
    );
    expect(second.appointment.remaining).toBe(0);
    expect((await bookSlot(db(), { actor, org, placement: crew(org, slot), incident, now })).written).toBeUndefined();
    // An overlapping range sees the two bookings as one group.
    expect(await bookingsOverlapping(db(), { org, now }, [{ start: slot.start - HOUR, end: slot.end + DAY }])).toEqual([
      { startsAt: slot.start, endsAt: slot.end, technicianId: null, count: 2 },
    ]);
    await addAccount(t, "acme");
    const ambiguous = JSON.parse(
      (
        await bookSlot(db(), {
          actor,
          org,
          placement: crew(org, { start: slot.end, end: slot.end + HOUR }),
          incident,
          now,
        })
      ).written!.body,
    );
    expect(ambiguous.accountId).toBeNull();
  });

  it("with a held key, the answer is the very text the batch recorded", async () => {
    const t = await openTenant("Recorder", { capacity: 3 });
    const org = await orgOf(t);
    const key = held(t);
    const slot = { start: daysAhead(3, 9), end: daysAhead(3, 10) };
    const booked = (
      await bookSlot(db(), {
        actor,
        org,
        placement: crew(org, slot),
        incident: { clientName: 'Quote "me" \\ ☃', insectName: "x", phone: null, notes: null, postalCode: null },
        now: Date.now(),
        idempotencyKey: key,
      })
    ).written!;
    expect(booked.recorded).toBe(true);
    expect(await recordOf(key)).toMatchObject({ status: 200, contentType: "application/json", body: booked.body });
    expect(JSON.parse(booked.body)).toMatchObject({ clientName: 'Quote "me" \\ ☃', appointment: { remaining: 2 } });
  });

  it("a key another request holds aborts the whole batch: KeyTaken, nothing booked, the record untouched", async () => {
    const t = await openTenant("Taken");
    const org = await orgOf(t);
    const first = held(t);
    const outcome = { status: 200, contentType: "application/json", body: "{}" };
    expect(await recordOutcome(db(), first, outcome)).toEqual({ stored: true });
    const slot = { start: daysAhead(4, 9), end: daysAhead(4, 10) };
    const again = held(t, first.key);
    await expect(
      bookSlot(db(), { actor, org, placement: crew(org, slot), incident, now: Date.now(), idempotencyKey: again }),
    ).rejects.toBeInstanceOf(KeyTaken);
    expect(again.claimed).toBeUndefined();
    expect(await recordOf(first)).toMatchObject(outcome);
    expect(await db().select().from(incidents).where(eq(incidents.orgId, t.orgId))).toEqual([]);
    // The same record answers a second outcome's attempt, in the same round trip.
    expect(await recordOutcome(db(), held(t, first.key), { ...outcome, body: "[]" })).toMatchObject({
      stored: false,
      record: { body: "{}", requestHash: "hash" },
    });
  });

  it("an earlier batch's claim that lapsed and was taken over: the booking stands, unrecorded", async () => {
    const t = await openTenant("Lapsed");
    const org = await orgOf(t);
    const key = held(t);
    const contact = createContactBody().parse({ firstName: "Bo", accountId: "acct_none" });
    // A batch that wrote nothing still claims the key (as a refused change does).
    expect(
      await createContact(db(), {
        actor,
        orgId: t.orgId,
        country: "US",
        contact,
        now: Date.now(),
        idempotencyKey: key,
      }),
    ).toBeNull();
    expect(key.claimed).toBe(true);
    await db().update(idempotencyKeys).set({ status: 200, body: "{}" }).where(eq(idempotencyKeys.key, key.key));
    const slot = { start: daysAhead(4, 9), end: daysAhead(4, 10) };
    const booked = (
      await bookSlot(db(), { actor, org, placement: crew(org, slot), incident, now: Date.now(), idempotencyKey: key })
    ).written!;
    expect(booked.recorded).toBe(false);
    expect(JSON.parse(booked.body).appointment.remaining).toBe(0);
    expect((await recordOf(key))?.body).toBe("{}");
    expect(await db().select().from(incidents).where(eq(incidents.orgId, t.orgId))).toHaveLength(1);
  });

  it("a lapsed record is taken over by the claim in the batch", async () => {
    const t = await openTenant("Expired");
    const org = await orgOf(t);
    const old = { ...held(t), claimedAt: Date.now() - 25 * HOUR };
    expect(await recordOutcome(db(), old, { status: 200, contentType: "application/json", body: "{}" })).toEqual({
      stored: true,
    });
    const key = held(t, old.key);
    const slot = { start: daysAhead(5, 9), end: daysAhead(5, 10) };
    const booked = (
      await bookSlot(db(), { actor, org, placement: crew(org, slot), incident, now: Date.now(), idempotencyKey: key })
    ).written!;
    expect(booked.recorded).toBe(true);
    expect(await recordOf(key)).toMatchObject({ status: 200, body: booked.body, claimedAt: key.claimedAt });
  });
});
