// Visits and holds for the dispatch board's tests, stored as create-incident
// and hold-slot store them but at any time, with any technician and status:
// the board shows what is stored, whether or not it could be booked now.
import { env } from "cloudflare:test";
import { holds, incidents } from "../../drizzle/schema";
import { newId } from "../../src/lib/ids";
import { db, type Tenant } from "./tenants";
import { MINUTE } from "./time";

export interface StoredVisit {
  /** UTC, ISO. */
  start: string;
  minutes?: number;
  bufferMinutes?: number;
  technicianId?: string | null;
  serviceId?: string | null;
  /** Any status: the board shows every one but `cancelled`. */
  status?: string;
  clientName?: string;
  postalCode?: string | null;
}

/** Inserts a visit of `tenant`; returns its id. */
export async function storeVisit(tenant: Tenant, visit: StoredVisit): Promise<string> {
  const now = Date.now();
  const id = newId("inc", now);
  const startsAt = Date.parse(visit.start);
  const endsAt = startsAt + (visit.minutes ?? 60) * MINUTE;
  await db()
    .insert(incidents)
    .values({
      id,
      orgId: tenant.orgId,
      status: "scheduled",
      clientName: visit.clientName ?? "Board Client",
      insectName: "ants",
      phone: "+19175550134",
      postalCode: visit.postalCode ?? null,
      serviceId: visit.serviceId ?? null,
      technicianId: visit.technicianId ?? null,
      startsAt,
      endsAt,
      occupiedUntil: endsAt + (visit.bufferMinutes ?? 0) * MINUTE,
      createdAt: now,
      updatedAt: now,
    });
  // Raw SQL: a status the schema's type may not list yet (the board shows any but cancelled).
  if (visit.status && visit.status !== "scheduled")
    await env.DB.prepare("UPDATE incidents SET status = ?, cancelled_at = ? WHERE id = ?")
      .bind(visit.status, visit.status === "cancelled" ? now : null, id)
      .run();
  return id;
}

export interface StoredHold {
  start: string;
  minutes?: number;
  technicianId?: string | null;
  serviceId?: string | null;
  /** Epoch ms; default five minutes from now (live). */
  expiresAt?: number;
}

/** Inserts a hold of `tenant`; returns its id. */
export async function storeHold(tenant: Tenant, hold: StoredHold): Promise<string> {
  const now = Date.now();
  const id = newId("hold", now);
  const startsAt = Date.parse(hold.start);
  const endsAt = startsAt + (hold.minutes ?? 60) * MINUTE;
  await db()
    .insert(holds)
    .values({
      id,
      orgId: tenant.orgId,
      startsAt,
      endsAt,
      occupiedUntil: endsAt,
      serviceId: hold.serviceId ?? null,
      technicianId: hold.technicianId ?? null,
      postalCode: null,
      expiresAt: hold.expiresAt ?? now + 5 * MINUTE,
      endedAt: null,
      incidentId: null,
      createdAt: now,
    });
  return id;
}
