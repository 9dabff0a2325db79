// Services, technicians and service areas over HTTP and MCP (docs/api.md,
// "Services and technicians"): the services list, which service a request
// means, crew mode with long visits and buffers, technician mode with its
// reasons and places, assignment in one statement, and moves that keep or
// change the technician. Each org's catalogue is stored before its key's first
// request (the auth middleware keeps it with the key for up to 3 s).
import { describe, expect, it } from "vitest";
import { addService, addTechnician } from "../../support/catalogue";
import { mcpCall, toolAnswer } from "../../support/mcp";
import { call } from "../../support/request";
import { OPEN_ALWAYS } from "../../support/schedules";
import { openTenant, type Tenant } from "../../support/tenants";
import { DAY, daysAhead, HOUR, iso } from "../../support/time";

const AVAILABLE = "/api/v1/ai-agent/available-appointments";
const CHECK = "/api/v1/ai-agent/is-booking-available";
const BOOK = "/api/v1/ai-agent/create-incident";

/** 08:00–17:00 UTC every day, 60-minute slots. */
const OFFICE = Object.fromEntries(Object.keys(OPEN_ALWAYS).map((d) => [d, [["08:00", "17:00"]]]));

/** Technician ids are global: a suffix keeps each org's own, in the order their prefixes give. */
const unique = () => crypto.randomUUID().slice(0, 8);

const check = (t: Tenant, dateTime: number, extra: object = {}) =>
  call(t, CHECK, { body: { dateTime: iso(dateTime), ...extra } });

const book = (t: Tenant, dateTime: number, extra: object = {}) =>
  call(t, BOOK, { body: { dateTime: iso(dateTime), clientName: "Pat Caller", insectName: "ants", ...extra } });

describe("GET /api/v1/services and list_services", () => {
  it("lists the active services by name, any case, with every member; an org without any lists none", async () => {
    const t = await openTenant();
    const termite = await addService(t, {
      name: "termite treatment",
      durationMinutes: 180,
      bufferMinutes: 30,
      arrivalWindowMinutes: 120,
      skills: ["termite-license"],
      keywords: ["termites", "white ants"],
    });
    const ants = await addService(t, { name: "Ant control", durationMinutes: 60, isDefault: true });
    await addService(t, { name: "Bees (retired)", durationMinutes: 60, active: false });
    const res = await call(t, "/api/v1/services");
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      services: [
        {
          id: ants.id,
          name: "Ant control",
          durationMinutes: 60,
          bufferMinutes: 0,
          arrivalWindowMinutes: 0,
          skills: [],
          keywords: [],
          default: true,
          active: true,
        },
        {
          id: termite.id,
          name: "termite treatment",
          durationMinutes: 180,
          bufferMinutes: 30,
          arrivalWindowMinutes: 120,
          skills: ["termite-license"],
          keywords: ["termites", "white ants"],
          default: false,
          active: true,
        },
      ],
    });
    expect(toolAnswer(await mcpCall(t, "list_services", {})).body).toEqual(res.body);
    const empty = await openTenant();
    expect((await call(empty, "/api/v1/services")).body).toEqual({ services: [] });
  });

  it("refuses query parameters", async () => {
    const res = await call(await openTenant(), "/api/v1/services?active=false");
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([expect.objectContaining({ path: "active", code: "unknown_field" })]);
  });
});

describe("choosing the service", () => {
  it("an unknown, inactive or other org's serviceId is 422 not_found on serviceId, and nothing is booked", async () => {
    const t = await openTenant();
    const other = await openTenant();
    const inactive = await addService(t, { name: "Old", durationMinutes: 60, active: false });
    const foreign = await addService(other, { name: "Theirs", durationMinutes: 60 });
    const at = daysAhead(2, 10);
    for (const serviceId of ["svc_unknown", inactive.id, foreign.id]) {
      for (const path of [AVAILABLE, CHECK, BOOK]) {
        const booking = path === BOOK ? { clientName: "A", insectName: "ants" } : {};
        const res = await call(t, path, { body: { dateTime: iso(at), serviceId, ...booking } });
        expect(res.status, `${path} ${serviceId}`).toBe(422);
        expect(res.body.errors).toEqual([expect.objectContaining({ path: "serviceId", code: "not_found" })]);
      }
    }
    expect((await call(t, "/api/v1/incidents")).body.data).toEqual([]);
  });

  it("a postal code of other characters is 422 on postalCode", async () => {
    const t = await openTenant();
    for (const postalCode of ["10001;", "<b>", "x".repeat(13)]) {
      const res = await check(t, daysAhead(2, 10), { postalCode });
      expect(res.status, postalCode).toBe(422);
      expect(res.body.errors).toEqual([expect.objectContaining({ path: "postalCode" })]);
    }
  });

  it("insectName picks the service whose keyword it is (trimmed, any case); none or several: the default", async () => {
    const t = await openTenant();
    const termite = await addService(t, { name: "Termites", durationMinutes: 180, keywords: ["Termites"] });
    const general = await addService(t, { name: "General", durationMinutes: 60, isDefault: true, keywords: ["ants"] });
    await addService(t, { name: "Ants too", durationMinutes: 90, keywords: ["ants"] });
    const at = daysAhead(2, 10);
    const serviceOf = async (insectName: string) => (await check(t, at, { insectName })).body.slot.serviceId;
    expect(await serviceOf("  termites ")).toBe(termite.id);
    expect(await serviceOf("wasps")).toBe(general.id);
    expect(await serviceOf("ants")).toBe(general.id);
    const booked = await book(t, at, { insectName: "TERMITES" });
    expect(booked.status, booked.text).toBe(200);
    expect(booked.body).toMatchObject({ serviceId: termite.id, technicianId: null, postalCode: null });
    expect(booked.body.appointment).toMatchObject({ start: iso(at), end: iso(at + 3 * HOUR) });
  });

  it("without services the visit is the schedule's slot: serviceId and arrivalWindow null", async () => {
    const t = await openTenant();
    const res = await check(t, daysAhead(2, 10), { insectName: "termites", postalCode: "11201" });
    expect(res.body.slot).toMatchObject({ end: iso(daysAhead(2, 11)), serviceId: null, arrivalWindow: null });
  });
});

describe("crew mode: long visits, buffers, arrival windows", () => {
  it("a 180-minute visit with a 30-minute buffer and a 2-hour window: its end, its window, its room", async () => {
    const t = await openTenant(undefined, { capacity: 1, weeklyHours: OFFICE as never });
    const s = await addService(t, {
      name: "Termites",
      durationMinutes: 180,
      bufferMinutes: 30,
      arrivalWindowMinutes: 120,
      isDefault: true,
    });
    const at = daysAhead(2, 9);
    const first = await check(t, at);
    expect(first.body).toMatchObject({ available: true, reason: null });
    expect(first.body.slot).toEqual({
      start: iso(at),
      end: iso(at + 3 * HOUR),
      localStart: `${iso(at).slice(0, 19)}+00:00`,
      localEnd: `${iso(at + 3 * HOUR).slice(0, 19)}+00:00`,
      remaining: 1,
      serviceId: s.id,
      arrivalWindow: {
        start: iso(at),
        end: iso(at + 2 * HOUR),
        localStart: `${iso(at).slice(0, 19)}+00:00`,
        localEnd: `${iso(at + 2 * HOUR).slice(0, 19)}+00:00`,
      },
    });
    // 15:00 + 3 h ends after 17:00: the visit does not fit the day.
    expect((await check(t, daysAhead(2, 15))).body).toMatchObject({ available: false, reason: "closed" });
    const booked = await book(t, at);
    expect(booked.status, booked.text).toBe(200);
    expect(booked.body.arrivalWindow).toEqual(first.body.slot.arrivalWindow);
    expect(booked.body.appointment.remaining).toBe(0);
    // Occupied 09:00–12:30: 12:00 is taken by the buffer, 13:00 is free.
    expect((await check(t, daysAhead(2, 12))).body).toMatchObject({ available: false, reason: "fully_booked" });
    expect((await check(t, daysAhead(2, 13))).body).toMatchObject({ available: true });
    const listed = await call(t, AVAILABLE, { body: { dateTime: iso(daysAhead(2, 8)), limit: 2 } });
    expect(listed.body.slots.map((x: { start: string }) => x.start)).toEqual([
      iso(daysAhead(2, 13)),
      iso(daysAhead(2, 14)),
    ]);
  });

  it("remaining is capacity minus the most visits at one instant of the span, not the visits it overlaps", async () => {
    const t = await openTenant(undefined, { capacity: 2, weeklyHours: OFFICE as never });
    const long = await addService(t, { name: "Long", durationMinutes: 180 });
    await addService(t, { name: "Short", durationMinutes: 60, isDefault: true });
    expect((await book(t, daysAhead(2, 9))).status).toBe(200);
    expect((await book(t, daysAhead(2, 11))).status).toBe(200);
    // 09:00–12:00 meets both, never two at once: one place left.
    const res = await check(t, daysAhead(2, 9), { serviceId: long.id });
    expect(res.body).toMatchObject({ available: true, slot: { remaining: 1 } });
  });
});

describe("technician mode", () => {
  async function fleet() {
    const t = await openTenant(undefined, { weeklyHours: OFFICE as never });
    const termite = await addService(t, {
      name: "Termites",
      durationMinutes: 180,
      bufferMinutes: 30,
      skills: ["termite-license"],
      keywords: ["termites"],
    });
    const general = await addService(t, { name: "General", durationMinutes: 60, isDefault: true });
    const sam = await addTechnician(t, {
      id: `tech_1sam${unique()}`,
      name: "Sam",
      skills: ["termite-license"],
      postalCodes: ["112", "100"],
    });
    const priya = await addTechnician(t, { id: `tech_2priya${unique()}`, name: "Priya", postalCodes: ["100"] });
    const marcus = await addTechnician(t, { id: `tech_3marcus${unique()}`, name: "Marcus", postalCodes: ["112"] });
    return { t, termite, general, sam, priya, marcus };
  }

  it("reasons: out_of_service_area, no_qualified_technician, then too_soon and fully_booked; remaining counts the eligible", async () => {
    const { t, termite } = await fleet();
    const at = daysAhead(2, 9);
    expect((await check(t, at, { postalCode: "90210" })).body).toMatchObject({
      available: false,
      reason: "out_of_service_area",
      alternatives: [],
    });
    expect((await check(t, at, { postalCode: "10001", serviceId: termite.id })).body).toMatchObject({
      available: true,
      reason: null,
      slot: { remaining: 1 },
    });
    expect((await check(t, at, { postalCode: "1120-1", serviceId: termite.id })).body.slot.remaining).toBe(1);
    expect((await check(t, at, { postalCode: "11201" })).body.slot.remaining).toBe(2);
    expect((await check(t, at)).body.slot.remaining).toBe(3);
    // Technicians cover the place, none holds the licence.
    const noOne = await openTenant();
    await addService(noOne, { name: "T", durationMinutes: 60, skills: ["termite-license"], isDefault: true });
    await addTechnician(noOne, { name: "Only", postalCodes: ["113"] });
    expect((await check(noOne, daysAhead(2, 9), { postalCode: "11375" })).body.reason).toBe("no_qualified_technician");
  });

  it("assigns the one eligible technician, then answers fully_booked for any overlapping start, and reassigns nobody else", async () => {
    const { t, termite, sam } = await fleet();
    const booked = await book(t, daysAhead(2, 9), { serviceId: termite.id, postalCode: " 11201 " });
    expect(booked.status, booked.text).toBe(200);
    expect(booked.body).toMatchObject({ technicianId: sam.id, serviceId: termite.id, postalCode: "11201" });
    expect(booked.body.appointment.remaining).toBe(0);
    // Sam is occupied 09:00–12:30: any termite start before 12:30 is full; 13:00 is free.
    for (const hour of [10, 11, 12]) {
      const res = await check(t, daysAhead(2, hour), { serviceId: termite.id, postalCode: "11201" });
      expect(res.body.reason, String(hour)).toBe("fully_booked");
    }
    const refused = await book(t, daysAhead(2, 12), { serviceId: termite.id, postalCode: "11201" });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ reason: "fully_booked" });
    expect(refused.body.alternatives[0]).toMatchObject({ start: iso(daysAhead(2, 13)), serviceId: termite.id });
  });

  it("racing bookings at one start get different technicians, exactly as many as are eligible", async () => {
    const { t, sam, marcus } = await fleet();
    const at = daysAhead(3, 10);
    const results = await Promise.all(Array.from({ length: 6 }, () => book(t, at, { postalCode: "11201" })));
    const won = results.filter((r) => r.status === 200);
    expect(won).toHaveLength(2);
    expect(won.map((r) => r.body.technicianId).sort()).toEqual([sam.id, marcus.id].sort());
    for (const lost of results.filter((r) => r.status !== 200)) expect(lost.body.reason).toBe("fully_booked");
  });

  it("assigns the technician with the fewest visits that day, ties by id", async () => {
    const { t, sam, marcus } = await fleet();
    const first = await book(t, daysAhead(4, 9), { postalCode: "11201" });
    expect(first.body.technicianId).toBe(sam.id);
    const second = await book(t, daysAhead(4, 14), { postalCode: "11201" });
    expect(second.body.technicianId).toBe(marcus.id);
  });

  it("respects a technician's own hours and days off", async () => {
    const t = await openTenant(undefined, { weeklyHours: OFFICE as never });
    await addService(t, { name: "General", durationMinutes: 60, isDefault: true });
    const day = daysAhead(2, 0);
    const dayOff = iso(day).slice(0, 10);
    const late = Object.fromEntries(Object.keys(OPEN_ALWAYS).map((d) => [d, [["13:00", "17:00"]]]));
    await addTechnician(t, { name: "Afternoons", weeklyHours: late as never });
    await addTechnician(t, { name: "Away", daysOff: [dayOff] });
    expect((await check(t, day + 9 * HOUR)).body).toMatchObject({ available: false, reason: "fully_booked" });
    expect((await check(t, day + 14 * HOUR)).body.slot.remaining).toBe(1);
    expect((await check(t, day + DAY + 9 * HOUR)).body.slot.remaining).toBe(1);
  });

  it("reschedule keeps the technician when free, else assigns another and lists the old one in the event", async () => {
    const { t, sam, marcus } = await fleet();
    const booked = await book(t, daysAhead(5, 9), { postalCode: "11201" });
    expect(booked.body.technicianId).toBe(sam.id);
    const kept = await call(t, `/api/v1/incidents/${booked.body.id}/reschedule`, {
      body: { dateTime: iso(daysAhead(5, 15)) },
    });
    expect(kept.status, kept.text).toBe(200);
    expect(kept.body.technicianId).toBe(sam.id);
    // A termite visit (only Sam is licensed) makes Sam busy 10:00–13:30: the move to 10:00 goes to Marcus.
    const blocker = await book(t, daysAhead(5, 10), { insectName: "termites", postalCode: "11201" });
    expect(blocker.body.technicianId).toBe(sam.id);
    const moved = await call(t, `/api/v1/incidents/${booked.body.id}/reschedule`, {
      body: { dateTime: iso(daysAhead(5, 10)) },
    });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.technicianId).toBe(marcus.id);
    const events = (await call(t, "/api/v1/events?type=incident.rescheduled")).body.data;
    expect(events.map((e: { data: { technicianId: string } }) => e.data.technicianId)).toEqual([sam.id, marcus.id]);
    expect(events[0].previous.technicianId).toBeUndefined();
    expect(events[1].previous).toMatchObject({ technicianId: sam.id, dateTime: iso(daysAhead(5, 15)) });
    // No room at all: 409, nothing changed.
    await book(t, daysAhead(5, 12), { postalCode: "11201" });
    await book(t, daysAhead(5, 12), { postalCode: "11201" });
    const full = await call(t, `/api/v1/incidents/${booked.body.id}/reschedule`, {
      body: { dateTime: iso(daysAhead(5, 12)) },
    });
    expect(full.status).toBe(409);
    expect((await call(t, `/api/v1/incidents/${booked.body.id}`)).body).toMatchObject({
      dateTime: iso(daysAhead(5, 10)),
      technicianId: marcus.id,
    });
  });

  it("books in an org of 120 eligible technicians (more than a statement's 100 parameters)", async () => {
    const t = await openTenant(undefined, { weeklyHours: OFFICE as never });
    await addService(t, { name: "General", durationMinutes: 60, isDefault: true });
    for (let i = 0; i < 120; i++) await addTechnician(t, { name: `Tech ${i}` });
    const at = daysAhead(2, 9);
    expect((await check(t, at)).body.slot.remaining).toBe(120);
    const booked = await book(t, at);
    expect(booked.status, booked.text).toBe(200);
    expect(booked.body.appointment.remaining).toBe(119);
  });

  it("lists incidents by technicianId and by serviceId", async () => {
    const { t, termite, sam } = await fleet();
    const a = await book(t, daysAhead(6, 9), { serviceId: termite.id, postalCode: "11201" });
    const b = await book(t, daysAhead(6, 9), { postalCode: "10001" });
    expect(a.body.technicianId).toBe(sam.id);
    const bySam = await call(t, `/api/v1/incidents?technicianId=${sam.id}`);
    expect(bySam.body.data.map((x: { id: string }) => x.id)).toEqual([a.body.id]);
    const byService = await call(t, `/api/v1/incidents?serviceId=${termite.id}`);
    expect(byService.body.data.map((x: { id: string }) => x.id)).toEqual([a.body.id]);
    expect(b.body.technicianId).not.toBe(sam.id);
  });
});
