// Booking incidents through the API, for tests that need some to read or change.
import { expect } from "vitest";
import { call } from "./request";
import type { Tenant } from "./tenants";
import { slotIn } from "./time";

/** The hours each tenant's bookIncident calls took: per tenant, as files share a database (vitest.config.ts). */
const hours = new Map<string, number>();

/**
 * Books an incident through create-incident at a new hour of an openAlways
 * tenant (each call for the tenant takes its next hour, a day ahead or more),
 * or at `body.dateTime` when given; fails the test unless it is booked.
 */
export async function bookIncident(t: Tenant, body: Record<string, unknown> = {}) {
  const hour = hours.get(t.orgId) ?? 0;
  hours.set(t.orgId, hour + 1);
  const dateTime = slotIn(24 + (hour % 600));
  const res = await call(t, "/api/v1/ai-agent/create-incident", {
    body: { dateTime, clientName: "Ann Caller", insectName: "ants", ...body },
  });
  expect(res.status, res.text).toBe(200);
  return res.body as { id: string; dateTime: string; accountId: string | null; phone: string | null };
}
