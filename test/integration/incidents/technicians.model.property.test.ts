// Technician mode against a model (docs/api.md, "Services and technicians"
// and "Holding a slot"): random sequences of bookings of three services at
// three postal codes, cancellations, reschedules, racing bookings and holds,
// holds, releases, the clock moving up to or past a hold's expiry, and
// bookings naming a hold (for its visit, another start, service or postal
// code, lapsed, or unknown), run through the app on real D1 and against an
// in-memory model of the technicians' days. One fresh UTC org per run, open
// around the clock with no notice, hourly slots, three technicians with
// different skills and areas. The app's clock is stopped at the run's start
// and moves only by the model's clock steps (minutes, against starts a day
// ahead); no cron sweep runs. The model predicts every answer: which
// technician a booking or a hold gets (eligible, free of visits and live holds
// for the whole span, fewest visits — not holds — that day, then id), that a
// booking on a live hold gets the held technician, which reschedules keep or
// change their technician, and which are refused. After every command: for
// every service and postal code, available-appointments lists exactly the
// starts the model has a technician for (`remaining` exact, live holds
// counted), is-booking-available agrees on a universe start, and no technician
// has two overlapping visits or live holds (checked in SQL).
import { env } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { addService, addTechnician } from "../../support/catalogue";
import type { ReadResponse } from "../../support/http";
import { call } from "../../support/request";
import { openTenant, type Tenant } from "../../support/tenants";
import { DAY, HOUR, hoursAhead, iso, MINUTE } from "../../support/time";
import { AVAILABLE, CHECK, CREATE, HOLD, RELEASE, type StoppedClock, stoppedClock } from "./helpers";

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

interface HoldModel {
  id: string;
  service: number;
  postal: number;
  start: number;
  technician: string;
  /** Its expiresAt (ms): live while the clock is before it. */
  expires: number;
  /** Released or used: lapsed whatever the clock says. */
  status: "held" | "released" | "used";
}

const POSTAL_CODES = ["11201", "10001", "90210"];

interface World {
  tenant: Tenant;
  services: ServiceModel[];
  technicians: TechnicianModel[];
  /** The universe of starts: consecutive hours a day or more ahead. */
  starts: number[];
  visits: Visit[];
  holds: HoldModel[];
  /** The app's clock: stopped, moved forward only by `expire`. */
  clock: StoppedClock;
  log: string[];
}

const occupied = (w: World, v: Visit | HoldModel) => {
  const s = w.services[v.service]!;
  return { start: v.start, end: v.start + (s.hours + s.bufferHours) * HOUR };
};

/** A hold that still occupies its place: not released, not used, not expired. */
const live = (w: World, h: HoldModel) => h.status === "held" && w.clock.now < h.expires;

/** The technicians who may take service `service` at postal code `postal` starting at `start`, in assignment order. */
function order(w: World, service: number, postal: number, start: number, except?: string): string[] {
  const s = w.services[service]!;
  const span = { start, end: start + (s.hours + s.bufferHours) * HOUR };
  const day = Math.floor(start / DAY) * DAY;
  const code = POSTAL_CODES[postal]!;
  const scheduled = w.visits.filter((v) => v.status === "scheduled" && v.id !== except);
  // A technician is busy with visits and live holds alike; their load that day counts visits only.
  const occupying = [...scheduled, ...w.holds.filter((h) => live(w, h))];
  // On duty 00:00–24:00 each day: a visit must end by midnight, inside its day's one interval.
  if (start + s.hours * HOUR > day + DAY) return [];
  return w.technicians
    .filter((t) => s.skills.every((k) => t.skills.includes(k)))
    .filter((t) => t.prefixes.length === 0 || t.prefixes.some((p) => code.startsWith(p)))
    .filter((t) =>
      occupying.every((v) => {
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

/** No technician has two scheduled visits or live holds occupying one instant. */
async function expectNoOverlap(w: World) {
  const { results } = await env.DB.prepare(
    `WITH occupying AS (
       SELECT id, technician_id, starts_at, occupied_until FROM incidents WHERE org_id = ? AND status = 'scheduled'
       UNION ALL
       SELECT id, technician_id, starts_at, occupied_until FROM holds WHERE org_id = ? AND expires_at > ?
     )
     SELECT a.id AS a, b.id AS b FROM occupying a JOIN occupying b ON a.technician_id = b.technician_id AND a.id < b.id
     WHERE a.starts_at < b.occupied_until AND b.starts_at < a.occupied_until`,
  )
    .bind(w.tenant.orgId, w.tenant.orgId, w.clock.now)
    .all();
  expect(results, w.log.join("\n")).toEqual([]);
}

type Command =
  | { kind: "book"; service: number; postal: number; slot: number }
  /** `holds`: every other racer holds instead of booking. */
  | { kind: "race"; service: number; postal: number; slot: number; n: number; holds: boolean }
  | { kind: "cancel"; visit: number }
  | { kind: "reschedule"; visit: number; slot: number }
  | { kind: "check"; service: number; postal: number; slot: number }
  | { kind: "hold"; service: number; postal: number; slot: number; minutes?: number }
  /** `hold` picks among the live holds or all of them; none: an id no org has. */
  | { kind: "release"; hold?: number; among: "live" | "any" }
  /** To `by` ms from a live hold's expiry: −1 min or −1 ms keep it live, 0 and after lapse it. */
  | { kind: "expire"; hold: number; by: number }
  /** create-incident naming a hold, for its very visit or another start, service or postal code. */
  | { kind: "bookHold"; hold?: number; among: "live" | "any"; other: "none" | "start" | "service" | "postal" };

async function book(w: World, service: number, postal: number, start: number, holdId?: string) {
  return call(w.tenant, CREATE, {
    body: {
      dateTime: iso(start),
      clientName: "Model Caller",
      insectName: "bugs",
      serviceId: w.services[service]!.id,
      postalCode: POSTAL_CODES[postal],
      ...(holdId === undefined ? {} : { holdId }),
    },
  });
}

async function hold(w: World, service: number, postal: number, start: number, minutes?: number) {
  return call(w.tenant, HOLD, {
    body: {
      dateTime: iso(start),
      serviceId: w.services[service]!.id,
      postalCode: POSTAL_CODES[postal],
      ...(minutes === undefined ? {} : { holdMinutes: minutes }),
    },
  });
}

/** A 200 of hold-slot for this visit, held `minutes` by `technician` with `remaining` places left; the model gains it. */
function expectHeld(
  w: World,
  res: ReadResponse,
  visit: { service: number; postal: number; start: number },
  minutes: number,
  technician: string,
  remaining: number,
) {
  const { service, postal, start } = visit;
  const end = start + w.services[service]!.hours * HOUR;
  expect(res.status, `${w.log.join("\n")}\n${res.text}`).toBe(200);
  expect(res.body, w.log.join("\n")).toEqual({
    holdId: expect.stringMatching(/^hold_[0-9a-z]{26}$/),
    expiresAt: iso(w.clock.now + minutes * MINUTE),
    slot: {
      start: iso(start),
      end: iso(end),
      localStart: `${iso(start).slice(0, 19)}+00:00`,
      localEnd: `${iso(end).slice(0, 19)}+00:00`,
      remaining,
      serviceId: w.services[service]!.id,
      arrivalWindow: null,
    },
    technicianId: technician,
  });
  w.holds.push({
    id: res.body.holdId,
    service,
    postal,
    start,
    technician,
    expires: w.clock.now + minutes * MINUTE,
    status: "held",
  });
}

/**
 * A hold of the model (`among` its live ones, or all) by index: "unknown" when
 * none is asked for (the command names an id no org has), undefined when the
 * model has none to pick (the command does nothing).
 */
function pickHold(w: World, pick: number | undefined, among: "live" | "any") {
  if (pick === undefined) return "unknown" as const;
  const candidates = among === "live" ? w.holds.filter((h) => live(w, h)) : w.holds;
  return candidates[pick % Math.max(1, candidates.length)];
}

const holdState = (w: World, h: HoldModel) =>
  live(w, h) ? `live ${(h.expires - w.clock.now) / 1000}s more` : h.status === "held" ? "expired" : h.status;

const UNKNOWN_HOLD = "hold_0000000000zzzzzzzzzzzzzzzz";

/** 422 validation_failed with one error on holdId. */
function expectHoldRefused(w: World, res: ReadResponse, code: "hold_mismatch" | "not_found") {
  expect([res.status, res.body?.code], `${w.log.join("\n")}\n${res.text}`).toEqual([422, "validation_failed"]);
  expect(res.body.errors).toHaveLength(1);
  expect(res.body.errors[0]).toMatchObject({ path: "holdId", code });
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
        `race ${c.n} × service ${c.service}${c.holds ? " (holds and bookings)" : ""} at ${POSTAL_CODES[c.postal]} ${iso(start)} → ${expected.length} places`,
      );
      const holding = (i: number) => c.holds && i % 2 === 1;
      const results = await Promise.all(
        Array.from({ length: c.n }, (_, i) =>
          holding(i) ? hold(w, c.service, c.postal, start, 2) : book(w, c.service, c.postal, start),
        ),
      );
      const won = results.filter((r) => r.status === 200);
      expect(won.length, w.log.join("\n")).toBe(Math.min(c.n, expected.length));
      // Each winner has one of the free technicians, a different one.
      const technicians = won.map((r) => r.body.technicianId);
      expect(new Set(technicians).size).toBe(won.length);
      for (const t of technicians) expect(expected).toContain(t);
      for (const r of results.filter((x) => x.status !== 200)) {
        expect([r.status, r.body.reason]).toEqual([
          409,
          expected.length === 0 ? refusal(w, c.service, c.postal) : "fully_booked",
        ]);
        expect(r.body).not.toHaveProperty("holdExpired");
      }
      for (const [i, r] of results.entries()) {
        if (r.status !== 200) continue;
        const visit = { service: c.service, postal: c.postal, start };
        if (!holding(i)) {
          w.visits.push({ id: r.body.id, ...visit, technician: r.body.technicianId, status: "scheduled" });
          continue;
        }
        // A hold's places left depend on which of the others had gone first.
        const left = r.body.slot.remaining;
        expect(left).toBeGreaterThanOrEqual(expected.length - won.length);
        expect(left).toBeLessThan(expected.length);
        expectHeld(w, r, visit, 2, r.body.technicianId, left);
      }
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
    case "hold": {
      const start = w.starts[c.slot % w.starts.length]!;
      const expected = order(w, c.service, c.postal, start);
      w.log.push(
        `hold service ${c.service} at ${POSTAL_CODES[c.postal]} ${iso(start)} for ${c.minutes ?? "(5)"} min → ${expected[0] ?? "409"}`,
      );
      const res = await hold(w, c.service, c.postal, start, c.minutes);
      if (expected.length === 0) {
        expect([res.status, res.body.reason], w.log.join("\n")).toEqual([409, refusal(w, c.service, c.postal)]);
        expect(res.body).not.toHaveProperty("holdExpired");
        return;
      }
      const visit = { service: c.service, postal: c.postal, start };
      expectHeld(w, res, visit, c.minutes ?? 5, expected[0]!, expected.length - 1);
      return;
    }
    case "release": {
      const h = pickHold(w, c.hold, c.among);
      if (!h) return;
      if (h === "unknown") {
        w.log.push("release an unknown hold → 422");
        expectHoldRefused(w, await call(w.tenant, RELEASE, { body: { holdId: UNKNOWN_HOLD } }), "not_found");
        return;
      }
      w.log.push(`release ${h.id} (${holdState(w, h)})`);
      const res = await call(w.tenant, RELEASE, { body: { holdId: h.id } });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({ holdId: h.id, released: true });
      if (live(w, h)) h.status = "released";
      return;
    }
    case "expire": {
      const h = pickHold(w, c.hold, "live");
      if (!h || h === "unknown") return;
      const to = Math.max(w.clock.now, h.expires + c.by);
      w.log.push(`clock +${(to - w.clock.now) / 1000}s: ${h.id} ${c.by >= 0 ? "+" : ""}${c.by} ms from its expiry`);
      w.clock.set(to);
      return;
    }
    case "bookHold": {
      const h = pickHold(w, c.hold, c.among);
      if (!h) return;
      if (h === "unknown") {
        w.log.push("book naming an unknown hold → 422");
        expectHoldRefused(w, await book(w, 0, 0, w.starts[0]!, UNKNOWN_HOLD), "not_found");
        return;
      }
      const service = c.other === "service" ? (h.service + 1) % w.services.length : h.service;
      const postal = c.other === "postal" ? (h.postal + 1) % POSTAL_CODES.length : h.postal;
      const start = c.other === "start" ? w.starts[(w.starts.indexOf(h.start) + 1) % w.starts.length]! : h.start;
      const what = `service ${service} at ${POSTAL_CODES[postal]} ${iso(start)} naming ${h.id} (${holdState(w, h)}, service ${h.service} at ${POSTAL_CODES[h.postal]} ${iso(h.start)}, ${h.technician})`;
      if (live(w, h) && c.other !== "none") {
        w.log.push(`book ${what} → 422 hold_mismatch`);
        expectHoldRefused(w, await book(w, service, postal, start, h.id), "hold_mismatch");
        return;
      }
      if (live(w, h)) {
        // The hold's place and technician become the incident's.
        w.log.push(`book ${what} → its place`);
        const res = await book(w, service, postal, start, h.id);
        expect(res.status, `${w.log.join("\n")}\n${res.text}`).toBe(200);
        expect([res.body.technicianId, res.body.holdExpired], w.log.join("\n")).toEqual([h.technician, false]);
        h.status = "used";
        w.visits.push({ id: res.body.id, service, postal, start, technician: h.technician, status: "scheduled" });
        expect(res.body.appointment.remaining, w.log.join("\n")).toBe(order(w, service, postal, start).length);
        return;
      }
      // Lapsed: booked as if it were not named.
      const expected = order(w, service, postal, start);
      w.log.push(`book ${what} → as if not named: ${expected[0] ?? "409"}`);
      const res = await book(w, service, postal, start, h.id);
      if (expected.length === 0) {
        expect([res.status, res.body.reason, res.body.holdExpired], w.log.join("\n")).toEqual([
          409,
          refusal(w, service, postal),
          true,
        ]);
        return;
      }
      expect(res.status, `${w.log.join("\n")}\n${res.text}`).toBe(200);
      expect([res.body.technicianId, res.body.holdExpired], w.log.join("\n")).toEqual([expected[0], true]);
      expect(res.body.appointment.remaining).toBe(expected.length - 1);
      w.visits.push({ id: res.body.id, service, postal, start, technician: expected[0]!, status: "scheduled" });
      return;
    }
  }
}

const service = fc.nat({ max: 2 });
const postal = fc.nat({ max: 2 });
const slot = fc.nat({ max: 5 });
const holdPick = fc.nat({ max: 30 });
/** Now and then no hold at all: an id no org has. */
const maybeHold = fc.option(holdPick, { freq: 8, nil: undefined });
const among = fc.constantFrom<"live" | "any">("live", "any");
const command: fc.Arbitrary<Command> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant("book" as const), service, postal, slot }), weight: 5 },
  {
    arbitrary: fc.record({
      kind: fc.constant("race" as const),
      service,
      postal,
      slot,
      n: fc.integer({ min: 2, max: 4 }),
      holds: fc.boolean(),
    }),
    weight: 2,
  },
  { arbitrary: fc.record({ kind: fc.constant("cancel" as const), visit: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant("reschedule" as const), visit: fc.nat(), slot }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant("check" as const), service, postal, slot }), weight: 1 },
  {
    arbitrary: fc.record(
      {
        kind: fc.constant("hold" as const),
        service,
        postal,
        slot,
        minutes: fc.integer({ min: 1, max: 15 }),
      },
      { requiredKeys: ["kind", "service", "postal", "slot"] },
    ),
    weight: 6,
  },
  {
    arbitrary: fc.record({ kind: fc.constant("release" as const), hold: maybeHold, among }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant("expire" as const),
      hold: holdPick,
      by: fc.constantFrom(-MINUTE, -1, 0, 1, 2 * MINUTE),
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant("bookHold" as const),
      hold: maybeHold,
      among,
      other: fc.constantFrom("none", "none", "none", "start", "service", "postal"),
    }),
    weight: 6,
  },
);

describe("technician mode against a model (property)", () => {
  it("book, race, cancel, reschedule, hold, release, expire and book on a hold: the model's technician every time, exact places, never an overlap", async () => {
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
          // Stopped at real now for the run; at most 18 steps of a few minutes against starts a day ahead.
          const clock = stoppedClock();
          const w: World = {
            tenant,
            services,
            technicians,
            starts: Array.from({ length: 6 }, (_, i) => first + i * HOUR),
            visits: [],
            holds: [],
            clock,
            log: [],
          };
          try {
            for (const c of commands) {
              await run(w, c);
              await expectNoOverlap(w);
              await expectAvailability(w);
            }
          } finally {
            clock.restore();
          }
        },
      ),
      { seed: 20261125, numRuns: 25 },
    );
  }, 600_000);
});
