// An org's services and technicians (docs/api.md, "Services and technicians"):
// read with the org by the auth middleware, so every request has them, and
// shown as the API and the CLI show them. The admin CLI writes them
// (docs/operations.md): services.ts and technicians.ts.
import { asc, eq } from "drizzle-orm";
import { orgs, services, technicians } from "../../drizzle/schema";
import type { Catalogue, Service, Technician } from "../scheduling/visits";
import type { ServiceOut } from "../schemas/services";
import type { Db } from "./client";

export type ServiceRow = typeof services.$inferSelect;
export type TechnicianRow = typeof technicians.$inferSelect;

/** The two reads of an org's catalogue, to go into the batch that reads the org. */
export const catalogueQueries = (db: Db, orgId: string) =>
  [
    db.select().from(services).where(eq(services.orgId, orgId)).orderBy(asc(services.nameLower)),
    db.select().from(technicians).where(eq(technicians.orgId, orgId)).orderBy(asc(technicians.id)),
  ] as const;

export const serviceOf = (row: ServiceRow): Service => ({
  id: row.id,
  name: row.name,
  durationMinutes: row.durationMinutes,
  bufferMinutes: row.bufferMinutes,
  arrivalWindowMinutes: row.arrivalWindowMinutes,
  skills: row.skills,
  keywords: row.keywords,
  isDefault: row.isDefault,
  active: row.active,
});

export const technicianOf = (row: TechnicianRow): Technician => ({
  id: row.id,
  name: row.name,
  skills: row.skills,
  postalCodes: row.postalCodes,
  weeklyHours: row.weeklyHours ?? null,
  daysOff: row.daysOff,
  active: row.active,
});

export const catalogueOf = (serviceRows: ServiceRow[], technicianRows: TechnicianRow[]): Catalogue => ({
  services: serviceRows.map(serviceOf),
  technicians: technicianRows.map(technicianOf),
});

export async function readCatalogue(db: Db, orgId: string): Promise<Catalogue> {
  const [serviceRows, technicianRows] = await db.batch(catalogueQueries(db, orgId));
  return catalogueOf(serviceRows, technicianRows);
}

/** A service as the API and the CLI show it. */
export const serviceView = (s: Service): ServiceOut => ({
  id: s.id,
  name: s.name,
  durationMinutes: s.durationMinutes,
  bufferMinutes: s.bufferMinutes,
  arrivalWindowMinutes: s.arrivalWindowMinutes,
  skills: s.skills,
  keywords: s.keywords,
  default: s.isDefault,
  active: s.active,
});

/** A technician as the CLI shows it: its members in one order, whatever built it. */
export const technicianView = (t: Technician): Technician => ({
  id: t.id,
  name: t.name,
  skills: t.skills,
  postalCodes: t.postalCodes,
  weeklyHours: t.weeklyHours,
  daysOff: t.daysOff,
  active: t.active,
});

/** The org's zone, schedule and longest span: what a write of the CLI reads first (none: an unknown org). */
export const orgQuery = (db: Db, orgId: string) =>
  db
    .select({ timeZone: orgs.timeZone, schedule: orgs.schedule, maxSlotMinutes: orgs.maxSlotMinutes })
    .from(orgs)
    .where(eq(orgs.id, orgId));
