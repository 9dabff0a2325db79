// `dates check` and `dates repair` (src/db/repair.ts): instants outside the
// years 0001–9999, written the way the code before the range check wrote them
// (createLead with the millis of "9999-12-31T23:00:00-14:00"), are found in the
// lead's column, its event and its recorded Idempotency-Key answer, and set to
// null in one batch; anything else is reported and left alone.

import { env } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { events, idempotencyKeys, leads } from "../../../drizzle/schema";
import { createDb } from "../../../src/db/client";
import { actorOf } from "../../../src/db/events";
import { createLead } from "../../../src/db/leads";
import { findOutOfRangeDates, repairOutOfRangeDates } from "../../../src/db/repair";
import { MAX_INSTANT, MIN_INSTANT } from "../../../src/lib/datetime";
import { createLeadBody } from "../../../src/schemas/leads";
import { everyMatching, wrapD1 } from "../../support/d1";
import { db, newTenant } from "../../support/tenants";

/** Who makes these writes: nobody with a key, as the admin CLI. */
const actor = actorOf("cli");

/** "9999-12-31T23:00:00-14:00" and "0001-01-01T00:00:00+00:01", as the old parser read them. */
const YEAR_10000 = MAX_INSTANT + 1 + 13 * 3_600_000;
const YEAR_0000 = MIN_INSTANT - 60_000;
const YEAR_10000_ISO = "+010000-01-01T13:00:00.000Z";
const YEAR_0000_ISO = "0000-12-31T23:59:00.000Z";

/** A lead stored by the write path with a raw estimatedCloseDate (and an Idempotency-Key, if given): its id and event id. */
async function oldLead(orgId: string, fields: { estimatedCloseDate: number | null; title?: string }, key?: string) {
  const now = Date.now();
  const lead = { ...createLeadBody().parse({ title: fields.title }), estimatedCloseDate: fields.estimatedCloseDate };
  const held = key ? { orgId, key, claimedAt: now, requestHash: "hash" } : undefined;
  const written = await createLead(db(), { actor, orgId, country: "US", lead, now, idempotencyKey: held });
  const { id } = JSON.parse(written.body) as { id: string };
  return { id, eventId: written.event!.id };
}

const bodyOf = async (eventId: string) =>
  JSON.parse((await db().select().from(events).where(eq(events.id, eventId)))[0]!.body) as {
    data: Record<string, unknown>;
  };

const closeDateOf = async (id: string) =>
  (await db().select({ value: leads.estimatedCloseDate }).from(leads).where(eq(leads.id, id)))[0]!.value;

describe("findOutOfRangeDates and repairOutOfRangeDates", () => {
  it("report, then null, the lead's column, its event and its recorded answer, and nothing else", async () => {
    const { orgId } = await newTenant();
    const late = await oldLead(orgId, { estimatedCloseDate: YEAR_10000 }, "key-late");
    const early = await oldLead(orgId, { estimatedCloseDate: YEAR_0000 });
    const edge = await oldLead(orgId, { estimatedCloseDate: MAX_INSTANT });
    // Free text that reads like one: reported, never changed.
    const text = await oldLead(orgId, { estimatedCloseDate: null, title: YEAR_10000_ISO });
    const before = await bodyOf(late.eventId);
    expect(before.data.estimatedCloseDate).toBe(YEAR_10000_ISO);

    const leadsFirst = [late, early].sort((a, b) => (a.id < b.id ? -1 : 1));
    const finding = (table: string, id: string, field: string, value: number | string, repairable = true) => ({
      table,
      id,
      orgId,
      field,
      value,
      repairable,
    });
    const expected = [
      ...leadsFirst.map((lead) =>
        finding("leads", lead.id, "estimated_close_date", lead === late ? YEAR_10000 : YEAR_0000),
      ),
      ...[late, early, text]
        .sort((a, b) => (a.eventId < b.eventId ? -1 : 1))
        .map((lead) =>
          lead === text
            ? finding("events", lead.eventId, "$.data.title", YEAR_10000_ISO, false)
            : finding(
                "events",
                lead.eventId,
                "$.data.estimatedCloseDate",
                lead === late ? YEAR_10000_ISO : YEAR_0000_ISO,
              ),
        ),
      finding("idempotency_keys", "key-late", "$.estimatedCloseDate", YEAR_10000_ISO),
    ];
    expect(await findOutOfRangeDates(db(), orgId)).toEqual(expected);
    // The check changed nothing.
    expect(await closeDateOf(late.id)).toBe(YEAR_10000);

    const repaired = await repairOutOfRangeDates(db(), orgId);
    const changes = expected
      .filter((f) => f.repairable)
      .map(({ table, id, field, value }) => ({ table, id, orgId, field, oldValue: value, newValue: null }));
    expect(repaired).toEqual({
      changes,
      eventIds: changes.filter((c) => c.table === "events").map((c) => c.id),
      unrepaired: [finding("events", text.eventId, "$.data.title", YEAR_10000_ISO, false)],
    });

    expect(await closeDateOf(late.id)).toBeNull();
    expect(await closeDateOf(early.id)).toBeNull();
    expect(await closeDateOf(edge.id)).toBe(MAX_INSTANT);
    // Only the member changed: the rest of the body reads as it did, in the same order.
    const after = await bodyOf(late.eventId);
    expect(JSON.stringify(after)).toBe(
      JSON.stringify({ ...before, data: { ...before.data, estimatedCloseDate: null } }),
    );
    expect((await bodyOf(text.eventId)).data.title).toBe(YEAR_10000_ISO);
    const [answer] = await db()
      .select({ body: idempotencyKeys.body })
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.orgId, orgId), eq(idempotencyKeys.key, "key-late")));
    expect(JSON.parse(answer!.body!)).toEqual(after.data);

    // A second run finds only what it leaves alone, and changes nothing.
    expect(await findOutOfRangeDates(db(), orgId)).toEqual(repaired.unrepaired);
    expect(await repairOutOfRangeDates(db(), orgId)).toEqual({
      changes: [],
      eventIds: [],
      unrepaired: repaired.unrepaired,
    });
  });

  it("keeps to the org it is given, and sees every org without one", async () => {
    const a = await newTenant();
    const b = await newTenant();
    const leadA = await oldLead(a.orgId, { estimatedCloseDate: YEAR_10000 });
    const leadB = await oldLead(b.orgId, { estimatedCloseDate: YEAR_0000 });
    expect((await repairOutOfRangeDates(db(), a.orgId)).eventIds).toEqual([leadA.eventId]);
    expect(await closeDateOf(leadB.id)).toBe(YEAR_0000);
    const everywhere = await findOutOfRangeDates(db());
    expect(everywhere.map((f) => f.id)).toEqual(expect.arrayContaining([leadB.id, leadB.eventId]));
    expect(everywhere.map((f) => f.orgId)).not.toContain(a.orgId);
  });

  it("changes nothing when its batch fails part-way (one batch: all or nothing)", async () => {
    const { orgId } = await newTenant();
    const lead = await oldLead(orgId, { estimatedCloseDate: YEAR_10000 });
    // The lead's column is nulled first, then the batch fails before its event is.
    const wrapped = wrapD1(env.DB, { midBatch: { match: everyMatching(/json_set/), after: 1 } });
    await expect(repairOutOfRangeDates(createDb(wrapped.db), orgId)).rejects.toThrow();
    expect(wrapped.failed().map((trip) => trip.sql.length)).toEqual([2]);
    expect(await closeDateOf(lead.id)).toBe(YEAR_10000);
    expect((await bodyOf(lead.eventId)).data.estimatedCloseDate).toBe(YEAR_10000_ISO);
  });
});
