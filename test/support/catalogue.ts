// Services and technicians for workerd tests, stored as the admin CLI stores
// them (and the org's longest span raised likewise), without going through the
// CLI: these tests are about what the API does with them.
import { eq, sql } from "drizzle-orm";
import { orgs, services, technicians } from "../../drizzle/schema";
import { newId } from "../../src/lib/ids";
import { normalisePostalCode } from "../../src/scheduling/visits";
import { db, type Tenant } from "./tenants";

export type NewService = Partial<Omit<typeof services.$inferInsert, "orgId">> & {
  name: string;
  durationMinutes: number;
};

export async function addService(tenant: Tenant, fields: NewService) {
  const now = Date.now();
  const row = {
    id: newId("svc", now),
    orgId: tenant.orgId,
    nameLower: fields.name.toLowerCase(),
    bufferMinutes: 0,
    arrivalWindowMinutes: 0,
    skills: [],
    keywords: [],
    isDefault: false,
    active: true,
    createdAt: now,
    updatedAt: now,
    ...fields,
  };
  const span = row.durationMinutes + row.bufferMinutes;
  await db().batch([
    db().insert(services).values(row),
    db()
      .update(orgs)
      .set({ maxSlotMinutes: sql`max(${orgs.maxSlotMinutes}, ${span})` })
      .where(eq(orgs.id, tenant.orgId)),
  ]);
  return row;
}

export type NewTechnician = Partial<Omit<typeof technicians.$inferInsert, "orgId">> & { name: string };

export async function addTechnician(tenant: Tenant, fields: NewTechnician) {
  const now = Date.now();
  const row = {
    id: newId("tech", now),
    orgId: tenant.orgId,
    skills: [],
    daysOff: [],
    weeklyHours: null,
    active: true,
    createdAt: now,
    updatedAt: now,
    ...fields,
    postalCodes: (fields.postalCodes ?? []).map(normalisePostalCode),
  };
  await db().insert(technicians).values(row);
  return row;
}
