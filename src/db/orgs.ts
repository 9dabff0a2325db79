// Organisations and their schedules (docs/operations.md, "The admin CLI").
// Functions return a value, or null when the org does not exist; the admin CLI
// turns null into its error.
import { eq, sql } from "drizzle-orm";
import { apiKeys, orgs } from "../../drizzle/schema";
import { generateApiKey, hashApiKey } from "../lib/api-keys";
import { randomHex } from "../lib/hash";
import { newId } from "../lib/ids";
import { resolveDocument, type Schedule, type ScheduleDocument, scheduleOf } from "../scheduling/schedule";
import type { Catalogue } from "../scheduling/visits";
import type { Db } from "./client";

/** An org as every request of it sees it (read with its key by the auth middleware). */
export interface Org {
  id: string;
  name: string;
  /** Where a phone number written without "+" is read (ISO 3166-1 alpha-2). */
  country: string;
  schedule: Schedule;
  /** No visit of this org occupies longer: the longest slotMinutes or service span it has had. */
  maxBookingMs: number;
  /** The HMAC key of its list cursors (hex); never sent to a client. */
  cursorSecret: string;
  /** Its services and technicians, inactive ones too. */
  catalogue: Catalogue;
}

export interface NewOrg {
  name: string;
  /** An IANA zone (the caller checks it with isTimeZone). */
  timeZone: string;
  /** ISO 3166-1 alpha-2 (the caller checks it with isPhoneCountry); "US" when absent. */
  country?: string;
  now?: number;
}

/** A new org and its first key, written together; the key is returned once, only its hash is stored. */
export async function createOrg(db: Db, { name, timeZone, country = "US", now = Date.now() }: NewOrg) {
  const orgId = newId("org", now);
  const keyId = newId("key", now);
  const apiKey = generateApiKey();
  await db.batch([
    db.insert(orgs).values({ id: orgId, name, timeZone, country, cursorSecret: randomHex(32), createdAt: now }),
    db.insert(apiKeys).values({ id: keyId, orgId, keyHash: await hashApiKey(apiKey), createdAt: now }),
  ]);
  return { orgId, keyId, apiKey };
}

export async function orgExists(db: Db, orgId: string): Promise<boolean> {
  const [org] = await db.select({ id: orgs.id }).from(orgs).where(eq(orgs.id, orgId));
  return org !== undefined;
}

/** The org's country; null for an unknown org. */
export async function countryOf(db: Db, orgId: string): Promise<string | null> {
  const [org] = await db.select({ country: orgs.country }).from(orgs).where(eq(orgs.id, orgId));
  return org?.country ?? null;
}

/** Changes the org's country (phones without "+" are read in it); null for an unknown org. */
export async function setCountry(db: Db, orgId: string, country: string) {
  const [org] = await db.update(orgs).set({ country }).where(eq(orgs.id, orgId)).returning({ country: orgs.country });
  return org ? { orgId, country: org.country } : null;
}

export async function getSchedule(db: Db, orgId: string): Promise<Schedule | null> {
  const [org] = await db
    .select({ timeZone: orgs.timeZone, schedule: orgs.schedule })
    .from(orgs)
    .where(eq(orgs.id, orgId));
  return org ? scheduleOf(org.timeZone, org.schedule) : null;
}

/** Stores a validated document in one statement; members it leaves out take their defaults, except the zone, which is kept. */
export async function storeSchedule(db: Db, orgId: string, document: ScheduleDocument): Promise<Schedule | null> {
  const { timeZone: _ignored, ...stored } = resolveDocument(document, "UTC");
  const [org] = await db
    .update(orgs)
    .set({
      ...(document.timeZone ? { timeZone: document.timeZone } : {}),
      schedule: stored,
      // Only grows: bookings made under a longer slot length still count.
      maxSlotMinutes: sql`max(${orgs.maxSlotMinutes}, ${stored.slotMinutes})`,
    })
    .where(eq(orgs.id, orgId))
    .returning({ timeZone: orgs.timeZone });
  return org ? scheduleOf(org.timeZone, stored) : null;
}
