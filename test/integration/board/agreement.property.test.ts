// The board agrees with availability (docs/api.md, "The dispatch board"): on
// random orgs in random zones — technicians with their own hours or the
// org's, days off, skills, inactive ones — with visits of two services
// booked, held and cancelled through the API on one local day, a start of
// that day is offered by available-appointments exactly when some row of
// GET /board has a technician on duty for the whole visit (one of their
// `duty` intervals) and free for its span (no visit or hold of the row
// occupying it, buffers included), and its `remaining` is how many rows do.
// The candidate starts are computed here, by Temporal, from the schedule.
import fc from "fast-check";
import { Temporal } from "temporal-polyfill";
import { describe, expect, it } from "vitest";
import { storeSchedule } from "../../../src/db/orgs";
import type { Interval } from "../../../src/scheduling/schedule";
import { addService, addTechnician } from "../../support/catalogue";
import { call } from "../../support/request";
import { dayHours, everyDay, weeklyHours, ZONES } from "../../support/schedules";
import { db, newTenant, type Tenant } from "../../support/tenants";
import { MINUTE } from "../../support/time";

const WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;

const serviceShape = fc.record({
  durationMinutes: fc.constantFrom(30, 60, 90, 150),
  bufferMinutes: fc.constantFrom(0, 0, 15, 30, 60),
  licensed: fc.boolean(),
});

const scenario = fc.record({
  timeZone: fc.constantFrom(...ZONES),
  slotMinutes: fc.constantFrom(30, 60),
  capacity: fc.integer({ min: 1, max: 2 }),
  hours: fc.oneof(fc.constant(everyDay(["08:00", "17:00"])), weeklyHours),
  daysAhead: fc.integer({ min: 1, max: 4 }),
  services: fc.tuple(serviceShape, serviceShape),
  technicians: fc.array(
    fc.record({
      ownHours: fc.option(dayHours, { nil: null }),
      offThatDay: fc.boolean(),
      licensed: fc.boolean(),
      active: fc.boolean(),
    }),
    { minLength: 1, maxLength: 4 },
  ),
  writes: fc.array(
    fc.record({ kind: fc.constantFrom("book", "book", "hold", "cancel"), service: fc.nat(1), pick: fc.nat() }),
    { maxLength: 8 },
  ),
});

interface Row {
  technician: { id: string } | null;
  duty: { start: string; end: string }[];
  visits: { id: string; serviceId: string | null; appointment: { start: string; end: string } }[];
  holds: { start: string; end: string; serviceId: string | null }[];
}

const api = (t: Tenant, op: string, body: object) => call(t, `/api/v1/ai-agent/${op}`, { body });

/** The slot starts of local `date` under the weekly hours, by Temporal ("compatible"), as epoch ms. */
function gridOf(date: Temporal.PlainDate, hours: Interval[], slotMinutes: number, timeZone: string): number[] {
  const instant = (hhmm: string) =>
    hhmm === "24:00"
      ? date.add({ days: 1 }).toZonedDateTime({ timeZone }).epochMilliseconds
      : date.toZonedDateTime({ timeZone, plainTime: Temporal.PlainTime.from(hhmm) }).epochMilliseconds;
  return hours.flatMap(([open, close]) => {
    const starts: number[] = [];
    for (let s = instant(open); s + slotMinutes * MINUTE <= instant(close); s += slotMinutes * MINUTE) starts.push(s);
    return starts;
  });
}

describe("the board agrees with available-appointments (property)", () => {
  it("a start is offered exactly when some row has a technician on duty and free for the whole visit", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const t = await newTenant();
        const localToday = Temporal.Now.plainDateISO(s.timeZone);
        const date = localToday.add({ days: s.daysAhead });
        const day = date.toString();
        await storeSchedule(db(), t.orgId, {
          timeZone: s.timeZone,
          slotMinutes: s.slotMinutes,
          capacity: s.capacity,
          minNoticeMinutes: 0,
          weeklyHours: s.hours,
        });
        const services: Awaited<ReturnType<typeof addService>>[] = [];
        for (const [i, shape] of s.services.entries())
          services.push(
            await addService(t, {
              name: `Service ${i}`,
              durationMinutes: shape.durationMinutes,
              bufferMinutes: shape.bufferMinutes,
              skills: shape.licensed ? ["licence"] : [],
            }),
          );
        const technicians: Awaited<ReturnType<typeof addTechnician>>[] = [];
        for (const [i, tech] of s.technicians.entries())
          technicians.push(
            await addTechnician(t, {
              name: `Tech ${i}`,
              weeklyHours: tech.ownHours && everyDay(...tech.ownHours),
              daysOff: tech.offThatDay ? [day] : [],
              skills: tech.licensed ? ["licence"] : [],
              active: tech.active,
            }),
          );
        const dayStart = date.toZonedDateTime({ timeZone: s.timeZone }).epochMilliseconds;
        const dayEnd = date.add({ days: 1 }).toZonedDateTime({ timeZone: s.timeZone }).epochMilliseconds;
        const offered = async (serviceId: string) => {
          const res = await api(t, "available-appointments", {
            dateTime: new Date(dayStart).toISOString(),
            limit: 100,
            serviceId,
          });
          expect(res.status, res.text).toBe(200);
          return (res.body.slots as { start: string; remaining: number }[]).filter(
            (slot) => Date.parse(slot.start) < dayEnd,
          );
        };

        // Visits and holds of that day, through the API.
        const booked: string[] = [];
        for (const write of s.writes) {
          const service = services[write.service]!;
          if (write.kind === "cancel") {
            const id = booked[write.pick % Math.max(1, booked.length)];
            if (id) await call(t, `/api/v1/incidents/${id}/cancel`, { body: {} });
            continue;
          }
          const slots = await offered(service.id);
          if (slots.length === 0) continue;
          const dateTime = slots[write.pick % slots.length]!.start;
          if (write.kind === "hold") {
            const res = await api(t, "hold-slot", { dateTime, serviceId: service.id, holdMinutes: 15 });
            expect(res.status, res.text).toBe(200);
          } else {
            const res = await api(t, "create-incident", {
              dateTime,
              serviceId: service.id,
              clientName: "Prop",
              insectName: "ants",
            });
            expect(res.status, res.text).toBe(200);
            booked.push(res.body.id);
          }
        }

        const board = await call(t, `/api/v1/board?date=${day}`);
        expect(board.status, board.text).toBe(200);
        const rows = board.body.rows as Row[];
        const bufferOf = (serviceId: string | null) =>
          (services.find((x) => x.id === serviceId)?.bufferMinutes ?? 0) * MINUTE;
        const weekday = WEEKDAYS[date.dayOfWeek - 1]!;
        const grid = gridOf(date, s.hours[weekday], s.slotMinutes, s.timeZone);

        for (const service of services) {
          const span = (service.durationMinutes + service.bufferMinutes) * MINUTE;
          const length = service.durationMinutes * MINUTE;
          const onDuty = (row: Row, start: number) =>
            row.duty.some((d) => Date.parse(d.start) <= start && start + length <= Date.parse(d.end));
          const occupied = (row: Row) =>
            [
              ...row.visits.map((v) => ({ from: v.appointment.start, to: v.appointment.end, serviceId: v.serviceId })),
              ...row.holds.map((h) => ({ from: h.start, to: h.end, serviceId: h.serviceId })),
            ].map(({ from, to, serviceId }) => ({ from: Date.parse(from), to: Date.parse(to) + bufferOf(serviceId) }));
          const crew = rows.length === 1 && rows[0]!.technician === null;
          let remainingAt: (start: number) => number;
          if (crew) {
            // Crew mode: one row, the org's hours; capacity less the most visits and holds at one instant of the span.
            const [row] = rows as [Row];
            remainingAt = (start) => {
              if (!onDuty(row, start)) return 0;
              const items = occupied(row).filter((o) => o.from < start + span && o.to > start);
              const instants = [start, ...items.map((o) => o.from).filter((x) => x > start)];
              const peak = Math.max(...instants.map((x) => items.filter((o) => o.from <= x && o.to > x).length));
              return Math.max(0, s.capacity - peak);
            };
          } else {
            // The rows whose technician may do the service (the board shows no skills: the test knows them).
            const able = rows.filter((row) => {
              const tech = technicians.find((x) => x.id === row.technician?.id);
              return tech !== undefined && service.skills.every((skill) => tech.skills.includes(skill));
            });
            const free = (row: Row, start: number) =>
              occupied(row).every((o) => !(o.from < start + span && o.to > start));
            remainingAt = (start) => able.filter((row) => onDuty(row, start) && free(row, start)).length;
          }
          const expected = grid
            .map((start) => ({ start: new Date(start).toISOString(), remaining: remainingAt(start) }))
            .filter((slot) => slot.remaining > 0);
          const listed = (await offered(service.id)).map(({ start, remaining }) => ({ start, remaining }));
          expect(listed, JSON.stringify({ day, service, rows })).toEqual(expected);
        }
      }),
      { seed: 36_2026, numRuns: 30 },
    );
  }, 180_000);
});
