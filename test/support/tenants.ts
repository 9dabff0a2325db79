// Orgs for integration and security tests: each test makes its own through the
// same src/db function the admin CLI uses (createOrg), and reaches D1 directly
// only to set up or to check what the API cannot show.
import { env } from "cloudflare:test";
import { accounts, type KeyRole } from "../../drizzle/schema";
import { createKey } from "../../src/db/api-keys";
import { createDb } from "../../src/db/client";
import { createOrg, storeSchedule } from "../../src/db/orgs";
import { newId } from "../../src/lib/ids";
import type { Credentials } from "./http";
import { OPEN_ALWAYS } from "./schedules";

export { credentialsOf } from "./http";

export const db = () => createDb(env.DB);

export interface Tenant extends Credentials {
  keyId: string;
}

/** A new org (UTC, the default schedule) and its first key. */
export async function newTenant(name = "Test Org"): Promise<Tenant> {
  return createOrg(db(), { name, timeZone: "UTC" });
}

/** Another key of the tenant's org, of `role` (docs/api.md, "Key roles"): the same org, other rights. */
export async function withRole(tenant: Tenant, role: KeyRole): Promise<Tenant> {
  const { keyId, apiKey } = (await createKey(db(), tenant.orgId, role))!;
  return { orgId: tenant.orgId, keyId, apiKey };
}

export type ScheduleDocument = Parameters<typeof storeSchedule>[2];

/** Stores a UTC schedule, open around the clock with no notice, overridden by `document`. */
export const openAlways = (tenant: Tenant, document: ScheduleDocument = {}) =>
  storeSchedule(db(), tenant.orgId, { timeZone: "UTC", minNoticeMinutes: 0, weeklyHours: OPEN_ALWAYS, ...document });

/** A new org with openAlways(document) as its schedule. */
export async function openTenant(name?: string, document: ScheduleDocument = {}): Promise<Tenant> {
  const tenant = await newTenant(name);
  await openAlways(tenant, document);
  return tenant;
}

/** Inserts an account the way `accounts import` stores one. */
export async function addAccount(tenant: Tenant, name: string, fields: Partial<typeof accounts.$inferInsert> = {}) {
  const now = Date.now();
  const account = {
    id: newId("acct", now),
    orgId: tenant.orgId,
    name,
    nameLower: name.toLowerCase(),
    createdAt: now,
    updatedAt: now,
    ...fields,
  };
  await db().insert(accounts).values(account);
  return account;
}
