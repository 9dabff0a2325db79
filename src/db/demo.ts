// The demo organisation (docs/operations.md, "Running locally"), seeded
// idempotently by `npm run dev`. Its credentials are public, so it exists only
// in local state (the CLI refuses to seed it with --remote).
import { and, count, eq, sql } from "drizzle-orm";
import { accounts, apiKeys, holds, incidents, orgs, services, technicians } from "../../drizzle/schema";
import { hashApiKey } from "../lib/api-keys";
import { MINUTE } from "../lib/datetime";
import { randomHex } from "../lib/hash";
import { newId } from "../lib/ids";
import { phoneColumnsOf } from "../lib/phones";
import { DEFAULT_SCHEDULE, minutesOf, scheduleOf } from "../scheduling/schedule";
import { openingsOn } from "../scheduling/slots";
import { dateString, type LocalDate, localDateOf, localToInstant } from "../scheduling/zone";
import { type Db, inColumnOrder, insertWhere } from "./client";
import { type OccupancyCensus, overlapping } from "./occupancy";

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

/**
 * The next working day's visits (local times), so that GET /board shows a
 * day on a fresh clone: each technician's, as the booking would assign them
 * (skills, postal codes), none overlapping; Sam Ortiz's morning stays free
 * for the README's walk-through (a termite treatment at 08:00).
 */
const DEMO_VISITS = [
  { at: "09:00", technician: 2, service: 1, account: 1, insectName: "ants", postalCode: "10001" },
  { at: "14:00", technician: 2, service: 2, account: null, insectName: "mice", postalCode: "10016" },
  { at: "10:00", technician: 3, service: 2, account: 2, insectName: "rats", postalCode: "11217" },
  { at: "13:00", technician: 1, service: 1, account: 2, insectName: "roaches", postalCode: "11217" },
  { at: "11:00", technician: 4, service: 1, account: 3, insectName: "spiders", postalCode: "10701" },
  { at: "16:00", technician: 4, service: 1, account: null, insectName: "wasps", postalCode: "10705" },
] as const;

/** The held place: Marcus Lee at 15:00, for the 15 minutes a hold may last from the seed. */
const DEMO_HOLD = { at: "15:00", technician: 3, service: 1, postalCode: "11201", minutes: 15 } as const;

/** The demo's day: the first local date after today on which the demo's schedule opens. */
export function demoDate(now: number): LocalDate {
  const schedule = scheduleOf(DEMO.timeZone, DEFAULT_SCHEDULE);
  let date = localDateOf(now, DEMO.timeZone) + 1;
  while (openingsOn(schedule, date).length === 0) date++;
  return date;
}

/**
 * The demo's visits and hold on the next working day (the first local date
 * after today with opening hours), each inserted only while its technician
 * has nothing occupying its span (the engine's condition, overlapping): so a
 * second seed adds nothing, nor does one over a booking made since. The
 * visits' ids are the date's, the hold's a new one (an earlier run's has
 * expired). Seeded rows, not bookings: they record no event.
 */
function demoDay(db: Db, now: number) {
  const date = demoDate(now);
  const day = dateString(date).replaceAll("-", "");
  const census: OccupancyCensus = {
    org: { id: DEMO.orgId, maxBookingMs: DEMO_LONGEST_MINUTES * MINUTE },
    now,
    fresh: true,
  };
  const placed = (technician: number, serviceIndex: number, at: string) => {
    const service = DEMO_SERVICES[serviceIndex - 1]!;
    const startsAt = localToInstant(date, minutesOf(at), DEMO.timeZone);
    const endsAt = startsAt + service.durationMinutes * MINUTE;
    const occupiedUntil = endsAt + service.bufferMinutes * MINUTE;
    const technicianId = DEMO_TECHNICIANS[technician - 1]!.id;
    const span = { start: startsAt, end: occupiedUntil };
    const free = sql`NOT EXISTS (SELECT 1 FROM ${incidents} WHERE ${and(overlapping(incidents, census, span), eq(incidents.technicianId, technicianId))})
      AND NOT EXISTS (SELECT 1 FROM ${holds} WHERE ${and(overlapping(holds, census, span), eq(holds.technicianId, technicianId))})`;
    return { service, startsAt, endsAt, occupiedUntil, technicianId, free };
  };
  const visits = DEMO_VISITS.map((visit, i) => {
    const { service, free, ...times } = placed(visit.technician, visit.service, visit.at);
    const account = visit.account === null ? null : DEMO_ACCOUNTS[visit.account - 1]!;
    const id = `inc_demo${day}${String(i + 1).padStart(14, "0")}`;
    const row = inColumnOrder(incidents, {
      ...times,
      id,
      orgId: DEMO.orgId,
      status: "scheduled",
      clientName: account?.name ?? "Walk-in caller",
      insectName: visit.insectName,
      accountId: account?.id ?? null,
      serviceId: service.id,
      postalCode: visit.postalCode,
      arrivalWindowMinutes: service.arrivalWindowMinutes,
      createdAt: now,
      updatedAt: now,
    });
    const absent = sql`NOT EXISTS (SELECT 1 FROM ${incidents} WHERE ${eq(incidents.id, id)})`;
    return insertWhere(db, incidents, row, sql`${free} AND ${absent}`);
  });
  const { service, free, ...times } = placed(DEMO_HOLD.technician, DEMO_HOLD.service, DEMO_HOLD.at);
  const hold = inColumnOrder(holds, {
    ...times,
    id: newId("hold", now),
    orgId: DEMO.orgId,
    serviceId: service.id,
    postalCode: DEMO_HOLD.postalCode,
    expiresAt: now + DEMO_HOLD.minutes * MINUTE,
    createdAt: now,
  });
  return [...visits, insertWhere(db, holds, hold, free)] as const;
}

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
    ...demoDay(db, now),
  ]);
  return { orgId: DEMO.orgId, apiKey: DEMO.apiKey, accounts: seeded?.n ?? 0 };
}
