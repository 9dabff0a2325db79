// The demo organisation (docs/operations.md, "Running locally"), seeded
// idempotently by `npm run dev`. Its credentials are public, so it exists only
// in local state (the CLI refuses to seed it with --remote).
import { count, eq, sql } from "drizzle-orm";
import { accounts, apiKeys, orgs, services, technicians } from "../../drizzle/schema";
import { hashApiKey } from "../lib/api-keys";
import { randomHex } from "../lib/hash";
import { phoneColumnsOf } from "../lib/phones";
import type { Db } from "./client";

export const DEMO = {
  orgId: "org_demo",
  keyId: "key_demo0000000000000000000000",
  apiKey: "fsk_demo0000000000000000000000000000",
  timeZone: "America/New_York",
} as const;

const DEMO_ACCOUNTS = [
  {
    id: "acct_demo0000000000000000000001",
    name: "Acme Apartments",
    accountType: 1,
    email: "office@acme-apartments.example",
    businessPhone: "+1 212 555 0100",
    street1: "12 Elm Street",
    city: "New York",
    state: "NY",
    postalCode: "10001",
    country: "US",
  },
  {
    id: "acct_demo0000000000000000000002",
    name: "Blue Bakery",
    accountType: 2,
    email: "hello@bluebakery.example",
    businessPhone: "+1 718 555 0142",
    street1: "400 Atlantic Ave",
    city: "Brooklyn",
    state: "NY",
    postalCode: "11217",
    country: "US",
  },
  {
    id: "acct_demo0000000000000000000003",
    name: "Jane Homeowner",
    accountType: 0,
    email: "jane@example.com",
    mobilePhone: "+1 917 555 0199",
    street1: "7 Maple Lane",
    city: "Yonkers",
    state: "NY",
    postalCode: "10701",
    country: "US",
  },
];

const NO_DAYS_OFF: string[] = [];

/** Three services: general pest control (the default), rodent exclusion (an arrival window), termites (a licence). */
const DEMO_SERVICES = [
  {
    id: "svc_demo0000000000000000000001",
    name: "General pest control",
    durationMinutes: 60,
    bufferMinutes: 0,
    arrivalWindowMinutes: 0,
    skills: [],
    keywords: ["ants", "roaches", "cockroaches", "spiders", "bed bugs", "wasps"],
    isDefault: true,
  },
  {
    id: "svc_demo0000000000000000000002",
    name: "Rodent exclusion",
    durationMinutes: 120,
    bufferMinutes: 0,
    arrivalWindowMinutes: 120,
    skills: [],
    keywords: ["mice", "rats", "rodents"],
    isDefault: false,
  },
  {
    id: "svc_demo0000000000000000000003",
    name: "Termite treatment",
    durationMinutes: 180,
    bufferMinutes: 30,
    arrivalWindowMinutes: 120,
    skills: ["termite-license"],
    keywords: ["termites", "white ants"],
    isDefault: false,
  },
];

/** Four technicians on New York postal prefixes; Sam Ortiz alone holds the termite licence. */
const DEMO_TECHNICIANS = [
  { id: "tech_demo000000000000000000001", name: "Sam Ortiz", skills: ["termite-license"], postalCodes: ["112", "100"] },
  { id: "tech_demo000000000000000000002", name: "Priya Shah", skills: [], postalCodes: ["100", "101", "102"] },
  { id: "tech_demo000000000000000000003", name: "Marcus Lee", skills: [], postalCodes: ["112", "113"] },
  { id: "tech_demo000000000000000000004", name: "Dana Kim", skills: [], postalCodes: ["104", "107"] },
];

/** The longest span a demo visit occupies: the termite treatment and its buffer. */
const DEMO_LONGEST_MINUTES = 210;

export async function seedDemo(db: Db, now = Date.now()) {
  const keyHash = await hashApiKey(DEMO.apiKey);
  const [, , , [seeded]] = await db.batch([
    db
      .insert(orgs)
      .values({
        id: DEMO.orgId,
        name: "Demo Pest Control",
        timeZone: DEMO.timeZone,
        cursorSecret: randomHex(32),
        createdAt: now,
      })
      .onConflictDoNothing(),
    db.insert(apiKeys).values({ id: DEMO.keyId, orgId: DEMO.orgId, keyHash, createdAt: now }).onConflictDoNothing(),
    db
      .insert(accounts)
      .values(
        DEMO_ACCOUNTS.map((a) => ({
          ...a,
          ...phoneColumnsOf(a, "US"),
          orgId: DEMO.orgId,
          nameLower: a.name.toLowerCase(),
          createdAt: now,
          updatedAt: now,
        })),
      )
      .onConflictDoNothing(),
    db.select({ n: count() }).from(accounts).where(eq(accounts.orgId, DEMO.orgId)),
    db
      .insert(services)
      .values(
        DEMO_SERVICES.map((s) => ({
          ...s,
          orgId: DEMO.orgId,
          nameLower: s.name.toLowerCase(),
          active: true,
          createdAt: now,
          updatedAt: now,
        })),
      )
      .onConflictDoNothing(),
    db
      .insert(technicians)
      .values(
        DEMO_TECHNICIANS.map((t) => ({
          ...t,
          orgId: DEMO.orgId,
          weeklyHours: null,
          daysOff: NO_DAYS_OFF,
          active: true,
          createdAt: now,
          updatedAt: now,
        })),
      )
      .onConflictDoNothing(),
    db
      .update(orgs)
      .set({ maxSlotMinutes: sql`max(${orgs.maxSlotMinutes}, ${DEMO_LONGEST_MINUTES})` })
      .where(eq(orgs.id, DEMO.orgId)),
  ]);
  return { orgId: DEMO.orgId, apiKey: DEMO.apiKey, accounts: seeded?.n ?? 0 };
}
