// Scheduling's consistency (docs/api.md, "Book") over HTTP with real D1, on
// random schedules: with no writes in between, a slot start is listed by
// available-appointments ⇔ is-booking-available says available ⇔
// create-incident at it succeeds.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { storeSchedule } from "../../../src/db/orgs";
import { call } from "../../support/request";
import { weeklyHours, ZONES } from "../../support/schedules";
import { db, newTenant, type Tenant } from "../../support/tenants";
import { MINUTE } from "../../support/time";

const api = (tenant: Tenant, op: string, body: object) => call(tenant, `/api/v1/ai-agent/${op}`, { body });

const scenario = fc.record({
  schedule: fc.record({
    timeZone: fc.constantFrom(...ZONES),
    slotMinutes: fc.constantFrom(30, 60, 90),
    capacity: fc.integer({ min: 1, max: 2 }),
    minNoticeMinutes: fc.constantFrom(0, 30, 120),
    horizonDays: fc.integer({ min: 1, max: 4 }),
    weeklyHours,
  }),
  prebook: fc.array(fc.nat(), { maxLength: 4 }),
  instants: fc.array(
    fc.oneof(fc.record({ listed: fc.nat() }), fc.record({ quarter: fc.integer({ min: -8, max: 5 * 96 }) })),
    { minLength: 3, maxLength: 6 },
  ),
});

describe("listed ⇔ available ⇔ bookable, over HTTP (property)", () => {
  it("holds on random schedules, bookings and instants", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ schedule, prebook, instants }) => {
        const tenant = await newTenant();
        await storeSchedule(db(), tenant.orgId, schedule);
        const start = Math.ceil(Date.now() / (15 * MINUTE)) * 15 * MINUTE;
        const listed = (
          await api(tenant, "available-appointments", { dateTime: new Date(start).toISOString(), limit: 30 })
        ).body.slots as { start: string }[];
        for (const pick of prebook) {
          if (listed.length > 0)
            await api(tenant, "create-incident", {
              dateTime: listed[pick % listed.length]!.start,
              clientName: "Pre",
              insectName: "Ants",
            });
        }
        for (const pick of instants) {
          const t =
            "listed" in pick
              ? (listed[pick.listed % Math.max(1, listed.length)]?.start ?? new Date(start).toISOString())
              : new Date(start + pick.quarter * 15 * MINUTE).toISOString();
          // An instant within seconds of a moving edge (now, notice, horizon) could cross it mid-check.
          const now = Date.now();
          const edges = [now, now + schedule.minNoticeMinutes * MINUTE, now + schedule.horizonDays * 1440 * MINUTE];
          if (edges.some((edge) => Math.abs(Date.parse(t) - edge) < 5_000)) continue;

          const first = (await api(tenant, "available-appointments", { dateTime: t, limit: 1 })).body.slots[0];
          const check = await api(tenant, "is-booking-available", { dateTime: t });
          const book = await api(tenant, "create-incident", { dateTime: t, clientName: "Prop", insectName: "Ants" });
          expect(check.status).toBe(200);
          expect([200, 409]).toContain(book.status);
          expect(first?.start === t).toBe(check.body.available);
          expect(book.status === 200).toBe(check.body.available);
          if (book.status === 409) expect(book.body.reason).toBe(check.body.reason);
          else {
            // The slot's service and arrival window are the incident's; its appointment is the slot's times.
            const { serviceId, arrivalWindow, ...times } = check.body.slot;
            expect({ serviceId, arrivalWindow }).toEqual({ serviceId: null, arrivalWindow: null });
            expect(book.body).toMatchObject({ serviceId, arrivalWindow });
            expect(book.body.appointment).toEqual({ ...times, remaining: times.remaining - 1 });
          }
        }
      }),
      { seed: 5_2026, numRuns: 25 },
    );
  }, 120_000);
});
