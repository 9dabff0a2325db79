// Find, check and book, and the incidents after (docs/api.md, "Scheduling",
// "After the booking" and "Holding a slot") as a state machine: random
// sequences of bookings, cancellations, reschedules (alone and racing each
// other: book vs book, cancel vs reschedule, book vs reschedule), holds
// (alone and racing bookings), releases, the clock moving past (or up to) a
// hold's expiry, bookings naming a hold (live, lapsed, for another start, or
// unknown; racing a plain booking for the last place), listings and checks,
// run through the app on real D1 and against an in-memory model of one small
// schedule. The universe is small so that slots fill up: one fresh UTC org per
// run, open around the clock with no notice, hourly slots of capacity 1–3, and
// 4–6 consecutive slot starts a day or more ahead; commands name slots,
// incidents and holds by index into the model. The app's clock is stopped at
// the run's start and moves only by the model's clock steps (minutes, against
// starts a day ahead: notice and horizon never change an answer); no cron
// sweep runs, so a lapsed hold is one the queries themselves no longer count.
// After every command: available-appointments lists exactly the universe slots
// the model has room in (`remaining` = capacity − scheduled − live holds),
// is-booking-available agrees for each slot the command touched, and every
// incident, as GET and the list show it, equals the model's.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ReadResponse } from "../../support/http";
import { call } from "../../support/request";
import { openTenant, type Tenant } from "../../support/tenants";
import { HOUR, hoursAhead, iso, MINUTE } from "../../support/time";
import { AVAILABLE, CHECK, CREATE, HOLD, INCIDENTS, RELEASE, type StoppedClock, stoppedClock } from "./helpers";

interface Appointment {
  start: string;
  end: string;
  localStart: string;
  localEnd: string;
}

/** An incident as the API shows it (docs/api.md, "Incidents"). */
interface IncidentView {
  id: string;
  status: "scheduled" | "cancelled";
  dateTime: string;
  clientName: string;
  insectName: string;
  accountId: string | null;
  phone: string | null;
  notes: string | null;
  serviceId: string | null;
  technicianId: string | null;
  postalCode: string | null;
  appointment: Appointment;
  arrivalWindow: Appointment | null;
  createdAt: string;
  updatedAt: string;
  cancelledAt: string | null;
  cancelReason: string | null;
}

interface ModelIncident {
  id: string;
  /** Index into Model.starts of the slot it is (or was last) booked in. */
  slot: number;
  status: "scheduled" | "cancelled";
  /** The incident as the API last showed it: any later read must equal it. */
  view: IncidentView;
}

interface ModelHold {
  id: string;
  /** Index into Model.starts of the slot it holds. */
  slot: number;
  /** Its expiresAt (ms): live while the clock is before it. */
  expires: number;
  /** Released or used: lapsed whatever the clock says. */
  status: "held" | "released" | "used";
}

interface Model {
  capacity: number;
  /** The universe: consecutive hourly slot starts (ms), a day or more ahead. */
  starts: number[];
  /** In booking order; commands pick them by index. */
  incidents: ModelIncident[];
  /** In holding order; commands pick them by index. */
  holds: ModelHold[];
  /** The app's clock (ms): stopped, moved forward only by Expire. */
  now: number;
  /** The commands run so far, as resolved against the model: shown with a failure. */
  log: string[];
}

interface Real {
  tenant: Tenant;
  clock: StoppedClock;
}

type Cmd = fc.AsyncCommand<Model, Real>;

const appointment = (start: number): Appointment => ({
  start: iso(start),
  end: iso(start + HOUR),
  localStart: `${iso(start).slice(0, 19)}+00:00`,
  localEnd: `${iso(start + HOUR).slice(0, 19)}+00:00`,
});

/** create-incident's appointment: the incident's, with the places left. */
const bookedAppointment = (start: number, remaining: number) => ({ ...appointment(start), remaining });

/** The slot object (the org has no services: no service, no arrival window). */
const slotObject = (start: number, remaining: number) => ({
  ...bookedAppointment(start, remaining),
  serviceId: null,
  arrivalWindow: null,
});

/** What an incident of an org without services or technicians says of them. */
const NO_VISIT = { serviceId: null, technicianId: null, postalCode: null, arrivalWindow: null };

/** A hold that still occupies its place: not released, not used, not expired. */
const live = (m: Model, hold: ModelHold) => hold.status === "held" && m.now < hold.expires;

/** Places of universe slot `slot` taken: its scheduled incidents (`except` one not counted) and live holds. */
const held = (m: Model, slot: number, except?: string) =>
  m.incidents.filter((inc) => inc.status === "scheduled" && inc.slot === slot && inc.id !== except).length +
  m.holds.filter((hold) => hold.slot === slot && live(m, hold)).length;

/**
 * The first `limit` bookable slots starting at or after `from`, by the model:
 * universe slots with room, every other hour free (no bookings or holds outside it).
 */
function expectedBookable(m: Model, from: number, limit: number) {
  const found: ReturnType<typeof slotObject>[] = [];
  for (let t = Math.ceil(from / HOUR) * HOUR; found.length < limit; t += HOUR) {
    const slot = m.starts.indexOf(t);
    const remaining = m.capacity - (slot < 0 ? 0 : held(m, slot));
    if (remaining > 0) found.push(slotObject(t, remaining));
  }
  return found;
}

/** Incidents in list order: appointment start ascending, then id. */
const inListOrder = (m: Model, incidents = m.incidents) =>
  [...incidents].sort((a, b) => m.starts[a.slot]! - m.starts[b.slot]! || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

function expectProblem(res: ReadResponse, status: number, code: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get("Content-Type")).toBe("application/problem+json");
  expect(res.body).toMatchObject({ status, code });
}

/**
 * 409 slot_unavailable for `start`, fully booked, with the model's
 * alternatives; `holdExpired: true` exactly when the request named a lapsed hold.
 */
function expectFullyBooked(m: Model, res: ReadResponse, start: number, holdExpired = false) {
  expectProblem(res, 409, "slot_unavailable");
  expect(res.body.reason).toBe("fully_booked");
  expect(res.body.alternatives).toEqual(expectedBookable(m, start + 1, 3));
  if (holdExpired) expect(res.body.holdExpired).toBe(true);
  else expect(res.body).not.toHaveProperty("holdExpired");
}

/** 422 validation_failed with one error on holdId. */
function expectHoldRefused(res: ReadResponse, code: "hold_mismatch" | "not_found") {
  expectProblem(res, 422, "validation_failed");
  expect(res.body.errors).toHaveLength(1);
  expect(res.body.errors[0]).toMatchObject({ path: "holdId", code });
}

/**
 * A 200 of create-incident at universe slot `slot`: the incident with
 * `remaining` places left (and `holdExpired` when a hold was named), as GET
 * shows it; the model gains it.
 */
async function expectBooked(
  m: Model,
  r: Real,
  res: ReadResponse,
  slot: number,
  remaining: number,
  holdExpired?: boolean,
) {
  const start = m.starts[slot]!;
  expect(res.status, res.text).toBe(200);
  const { appointment: booked, holdExpired: said, ...rest } = res.body;
  if (holdExpired === undefined) expect(res.body).not.toHaveProperty("holdExpired");
  else expect(said).toBe(holdExpired);
  expect(booked).toEqual(bookedAppointment(start, remaining));
  const view: IncidentView = { ...rest, appointment: appointment(start) };
  expect(view).toMatchObject({
    status: "scheduled",
    dateTime: iso(start),
    cancelledAt: null,
    cancelReason: null,
    ...NO_VISIT,
  });
  expect(view.updatedAt).toBe(view.createdAt);
  expect(view.createdAt).toBe(iso(m.now));
  m.incidents.push({ id: view.id, slot, status: "scheduled", view });
  await expectStored(r, view);
}

/** A 200 of hold-slot at universe slot `slot`, held for `minutes`, `remaining` places left after it; the model gains it. */
function expectHeld(m: Model, res: ReadResponse, slot: number, minutes: number, remaining: number) {
  expect(res.status, res.text).toBe(200);
  expect(res.body).toEqual({
    holdId: expect.stringMatching(/^hold_[0-9a-z]{26}$/),
    expiresAt: iso(m.now + minutes * MINUTE),
    slot: slotObject(m.starts[slot]!, remaining),
    technicianId: null,
  });
  m.holds.push({ id: res.body.holdId, slot, expires: m.now + minutes * MINUTE, status: "held" });
}

/** The incident as GET shows it equals `view`. */
async function expectStored(r: Real, view: IncidentView) {
  const res = await call(r.tenant, `${INCIDENTS}/${view.id}`);
  expect(res.status, res.text).toBe(200);
  expect(res.body).toEqual(view);
}

const later = (a: string, b: string) => expect(Date.parse(a)).toBeGreaterThanOrEqual(Date.parse(b));

/**
 * The checks after every command: the whole universe as listed by find and
 * every incident as listed by the incident list, and check for each slot the
 * command touched.
 */
async function verify(m: Model, r: Real, touched: number[]) {
  const { tenant } = r;
  const first = m.starts[0]!;
  const slots = [...new Set(touched)];
  const [listed, list, ...checks] = await Promise.all([
    call(tenant, AVAILABLE, { body: { dateTime: iso(first), limit: m.starts.length } }),
    call(tenant, `${INCIDENTS}?limit=200`),
    ...slots.map((slot) => call(tenant, CHECK, { body: { dateTime: iso(m.starts[slot]!) } })),
  ]);

  // Listed by find ⇔ the model has room, with remaining = capacity − scheduled.
  expect(listed.status, listed.text).toBe(200);
  expect(listed.body).toEqual({ timeZone: "UTC", slots: expectedBookable(m, first, m.starts.length) });

  // Check says available ⇔ the model has room, for exactly that slot.
  for (const [i, slot] of slots.entries()) {
    const start = m.starts[slot]!;
    const res = checks[i]!;
    const remaining = m.capacity - held(m, slot);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      dateTime: iso(start),
      available: remaining > 0,
      reason: remaining > 0 ? null : "fully_booked",
      slot: slotObject(start, remaining),
      alternatives: expectedBookable(m, start + 1, 3),
    });
  }

  // Every incident as the model has it, in list order; no slot over capacity.
  expect(list.status, list.text).toBe(200);
  expect(list.body).toEqual({ data: inListOrder(m).map((inc) => inc.view), hasMore: false, nextCursor: null });
  const perSlot = new Map<string, number>();
  for (const row of list.body.data as IncidentView[]) {
    if (row.status === "scheduled") perSlot.set(row.dateTime, (perSlot.get(row.dateTime) ?? 0) + 1);
  }
  for (const count of perSlot.values()) expect(count).toBeLessThanOrEqual(m.capacity);
}

/**
 * A command. Its toString (the counterexample) shows what was generated; what
 * that meant in its run (which slot, incident, room) is logged in the model
 * and put before the message of a failure, as commands are shared by runs.
 */
abstract class Step implements Cmd {
  protected shown = "";
  abstract readonly name: string;
  check(_m: Readonly<Model>) {
    return true;
  }
  /** Runs the command against the app and the model; returns the universe slots it touched. */
  abstract act(m: Model, r: Real): Promise<number[]>;
  async run(m: Model, r: Real) {
    this.shown = "";
    let logged = false;
    const log = () => {
      m.log.push(`${this.name}${this.shown ? `: ${this.shown}` : ""}`);
      logged = true;
    };
    try {
      const touched = await this.act(m, r);
      log();
      await verify(m, r, touched);
    } catch (error) {
      if (!logged) log();
      if (error instanceof Error)
        error.message = `${m.log.map((line, i) => `${i + 1}. ${line}`).join("\n")}\n${error.message}`;
      throw error;
    }
  }
  toString() {
    return this.name;
  }
}

/** An incident that exists, picked by index; commands on incidents need one. */
abstract class OnIncident extends Step {
  constructor(readonly pick: number) {
    super();
  }
  override check(m: Readonly<Model>) {
    return m.incidents.length > 0;
  }
  protected incident(m: Model) {
    const index = this.pick % m.incidents.length;
    return { index, inc: m.incidents[index]! };
  }
}

class Book extends Step {
  constructor(readonly pick: number) {
    super();
  }
  get name() {
    return `book(slot ${this.pick})`;
  }
  async act(m: Model, r: Real): Promise<number[]> {
    const slot = this.pick % m.starts.length;
    const start = m.starts[slot]!;
    const room = m.capacity - held(m, slot);
    this.shown = `slot #${slot} ${iso(start)}, room ${room}`;
    const res = await call(r.tenant, CREATE, {
      body: { dateTime: iso(start), clientName: "Model Caller", insectName: "ants" },
    });
    if (room <= 0) expectFullyBooked(m, res, start);
    else await expectBooked(m, r, res, slot, room - 1);
    return [slot];
  }
}

class Cancel extends OnIncident {
  constructor(
    pick: number,
    readonly reason: string | undefined,
  ) {
    super(pick);
  }
  get name() {
    return `cancel(incident ${this.pick}${this.reason === undefined ? "" : `, ${JSON.stringify(this.reason)}`})`;
  }
  async act(m: Model, r: Real): Promise<number[]> {
    const { index, inc } = this.incident(m);
    this.shown = `#${index} ${inc.status} at slot #${inc.slot}`;
    const res = await call(r.tenant, `${INCIDENTS}/${inc.id}/cancel`, {
      body: this.reason === undefined ? {} : { reason: this.reason },
    });
    expect(res.status, res.text).toBe(200);
    if (inc.status === "cancelled") {
      // Already cancelled: 200 with the incident unchanged.
      expect(res.body).toEqual(inc.view);
    } else {
      const { updatedAt } = res.body;
      expect(res.body).toEqual({
        ...inc.view,
        status: "cancelled",
        updatedAt,
        cancelledAt: updatedAt,
        cancelReason: this.reason?.trim() || null,
      });
      later(updatedAt, inc.view.updatedAt);
      inc.status = "cancelled";
      inc.view = res.body;
    }
    await expectStored(r, inc.view);
    return [inc.slot];
  }
}

class Reschedule extends OnIncident {
  constructor(
    pick: number,
    readonly target: number,
  ) {
    super(pick);
  }
  get name() {
    return `reschedule(incident ${this.pick}, slot ${this.target})`;
  }
  async act(m: Model, r: Real): Promise<number[]> {
    const { index, inc } = this.incident(m);
    const target = this.target % m.starts.length;
    const start = m.starts[target]!;
    const room = m.capacity - held(m, target, inc.id);
    const origin = inc.slot;
    this.shown = `#${index} ${inc.status} at slot #${origin} → slot #${target}, room ${room}`;
    const res = await call(r.tenant, `${INCIDENTS}/${inc.id}/reschedule`, { body: { dateTime: iso(start) } });
    if (inc.status === "cancelled") {
      expectProblem(res, 409, "incident_not_changeable");
      expect(res.body.reason).toBe("cancelled");
    } else if (inc.slot === target) {
      // The slot it already holds: 200, unchanged.
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual(inc.view);
    } else if (room > 0) {
      expect(res.status, res.text).toBe(200);
      const { updatedAt } = res.body;
      expect(res.body).toEqual({ ...inc.view, dateTime: iso(start), appointment: appointment(start), updatedAt });
      later(updatedAt, inc.view.updatedAt);
      inc.slot = target;
      inc.view = res.body;
    } else {
      expectFullyBooked(m, res, start);
    }
    await expectStored(r, inc.view);
    return [origin, target];
  }
}

/** 2–3 bookings of one slot at once: exactly min(N, room) succeed. */
class RaceBook extends Step {
  constructor(
    readonly pick: number,
    readonly n: number,
  ) {
    super();
  }
  get name() {
    return `raceBook(slot ${this.pick}, ×${this.n})`;
  }
  async act(m: Model, r: Real): Promise<number[]> {
    const slot = this.pick % m.starts.length;
    const start = m.starts[slot]!;
    const room = m.capacity - held(m, slot);
    this.shown = `slot #${slot} ${iso(start)}, room ${room}`;
    const results = await Promise.all(
      Array.from({ length: this.n }, (_, i) =>
        call(r.tenant, CREATE, { body: { dateTime: iso(start), clientName: `Racer ${i}`, insectName: "wasps" } }),
      ),
    );
    const won = results.filter((res) => res.status === 200);
    expect(won.length, results.map((res) => res.status).join(",")).toBe(Math.min(this.n, Math.max(0, room)));
    for (const res of won) {
      const { appointment: booked, ...rest } = res.body;
      expect(booked.remaining).toBeGreaterThanOrEqual(room - won.length);
      expect(booked.remaining).toBeLessThan(room);
      expect(booked).toEqual(bookedAppointment(start, booked.remaining));
      const view: IncidentView = { ...rest, appointment: appointment(start) };
      expect(view).toMatchObject({ status: "scheduled", dateTime: iso(start), ...NO_VISIT });
      m.incidents.push({ id: view.id, slot, status: "scheduled", view });
    }
    for (const res of results) if (res.status !== 200) expectFullyBooked(m, res, start);
    return [slot];
  }
}

/**
 * A cancel racing a reschedule of the same incident: the cancel always
 * succeeds, the reschedule is 200 (first) or 409 incident_not_changeable
 * (second), and the incident ends cancelled where the winner left it.
 */
class RaceCancelReschedule extends OnIncident {
  constructor(
    pick: number,
    readonly target: number,
  ) {
    super(pick);
  }
  get name() {
    return `raceCancelReschedule(incident ${this.pick}, slot ${this.target})`;
  }
  async act(m: Model, r: Real): Promise<number[]> {
    const { index, inc } = this.incident(m);
    const target = this.target % m.starts.length;
    const start = m.starts[target]!;
    const room = m.capacity - held(m, target, inc.id);
    const origin = inc.slot;
    this.shown = `#${index} ${inc.status} at slot #${origin} → slot #${target}, room ${room}`;
    const [cancelled, moved] = await Promise.all([
      call(r.tenant, `${INCIDENTS}/${inc.id}/cancel`, { body: {} }),
      call(r.tenant, `${INCIDENTS}/${inc.id}/reschedule`, { body: { dateTime: iso(start) } }),
    ]);
    expect(cancelled.status, cancelled.text).toBe(200);
    let slot = inc.slot;
    if (inc.status === "cancelled") {
      expect(cancelled.body).toEqual(inc.view);
      expectProblem(moved, 409, "incident_not_changeable");
      expect(moved.body.reason).toBe("cancelled");
    } else if (moved.status === 200) {
      // The reschedule ran first (or had nothing to move).
      expect(moved.body).toMatchObject({ status: "scheduled", dateTime: iso(start), appointment: appointment(start) });
      slot = target;
    } else if (moved.body?.code === "slot_unavailable") {
      // It ran first and the target was full; its alternatives depend on whether the cancel had run yet.
      expect(target === inc.slot || room > 0, "only a full slot refuses").toBe(false);
      expect(moved.body.reason).toBe("fully_booked");
    } else {
      expectProblem(moved, 409, "incident_not_changeable");
      expect(moved.body.reason).toBe("cancelled");
    }
    const stored = await call(r.tenant, `${INCIDENTS}/${inc.id}`);
    expect(stored.status, stored.text).toBe(200);
    expect(stored.body).toMatchObject({
      status: "cancelled",
      dateTime: iso(m.starts[slot]!),
      appointment: appointment(m.starts[slot]!),
    });
    expect(cancelled.body).toEqual(stored.body);
    later(stored.body.updatedAt, inc.view.updatedAt);
    inc.status = "cancelled";
    inc.slot = slot;
    inc.view = stored.body;
    return [origin, target];
  }
}

/**
 * A new booking racing a reschedule into the same slot: together they
 * get exactly min(2, room) places; the loser is 409 slot_unavailable.
 */
class RaceBookReschedule extends Step {
  constructor(
    readonly pick: number,
    readonly target: number,
  ) {
    super();
  }
  get name() {
    return `raceBookReschedule(incident ${this.pick}, slot ${this.target})`;
  }
  override check(m: Readonly<Model>) {
    return m.incidents.some((inc) => inc.status === "scheduled");
  }
  async act(m: Model, r: Real): Promise<number[]> {
    const scheduled = m.incidents.filter((inc) => inc.status === "scheduled");
    const inc = scheduled[this.pick % scheduled.length]!;
    const origin = inc.slot;
    // Another slot than its own: the same slot is no move.
    const target = (this.target % m.starts.length === origin ? origin + 1 : this.target) % m.starts.length;
    const start = m.starts[target]!;
    const room = m.capacity - held(m, target);
    this.shown = `#${m.incidents.indexOf(inc)} at slot #${origin} → slot #${target}, room ${room}`;
    const [booked, moved] = await Promise.all([
      call(r.tenant, CREATE, { body: { dateTime: iso(start), clientName: "Racer", insectName: "mice" } }),
      call(r.tenant, `${INCIDENTS}/${inc.id}/reschedule`, { body: { dateTime: iso(start) } }),
    ]);
    const statuses = `book ${booked.status}, reschedule ${moved.status}`;
    expect([booked.status, moved.status].filter((status) => status === 200).length, statuses).toBe(
      Math.min(2, Math.max(0, room)),
    );
    for (const res of [booked, moved]) {
      if (res.status === 200) continue;
      // The loser's alternatives depend on whether the move had freed its old slot yet.
      expectProblem(res, 409, "slot_unavailable");
      expect(res.body.reason).toBe("fully_booked");
    }
    if (booked.status === 200) {
      const { appointment: slot, ...rest } = booked.body;
      expect(slot).toEqual(bookedAppointment(start, slot.remaining));
      expect(slot.remaining).toBeLessThan(room);
      const view: IncidentView = { ...rest, appointment: appointment(start) };
      expect(view).toMatchObject({ status: "scheduled", dateTime: iso(start), ...NO_VISIT });
      m.incidents.push({ id: view.id, slot: target, status: "scheduled", view });
    }
    if (moved.status === 200) {
      const { updatedAt } = moved.body;
      expect(moved.body).toEqual({ ...inc.view, dateTime: iso(start), appointment: appointment(start), updatedAt });
      later(updatedAt, inc.view.updatedAt);
      inc.slot = target;
      inc.view = moved.body;
    }
    await expectStored(r, inc.view);
    return [origin, target];
  }
}

/** hold-slot for `minutes` (default 5): held exactly when the model has room, counted from then on. */
class Hold extends Step {
  constructor(
    readonly pick: number,
    readonly minutes: number | undefined,
  ) {
    super();
  }
  get name() {
    return `hold(slot ${this.pick}${this.minutes === undefined ? "" : `, ${this.minutes} min`})`;
  }
  async act(m: Model, r: Real): Promise<number[]> {
    const slot = this.pick % m.starts.length;
    const start = m.starts[slot]!;
    const room = m.capacity - held(m, slot);
    this.shown = `slot #${slot} ${iso(start)}, room ${room}, hold #${m.holds.length}`;
    const res = await call(r.tenant, HOLD, {
      body: { dateTime: iso(start), ...(this.minutes === undefined ? {} : { holdMinutes: this.minutes }) },
    });
    if (room <= 0) expectFullyBooked(m, res, start);
    else expectHeld(m, res, slot, this.minutes ?? 5, room - 1);
    return [slot];
  }
}

/** 2–3 holds and bookings of one slot at once (alternating): together exactly min(N, room) succeed. */
class RaceHoldBook extends Step {
  constructor(
    readonly pick: number,
    readonly n: number,
  ) {
    super();
  }
  get name() {
    return `raceHoldBook(slot ${this.pick}, ×${this.n})`;
  }
  async act(m: Model, r: Real): Promise<number[]> {
    const slot = this.pick % m.starts.length;
    const start = m.starts[slot]!;
    const room = m.capacity - held(m, slot);
    this.shown = `slot #${slot} ${iso(start)}, room ${room}`;
    const holding = (i: number) => i % 2 === 0;
    const results = await Promise.all(
      Array.from({ length: this.n }, (_, i) =>
        holding(i)
          ? call(r.tenant, HOLD, { body: { dateTime: iso(start), holdMinutes: 3 } })
          : call(r.tenant, CREATE, { body: { dateTime: iso(start), clientName: `Racer ${i}`, insectName: "ticks" } }),
      ),
    );
    const won = results.filter((res) => res.status === 200).length;
    expect(won, results.map((res) => res.status).join(",")).toBe(Math.min(this.n, Math.max(0, room)));
    for (const [i, res] of results.entries()) {
      if (res.status !== 200) {
        expectFullyBooked(m, res, start);
        continue;
      }
      // Its places left depend on which of the others had gone first.
      const left = holding(i) ? res.body.slot.remaining : res.body.appointment.remaining;
      expect(left).toBeGreaterThanOrEqual(room - won);
      expect(left).toBeLessThan(room);
      if (holding(i)) expectHeld(m, res, slot, 3, left);
      else await expectBooked(m, r, res, slot, left);
    }
    return [slot];
  }
}

/** A hold of the model (`among` its live ones, or all), picked by index; no pick: an id no org has. */
abstract class OnHold extends Step {
  constructor(
    readonly pick: number | undefined,
    readonly among: "live" | "any" = "any",
  ) {
    super();
  }
  private candidates(m: Readonly<Model>) {
    return this.among === "live" ? m.holds.filter((hold) => live(m, hold)) : m.holds;
  }
  override check(m: Readonly<Model>) {
    return this.pick === undefined || this.candidates(m).length > 0;
  }
  protected hold(m: Model) {
    if (this.pick === undefined) return undefined;
    const candidates = this.candidates(m);
    const hold = candidates[this.pick % candidates.length]!;
    return { index: m.holds.indexOf(hold), hold };
  }
  protected get picked() {
    return this.pick === undefined ? "unknown" : `${this.among === "live" ? "live " : ""}${this.pick}`;
  }
}

const UNKNOWN_HOLD = "hold_0000000000zzzzzzzzzzzzzzzz";

const holdState = (m: Model, hold: ModelHold) =>
  live(m, hold) ? `live ${(hold.expires - m.now) / 1000}s more` : hold.status === "held" ? "expired" : hold.status;

/** release-hold: 200 whatever its state, a live hold's place freed; an unknown id is 422. */
class Release extends OnHold {
  get name() {
    return `release(hold ${this.picked})`;
  }
  async act(m: Model, r: Real): Promise<number[]> {
    const picked = this.hold(m);
    if (!picked) {
      this.shown = "unknown id";
      const res = await call(r.tenant, RELEASE, { body: { holdId: UNKNOWN_HOLD } });
      expectHoldRefused(res, "not_found");
      return [];
    }
    const { index, hold } = picked;
    this.shown = `#${index} ${holdState(m, hold)} at slot #${hold.slot}`;
    const res = await call(r.tenant, RELEASE, { body: { holdId: hold.id } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ holdId: hold.id, released: true });
    if (live(m, hold)) hold.status = "released";
    return [hold.slot];
  }
}

/**
 * Moves the clock to `by` ms from the expiry of a live hold (−1 min, −1 ms:
 * it stays live; 0, +1 ms, +2 min: it lapses, and any expiring by then),
 * never back.
 */
class Expire extends Step {
  constructor(
    readonly pick: number,
    readonly by: number,
  ) {
    super();
  }
  override check(m: Readonly<Model>) {
    return m.holds.some((hold) => live(m, hold));
  }
  get name() {
    return `expire(live hold ${this.pick}, ${this.by >= 0 ? "+" : ""}${this.by} ms)`;
  }
  async act(m: Model, r: Real): Promise<number[]> {
    const holds = m.holds.filter((hold) => live(m, hold));
    const target = holds[this.pick % holds.length]!;
    const to = Math.max(m.now, target.expires + this.by);
    this.shown = `hold #${m.holds.indexOf(target)} at slot #${target.slot}: clock +${(to - m.now) / 1000}s`;
    m.now = to;
    r.clock.set(to);
    // The slots whose holds have just lapsed.
    return holds.filter((hold) => !live(m, hold)).map((hold) => hold.slot);
  }
}

/**
 * create-incident naming a hold of the model, at its start or `shift` slots
 * on (or an unknown hold: 422 not_found). Live at its start: the incident
 * takes its place whatever the room (`racer`: while a plain booking races it
 * for the rest, which it never loses to); live at another start: 422
 * hold_mismatch, the hold kept; lapsed (expired, released, used): booked as
 * if not named, with `holdExpired: true`.
 */
class BookWithHold extends OnHold {
  constructor(
    pick: number | undefined,
    among: "live" | "any",
    readonly shift: number,
    readonly racer: boolean,
  ) {
    super(pick, among);
  }
  get name() {
    return `bookWithHold(hold ${this.picked}, +${this.shift} slots${this.racer ? ", raced" : ""})`;
  }
  async act(m: Model, r: Real): Promise<number[]> {
    const create = (start: number, holdId: string | undefined, clientName = "Hold Caller") =>
      call(r.tenant, CREATE, {
        body: { dateTime: iso(start), clientName, insectName: "ants", ...(holdId === undefined ? {} : { holdId }) },
      });
    const picked = this.hold(m);
    if (!picked) {
      const slot = this.shift % m.starts.length;
      this.shown = `unknown id at slot #${slot}`;
      expectHoldRefused(await create(m.starts[slot]!, UNKNOWN_HOLD), "not_found");
      return [slot];
    }
    const { index, hold } = picked;
    const slot = (hold.slot + this.shift) % m.starts.length;
    const start = m.starts[slot]!;
    const room = m.capacity - held(m, slot);
    const state = holdState(m, hold);
    this.shown = `#${index} ${state} at slot #${hold.slot} → slot #${slot}, room ${room}`;
    if (!live(m, hold)) {
      this.shown += ", booked as if not named";
      const res = await create(start, hold.id);
      if (room <= 0) expectFullyBooked(m, res, start, true);
      else await expectBooked(m, r, res, slot, room - 1, true);
    } else if (slot !== hold.slot) {
      this.shown += ", hold_mismatch";
      expectHoldRefused(await create(start, hold.id), "hold_mismatch");
    } else if (!this.racer) {
      this.shown += ", takes the hold's place";
      // The hold's place becomes the incident's: the places left do not change.
      const res = await create(start, hold.id);
      hold.status = "used";
      await expectBooked(m, r, res, slot, room, false);
    } else {
      this.shown += ", takes the hold's place, raced";
      const [own, other] = await Promise.all([create(start, hold.id), create(start, undefined, "Racer")]);
      hold.status = "used";
      // The racer takes a free place if there is one, before or after the hold's booking.
      const otherWon = room > 0;
      const left = own.body?.appointment?.remaining;
      expect(left === room || (otherWon && left === room - 1), `remaining ${left}, room ${room}`).toBe(true);
      await expectBooked(m, r, own, slot, left, false);
      if (otherWon) await expectBooked(m, r, other, slot, room - 1);
      else expectFullyBooked(m, other, start);
    }
    return [hold.slot, slot];
  }
}

type Filter = "none" | "scheduled" | "cancelled" | { from: number; to: number };

/** Pages through GET /api/v1/incidents with small limits and a filter, by cursor. */
class List extends Step {
  constructor(
    readonly limit: number,
    readonly filter: Filter,
  ) {
    super();
  }
  get name() {
    return `list(limit ${this.limit}, ${JSON.stringify(this.filter)})`;
  }
  async act(m: Model, r: Real): Promise<number[]> {
    const { filter } = this;
    let query = "";
    let expected = m.incidents;
    if (filter === "scheduled" || filter === "cancelled") {
      query = `&status=${filter}`;
      expected = m.incidents.filter((inc) => inc.status === filter);
    } else if (filter !== "none") {
      const [a, b] = [filter.from % m.starts.length, filter.to % (m.starts.length + 1)];
      const from = m.starts[a]!;
      const to = m.starts[0]! + b * HOUR;
      this.shown = `from slot #${a} to slot #${b}`;
      query = `&from=${encodeURIComponent(iso(from))}&to=${encodeURIComponent(iso(to))}`;
      expected = m.incidents.filter((inc) => m.starts[inc.slot]! >= from && m.starts[inc.slot]! < to);
    }
    const seen: IncidentView[] = [];
    let cursor: string | null = null;
    for (let page = 0; ; page++) {
      expect(page).toBeLessThan(100);
      const res: ReadResponse = await call(
        r.tenant,
        `${INCIDENTS}?limit=${this.limit}${query}${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`,
      );
      expect(res.status, res.text).toBe(200);
      expect(res.body.hasMore).toBe(res.body.nextCursor !== null);
      if (res.body.hasMore) expect(res.body.data.length).toBe(this.limit);
      else expect(res.body.data.length).toBeLessThanOrEqual(this.limit);
      seen.push(...res.body.data);
      cursor = res.body.nextCursor;
      if (cursor === null) break;
    }
    expect(seen).toEqual(inListOrder(m, expected).map((inc) => inc.view));
    return [];
  }
}

/**
 * available-appointments from a universe slot with a random limit, and
 * is-booking-available half an hour into it (not a slot start).
 */
class Check extends Step {
  constructor(
    readonly pick: number,
    readonly limit: number,
  ) {
    super();
  }
  get name() {
    return `check(slot ${this.pick}, limit ${this.limit})`;
  }
  async act(m: Model, r: Real): Promise<number[]> {
    const slot = this.pick % m.starts.length;
    const start = m.starts[slot]!;
    this.shown = `slot #${slot} ${iso(start)}`;
    const [listed, inside] = await Promise.all([
      call(r.tenant, AVAILABLE, { body: { dateTime: iso(start), limit: this.limit } }),
      call(r.tenant, CHECK, { body: { dateTime: iso(start + 30 * MINUTE) } }),
    ]);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.slots).toEqual(expectedBookable(m, start, this.limit));
    expect(inside.status, inside.text).toBe(200);
    expect(inside.body).toEqual({
      dateTime: iso(start + 30 * MINUTE),
      available: false,
      reason: "not_a_slot_start",
      slot: null,
      alternatives: expectedBookable(m, start + 30 * MINUTE, 3),
    });
    return [slot];
  }
}

const slotPick = fc.nat({ max: 5 });
const incidentPick = fc.nat({ max: 30 });
const holdPick = fc.nat({ max: 30 });

const commands = fc.commands(
  [
    slotPick.map((s) => new Book(s)),
    slotPick.map((s) => new Book(s)),
    fc
      .tuple(incidentPick, fc.option(fc.constantFrom("", "  moved away  ", "Sold"), { nil: undefined }))
      .map(([i, reason]) => new Cancel(i, reason)),
    fc.tuple(incidentPick, slotPick).map(([i, s]) => new Reschedule(i, s)),
    fc.tuple(incidentPick, slotPick).map(([i, s]) => new Reschedule(i, s)),
    fc.tuple(slotPick, fc.integer({ min: 2, max: 3 })).map(([s, n]) => new RaceBook(s, n)),
    fc.tuple(incidentPick, slotPick).map(([i, s]) => new RaceCancelReschedule(i, s)),
    fc.tuple(incidentPick, slotPick).map(([i, s]) => new RaceBookReschedule(i, s)),
    fc
      .tuple(
        fc.integer({ min: 1, max: 4 }),
        fc.oneof(
          fc.constantFrom<Filter>("none", "scheduled", "cancelled"),
          fc.record({ from: fc.nat({ max: 5 }), to: fc.nat({ max: 6 }) }),
        ),
      )
      .map(([limit, filter]) => new List(limit, filter)),
    fc.tuple(slotPick, fc.integer({ min: 1, max: 6 })).map(([s, limit]) => new Check(s, limit)),
    fc
      .tuple(slotPick, fc.option(fc.integer({ min: 1, max: 15 }), { nil: undefined }))
      .map(([s, minutes]) => new Hold(s, minutes)),
    fc
      .tuple(slotPick, fc.option(fc.integer({ min: 1, max: 15 }), { nil: undefined }))
      .map(([s, minutes]) => new Hold(s, minutes)),
    fc.tuple(slotPick, fc.integer({ min: 2, max: 3 })).map(([s, n]) => new RaceHoldBook(s, n)),
    fc
      .tuple(fc.option(holdPick, { freq: 8, nil: undefined }), fc.constantFrom<"live" | "any">("live", "any"))
      .map(([h, among]) => new Release(h, among)),
    fc.tuple(holdPick, fc.constantFrom(-MINUTE, -1, 0, 1, 2 * MINUTE)).map(([h, by]) => new Expire(h, by)),
    fc.tuple(holdPick, fc.constantFrom(-MINUTE, -1, 0, 1, 2 * MINUTE)).map(([h, by]) => new Expire(h, by)),
    fc
      .tuple(holdPick, fc.constantFrom(0, 0, 0, 1), fc.boolean())
      .map(([h, shift, racer]) => new BookWithHold(h, "live", shift, racer)),
    fc
      .tuple(fc.option(holdPick, { freq: 8, nil: undefined }), fc.constantFrom(0, 0, 1, 2), fc.boolean())
      .map(([h, shift, racer]) => new BookWithHold(h, "any", shift, racer)),
  ],
  { maxCommands: 25, size: "max" },
);

const world = fc.record({
  capacity: fc.integer({ min: 1, max: 3 }),
  size: fc.integer({ min: 4, max: 6 }),
  /** Hours after the first full hour a day from now: any hour of the day, on the next three days. */
  offset: fc.integer({ min: 0, max: 72 }),
});

describe("incidents against a model of the schedule (property)", () => {
  it("book, cancel, reschedule, hold, release, expire, book on a hold, list and check agree with the model", async () => {
    await fc.assert(
      fc.asyncProperty(world, commands, async ({ capacity, size, offset }, cmds) => {
        const tenant = await openTenant("Model Org", { capacity, slotMinutes: 60 });
        const first = hoursAhead(24 + offset);
        const starts = Array.from({ length: size }, (_, i) => first + i * HOUR);
        // Stopped at real now for the run; at most 25 steps of a few minutes against starts a day ahead.
        const clock = stoppedClock();
        try {
          await fc.asyncModelRun(
            () => ({
              model: {
                capacity,
                starts,
                incidents: [],
                holds: [],
                now: clock.now,
                log: [`capacity ${capacity}, slots ${starts.map(iso).join(" ")}`],
              },
              real: { tenant, clock },
            }),
            cmds,
          );
        } finally {
          clock.restore();
        }
      }),
      { numRuns: 30 },
    );
  }, 120_000);
});
