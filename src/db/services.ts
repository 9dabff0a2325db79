// The admin CLI's writes of an org's services (docs/operations.md, "Services
// and technicians"): each returns null for an unknown org and says why it
// refused anything else. A service's fields and its default mark are written
// in one batch with the org's longest span (coverSpan).
import { and, count, eq, ne, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { orgs, services } from "../../drizzle/schema";
import { newId } from "../lib/ids";
import type { Service } from "../scheduling/visits";
import type { ServiceOut } from "../schemas/services";
import { catalogueQueries, orgQuery, type ServiceRow, serviceOf, serviceView } from "./catalogue";
import { type Db, violatesUnique } from "./client";
import { guard, stoppedBy } from "./guards";

/** The most services an org may define (GET /api/v1/services lists them all, unpaged). */
export const MAX_SERVICES = 200;

/** A new service's fields; `active` is left out: a new service is active. */
export type ServiceFields = Omit<Service, "id" | "active">;
export type ServiceChanges = Partial<Omit<Service, "id">>;

export type ServiceWrite =
  | { service: ServiceOut }
  | { refused: "unknown_service" }
  /** `by`: the service holding the name, when known (a racing write: not). */
  | { refused: "name_taken"; by?: string }
  | { refused: "too_many" }
  | { refused: "inactive_default" };

/**
 * Raises the org's longest visit span to cover a visit of `service` with its
 * buffer. Availability reads a window's visits from the longest span before
 * it, so this goes into the batch that writes the service; it only grows,
 * because visits booked under a longer span still occupy it.
 */
const coverSpan = (db: Db, orgId: string, service: Pick<Service, "durationMinutes" | "bufferMinutes">) =>
  db
    .update(orgs)
    .set({ maxSlotMinutes: sql`max(${orgs.maxSlotMinutes}, ${service.durationMinutes + service.bufferMinutes})` })
    .where(eq(orgs.id, orgId));

/** db.batch of statements listed at run time (never none). */
const batch = (db: Db, statements: BatchItem<"sqlite">[]) =>
  db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);

/** Takes the default mark from every other service of the org: before a service takes it (one default, by index). */
const dropDefault = (db: Db, orgId: string, except: string) =>
  db
    .update(services)
    .set({ isDefault: false })
    .where(and(eq(services.orgId, orgId), eq(services.isDefault, true), ne(services.id, except)));

/** The unique index on (org, lower-cased name), which a racing add or rename can meet. */
const nameClash = (error: unknown) => violatesUnique(error, "services.org_id, services.name_lower");

/** The org (none: unknown) and all its services, in one round trip: what a service write checks. */
const orgAndServices = (db: Db, orgId: string) =>
  db.batch([orgQuery(db, orgId), db.select().from(services).where(eq(services.orgId, orgId))]);

const sameName = (rows: ServiceRow[], name: string, except?: string) =>
  rows.find((row) => row.id !== except && row.nameLower === name.toLowerCase());

/**
 * Adds a service (active); with `isDefault` it takes the mark from the
 * previous default, in the same batch. Refused when the name is taken (any
 * case) or the org has MAX_SERVICES already.
 */
export async function addService(
  db: Db,
  orgId: string,
  fields: ServiceFields,
  now = Date.now(),
): Promise<ServiceWrite | null> {
  const [[org], rows] = await orgAndServices(db, orgId);
  if (!org) return null;
  const taken = sameName(rows, fields.name);
  if (taken) return { refused: "name_taken", by: taken.id };
  if (rows.length >= MAX_SERVICES) return { refused: "too_many" };
  const service: Service = { ...fields, id: newId("svc", now), active: true };
  const tooMany = sql`(SELECT ${count()} FROM ${services} WHERE ${eq(services.orgId, orgId)}) > ${MAX_SERVICES}`;
  try {
    await batch(db, [
      ...(service.isDefault ? [dropDefault(db, orgId, service.id)] : []),
      db.insert(services).values(serviceRow(orgId, service, now)),
      coverSpan(db, orgId, service),
      // Another add may have raced this one past the limit.
      guard(db, "service-limit", tooMany),
    ]);
  } catch (error) {
    if (stoppedBy(error, "service-limit")) return { refused: "too_many" };
    if (nameClash(error)) return { refused: "name_taken" };
    throw error;
  }
  return { service: serviceView(service) };
}

const serviceRow = (orgId: string, s: Service, now: number) => ({
  ...s,
  orgId,
  nameLower: s.name.toLowerCase(),
  createdAt: now,
  updatedAt: now,
});

/**
 * Changes a service. `isDefault: true` takes the mark from the previous
 * default; deactivating it drops its own. Its visits keep the span and buffer
 * they were booked with (incidents hold their own), so no incident is touched.
 */
export async function updateService(
  db: Db,
  orgId: string,
  id: string,
  changes: ServiceChanges,
  now = Date.now(),
): Promise<ServiceWrite | null> {
  const [[org], rows] = await orgAndServices(db, orgId);
  if (!org) return null;
  const row = rows.find((r) => r.id === id);
  if (!row) return { refused: "unknown_service" };
  const service: Service = { ...serviceOf(row), ...changes };
  // Only an active service can be chosen, so only an active one holds the mark.
  if (!service.active && changes.isDefault) return { refused: "inactive_default" };
  if (!service.active) service.isDefault = false;
  const taken = sameName(rows, service.name, id);
  if (taken) return { refused: "name_taken", by: taken.id };
  const { id: _id, orgId: _org, createdAt: _created, ...stored } = serviceRow(orgId, service, now);
  try {
    await batch(db, [
      ...(service.isDefault ? [dropDefault(db, orgId, id)] : []),
      db
        .update(services)
        .set(stored)
        .where(and(eq(services.orgId, orgId), eq(services.id, id))),
      coverSpan(db, orgId, service),
    ]);
  } catch (error) {
    if (nameClash(error)) return { refused: "name_taken" };
    throw error;
  }
  return { service: serviceView(service) };
}

/** Every service of the org, inactive ones too, by name (case-insensitively); null for an unknown org. */
export async function listServices(db: Db, orgId: string): Promise<ServiceOut[] | null> {
  const [[org], rows] = await db.batch([orgQuery(db, orgId), catalogueQueries(db, orgId)[0]]);
  return org ? rows.map((row) => serviceView(serviceOf(row))) : null;
}
