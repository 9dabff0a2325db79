// Shared by the incident tests (docs/api.md, "After the booking"): calls to the incident
// operations, direct inserts for what the API cannot create (an appointment
// that has already started, many rows at once), and the expected shapes.
import { expect, vi } from "vitest";
import { incidents } from "../../../drizzle/schema";
import { newId } from "../../../src/lib/ids";
import type { ReadResponse } from "../../support/http";
import { call } from "../../support/request";
import { db, type Tenant } from "../../support/tenants";
import { HOUR, iso, MINUTE } from "../../support/time";

export const INCIDENTS = "/api/v1/incidents";
export const CREATE = "/api/v1/ai-agent/create-incident";
export const CHECK = "/api/v1/ai-agent/is-booking-available";
export const AVAILABLE = "/api/v1/ai-agent/available-appointments";
export const HOLD = "/api/v1/ai-agent/hold-slot";
export const RELEASE = "/api/v1/ai-agent/release-hold";

export interface Incident {
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
  appointment: { start: string; end: string; localStart: string; localEnd: string; remaining?: number };
  arrivalWindow: { start: string; end: string; localStart: string; localEnd: string } | null;
  createdAt: string;
  updatedAt: string;
  cancelledAt: string | null;
  cancelReason: string | null;
}

const withKey = (key?: string) => (key === undefined ? {} : { headers: { "Idempotency-Key": key } });

export const getIncident = (t: Tenant, id: string) => call(t, `${INCIDENTS}/${id}`);

export const listIncidents = (t: Tenant, query = "") => call(t, `${INCIDENTS}${query ? `?${query}` : ""}`);

export const cancel = (t: Tenant, id: string, body: unknown = {}, key?: string) =>
  call(t, `${INCIDENTS}/${id}/cancel`, { body, ...withKey(key) });

export const reschedule = (t: Tenant, id: string, dateTime: number | string, key?: string) =>
  call(t, `${INCIDENTS}/${id}/reschedule`, {
    body: { dateTime: typeof dateTime === "number" ? iso(dateTime) : dateTime },
    ...withKey(key),
  });

export const check = (t: Tenant, at: number | string) =>
  call(t, CHECK, { body: { dateTime: typeof at === "number" ? iso(at) : at } });

/** Books through create-incident at `at`; fails the test unless it is booked. */
export async function book(t: Tenant, at: number | string, body: Record<string, unknown> = {}): Promise<Incident> {
  const res = await call(t, CREATE, {
    body: { dateTime: typeof at === "number" ? iso(at) : at, clientName: "Ann Caller", insectName: "ants", ...body },
  });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** The incident as GET shows it now; fails the test unless it is there. */
export async function current(t: Tenant, id: string): Promise<Incident> {
  const res = await getIncident(t, id);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** The appointment of a UTC schedule: [start, start + minutes). */
export const utcAppointment = (start: number, minutes = 60) => ({
  start: iso(start),
  end: iso(start + minutes * MINUTE),
  localStart: `${iso(start).slice(0, 19)}+00:00`,
  localEnd: `${iso(start + minutes * MINUTE).slice(0, 19)}+00:00`,
});

/** The slot object of a UTC schedule in an org without services: no service, no arrival window. */
export const utcSlot = (start: number, remaining: number, minutes = 60) => ({
  ...utcAppointment(start, minutes),
  remaining,
  serviceId: null,
  arrivalWindow: null,
});

/** Inserts an incident row directly (as bookSlot stores one), e.g. one that has already started. */
export async function insertIncident(t: Tenant, fields: Partial<typeof incidents.$inferInsert> & { startsAt: number }) {
  const now = Date.now();
  const row = {
    id: newId("inc", now),
    orgId: t.orgId,
    status: "scheduled" as const,
    clientName: "Inserted",
    insectName: "wasps",
    endsAt: fields.startsAt + HOUR,
    createdAt: now,
    updatedAt: now,
    ...fields,
  };
  await db().insert(incidents).values(row);
  return row;
}

/**
 * The app's clock stopped at `start` (the app reads Date.now in this isolate:
 * request.ts calls app.fetch): it moves only when `set` moves it, until
 * `restore`. Every request between two moves sees the same instant, so a
 * hold's expiry is either past or not, never a race with the real clock.
 */
export function stoppedClock(start = Date.now()) {
  let now = start;
  const spy = vi.spyOn(Date, "now").mockImplementation(() => now);
  return {
    get now() {
      return now;
    },
    /** Moves the clock to `to`, never back. */
    set(to: number) {
      expect(to, "the clock only moves forward").toBeGreaterThanOrEqual(now);
      now = to;
    },
    restore: () => spy.mockRestore(),
  };
}

export type StoppedClock = ReturnType<typeof stoppedClock>;

/** Lets the clock move, so that a later change gets a later updatedAt. */
export const pause = (ms = 5) => new Promise((resolve) => setTimeout(resolve, ms));

/** Reads every page of `query` with these limits (the last repeated), returning the rows in the order seen. */
export async function pageThrough(
  t: Tenant,
  query: string,
  limits: number[],
  between?: (page: number) => Promise<void>,
): Promise<Incident[]> {
  const seen: Incident[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 200; page++) {
    const limit = limits[Math.min(page, limits.length - 1)]!;
    const res: ReadResponse = await listIncidents(
      t,
      `limit=${limit}${query ? `&${query}` : ""}${cursor ? `&cursor=${cursor}` : ""}`,
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.length).toBeLessThanOrEqual(limit);
    seen.push(...res.body.data);
    cursor = res.body.nextCursor;
    expect(res.body.hasMore).toBe(cursor !== null);
    if (cursor === null) return seen;
    expect(res.body.data.length).toBe(limit);
    await between?.(page);
  }
  throw new Error("pagination did not end");
}

/** Ids in list order: appointment start ascending, then id. */
export const inListOrder = (rows: { id: string; dateTime: string }[]) =>
  [...rows]
    .sort((a, b) => Date.parse(a.dateTime) - Date.parse(b.dateTime) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((r) => r.id);
