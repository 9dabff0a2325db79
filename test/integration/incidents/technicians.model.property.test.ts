// Technician mode against a model (docs/api.md, "Services and technicians"):
// random sequences of bookings of three services at three postal codes,
// cancellations, reschedules and racing bookings, run through the app on real
// D1 and against an in-memory model of the technicians' days. One fresh UTC
// org per run, open around the clock with no notice, hourly slots, three
// technicians with different skills and areas. The model predicts every
// answer: which technician a booking gets (eligible, free for the whole span,
// fewest visits that day, then id), which reschedules keep or change their
// technician, and which are refused. After every command: for every service
// and postal code, available-appointments lists exactly the starts the model
// has a technician for (`remaining` exact), is-booking-available agrees on a
// universe start, and no technician has two overlapping visits (checked in SQL).
import { env } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { addService, addTechnician } from "../../support/catalogue";
import { call } from "../../support/request";
import { openTenant, type Tenant } from "../../support/tenants";
import { DAY, HOUR, hoursAhead, iso } from "../../support/time";

const CREATE = "/api/v1/ai-agent/create-incident";
const CHECK = "/api/v1/ai-agent/is-booking-available";
const AVAILABLE = "/api/v1/ai-agent/available-appointments";

interface ServiceModel {
  id: string;
  hours: number;
  bufferHours: number;
  skills: string[];
}

interface TechnicianModel {
  id: string;
  skills: string[];
  prefixes: string[];
}

interface Visit {
  id: string;
  service: number;
  postal: number;
  start: number;
  technician: string;
  status: "scheduled" | "cancelled";
}

const POSTAL_CODES = ["11201", "10001", "90210"];

interface World {
  tenant: Tenant;
  services: ServiceModel[];
  technicians: TechnicianModel[];
  /** The universe of starts: consecutive hours a day or more ahead. */
  starts: number[];
  visits: Visit[];
  log: string[];
}

const occupied = (w: World, v: Visit) => {
  const s = w.services[v.service]!;
  return { start: v.start, end: v.start + (s.hours + s.bufferHours) * HOUR };
};

/** The technicians who may take service `service` at postal code `postal` starting at `start`, in assignment order. */
function order(w: World, service: number, postal: number, start: number, except?: string): string[] {
  const s = w.services[service]!;
  const span = { start, end: start + (s.hours + s.bufferHours) * HOUR };
  const day = Math.floor(start / DAY) * DAY;
  const code = POSTAL_CODES[postal]!;
  const scheduled = w.visits.filter((v) => v.status === "scheduled" && v.id !== except);
  // On duty 00:00–24:00 each day: a visit must end by midnight, inside its day's one interval.
  if (start + s.hours * HOUR > day + DAY) return [];
  return w.technicians
    .filter((t) => s.skills.every((k) => t.skills.includes(k)))
    .filter((t) => t.prefixes.length === 0 || t.prefixes.some((p) => code.startsWith(p)))
    .filter((t) =>
      scheduled.every((v) => {
        if (v.technician !== t.id) return true;
        const o = occupied(w, v);
        return o.end <= span.start || o.start >= span.end;
      }),
    )
    .map((t) => ({
      id: t.id,
      load: scheduled.filter((v) => v.technician === t.id && v.start >= day && v.start < day + DAY).length,
    }))
    .sort((a, b) => a.load - b.load || (a.id < b.id ? -1 : 1))
    .map((t) => t.id);
}

/** Why no technician can take it at all (no visits counted), else fully_booked. */
function refusal(w: World, service: number, postal: number): string {
  const code = POSTAL_CODES[postal]!;
  const covering = w.technicians.filter((t) => t.prefixes.length === 0 || t.prefixes.some((p) => code.startsWith(p)));
  if (covering.length === 0) return "out_of_service_area";
  const skills = w.services[service]!.skills;
  return covering.some((t) => skills.every((k) => t.skills.includes(k))) ? "fully_booked" : "no_qualified_technician";
}

async function expectAvailability(w: World) {
  const from = w.starts[0]!;
  for (let service = 0; service < w.services.length; service++)
    for (let postal = 0; postal < POSTAL_CODES.length; postal++) {
      const body = {
        dateTime: iso(from),
        limit: 8,
        serviceId: w.services[service]!.id,
        postalCode: POSTAL_CODES[postal],
      };
      const res = await call(w.tenant, AVAILABLE, { body });
      expect(res.status, res.text).toBe(200);
      const expected: [string, number][] = [];
      // Anyone eligible at all? Otherwise the list is empty (out of area or unqualified).
      const anyone = refusal(w, service, postal) === "fully_booked";
      for (let t = from; anyone && expected.length < 8; t += HOUR) {
        const n = order(w, service, postal, t).length;
        if (n > 0) expected.push([iso(t), n]);
      }
      const got = res.body.slots.map((x: { start: string; remaining: number }) => [x.start, x.remaining]);
      expect(got, `${w.log.join("\n")}\nservice ${service} postal ${POSTAL_CODES[postal]}`).toEqual(expected);
    }
}

async function expectNoOverlap(w: World) {
  const { results } = await env.DB.prepare(
    "SELECT a.id AS a, b.id AS b FROM incidents a JOIN incidents b ON a.org_id = b.org_id AND a.technician_id = b.technician_id AND a.id < b.id WHERE a.org_id = ? AND a.status = 'scheduled' AND b.status = 'scheduled' AND a.starts_at < b.occupied_until AND b.starts_at < a.occupied_until",
  )
    .bind(w.tenant.orgId)
    .all();
  expect(results, w.log.join("\n")).toEqual([]);
}

type Command =
  | { kind: "book"; service: number; postal: number; slot: number }
  | { kind: "race"; service: number; postal: number; slot: number; n: number }
  | { kind: "cancel"; visit: number }
  | { kind: "reschedule"; visit: number; slot: number }
  | { kind: "check"; service: number; postal: number; slot: number };

async function book(w: World, service: number, postal: number, start: number) {
  return call(w.tenant, CREATE, {
    body: {
      dateTime: iso(start),
      clientName: "Model Caller",
      insectName: "bugs",
      serviceId: w.services[service]!.id,
      postalCode: POSTAL_CODES[postal],
    },
  });
}

async function run(w: World, c: Command) {
  switch (c.kind) {
    case "book": {
      const start = w.starts[c.slot % w.starts.length]!;
      const expected = order(w, c.service, c.postal, start);
      w.log.push(`book service ${c.service} at ${POSTAL_CODES[c.postal]} ${iso(start)} → ${expected[0] ?? "409"}`);
      const res = await book(w, c.service, c.postal, start);
      if (expected.length === 0) {
        expect([res.status, res.body.reason], w.log.join("\n")).toEqual([409, refusal(w, c.service, c.postal)]);
        return;
      }
      expect(res.status, `${w.log.join("\n")}\n${res.text}`).toBe(200);
      expect(res.body.technicianId, w.log.join("\n")).toBe(expected[0]);
      expect(res.body.appointment.remaining).toBe(expected.length - 1);
      w.visits.push({
        id: res.body.id,
        service: c.service,
        postal: c.postal,
        start,
        technician: expected[0]!,
        status: "scheduled",
      });
      return;
    }
    case "race": {
      const start = w.starts[c.slot % w.starts.length]!;
      const expected = order(w, c.service, c.postal, start);
      w.log.push(
        `race ${c.n} × service ${c.service} at ${POSTAL_CODES[c.postal]} ${iso(start)} → ${expected.length} places`,
      );
      const results = await Promise.all(Array.from({ length: c.n }, () => book(w, c.service, c.postal, start)));
      const won = results.filter((r) => r.status === 200);
      expect(won.length, w.log.join("\n")).toBe(Math.min(c.n, expected.length));
      expect(new Set(won.map((r) => r.body.technicianId)).size).toBe(won.length);
      for (const r of results.filter((x) => x.status !== 200))
        expect([r.status, r.body.reason]).toEqual([
          409,
          expected.length === 0 ? refusal(w, c.service, c.postal) : "fully_booked",
        ]);
      for (const r of won)
        w.visits.push({
          id: r.body.id,
          service: c.service,
          postal: c.postal,
          start,
          technician: r.body.technicianId,
          status: "scheduled",
        });
      return;
    }
    case "cancel": {
      const visit = w.visits[c.visit % Math.max(1, w.visits.length)];
      if (!visit) return;
      w.log.push(`cancel ${visit.id}`);
      const res = await call(w.tenant, `/api/v1/incidents/${visit.id}/cancel`, { body: {} });
      expect(res.status, res.text).toBe(200);
      visit.status = "cancelled";
      return;
    }
    case "reschedule": {
      const visit = w.visits[c.visit % Math.max(1, w.visits.length)];
      if (!visit) return;
      const start = w.starts[c.slot % w.starts.length]!;
      const res = await call(w.tenant, `/api/v1/incidents/${visit.id}/reschedule`, { body: { dateTime: iso(start) } });
      if (visit.status === "cancelled") {
        w.log.push(`reschedule cancelled ${visit.id} → 409`);
        expect([res.status, res.body.reason]).toEqual([409, "cancelled"]);
        return;
      }
      if (start === visit.start) {
        w.log.push(`reschedule ${visit.id} to its own start`);
        expect(res.status, res.text).toBe(200);
        return;
      }
      const candidates = order(w, visit.service, visit.postal, start, visit.id);
      const expected = candidates.includes(visit.technician) ? visit.technician : candidates[0];
      w.log.push(`reschedule ${visit.id} to ${iso(start)} → ${expected ?? "409"}`);
      if (!expected) {
        expect([res.status, res.body.reason], w.log.join("\n")).toEqual([409, "fully_booked"]);
        return;
      }
      expect(res.status, `${w.log.join("\n")}\n${res.text}`).toBe(200);
      expect(res.body.technicianId, w.log.join("\n")).toBe(expected);
      visit.start = start;
      visit.technician = expected;
      return;
    }
    case "check": {
      const start = w.starts[c.slot % w.starts.length]!;
      const n = order(w, c.service, c.postal, start).length;
      const res = await call(w.tenant, CHECK, {
        body: { dateTime: iso(start), serviceId: w.services[c.service]!.id, postalCode: POSTAL_CODES[c.postal] },
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body.available, w.log.join("\n")).toBe(n > 0);
      expect(res.body.slot.remaining).toBe(n);
      return;
    }
  }
}

const service = fc.nat({ max: 2 });
const postal = fc.nat({ max: 2 });
const slot = fc.nat({ max: 5 });
const command: fc.Arbitrary<Command> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant("book" as const), service, postal, slot }), weight: 5 },
  {
    arbitrary: fc.record({
      kind: fc.constant("race" as const),
      service,
      postal,
      slot,
      n: fc.integer({ min: 2, max: 4 }),
    }),
    weight: 2,
  },
  { arbitrary: fc.record({ kind: fc.constant("cancel" as const), visit: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant("reschedule" as const), visit: fc.nat(), slot }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant("check" as const), service, postal, slot }), weight: 1 },
);

describe("technician mode against a model (property)", () => {
  it("book, race, cancel and reschedule: the model's technician every time, exact places, never an overlap", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 48 }),
        fc.array(command, { minLength: 4, maxLength: 18 }),
        async (offset, commands) => {
          const tenant = await openTenant("Technician Model Org");
          // Services: 1 hour; 2 hours + 1 hour buffer; 3 hours needing a licence.
          const services: ServiceModel[] = [];
          for (const [name, hours, bufferHours, skills] of [
            ["One hour", 1, 0, []],
            ["Two hours", 2, 1, []],
            ["Three hours", 3, 0, ["licence"]],
          ] as const) {
            const row = await addService(tenant, {
              name,
              durationMinutes: hours * 60,
              bufferMinutes: bufferHours * 60,
              skills: [...skills],
            });
            services.push({ id: row.id, hours, bufferHours, skills: [...skills] });
          }
          // Ids in a fixed order, so that ties follow it; Ann covers 112 and holds the licence, Ben covers 1, Cy everywhere.
          const tag = crypto.randomUUID().slice(0, 8);
          const technicians: TechnicianModel[] = [
            { id: `tech_a${tag}`, skills: ["licence"], prefixes: ["112"] },
            { id: `tech_b${tag}`, skills: [], prefixes: ["1"] },
            { id: `tech_c${tag}`, skills: [], prefixes: [] },
          ];
          for (const t of technicians)
            await addTechnician(tenant, { id: t.id, name: t.id, skills: t.skills, postalCodes: t.prefixes });
          const first = hoursAhead(24 + offset);
          const w: World = {
            tenant,
            services,
            technicians,
            starts: Array.from({ length: 6 }, (_, i) => first + i * HOUR),
            visits: [],
            log: [],
          };
          for (const c of commands) {
            await run(w, c);
            await expectNoOverlap(w);
            await expectAvailability(w);
          }
        },
      ),
      { seed: 20261125, numRuns: 25 },
    );
  }, 600_000);
});
