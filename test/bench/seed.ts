// Seeds the benchmark's two organisations into a local state folder, through
// the admin CLI's own code (org, key, schedule) and the same bulk path as
// `accounts import` (multi-row INSERT … SELECT FROM json_each, in one batch):
// a heavy org with 100,000 contacts and 20,000 bookings spread over a year
// (each booking with the phone of a contact, so that find-caller finds some),
// and an empty org with the same schedule; a technician-mode org (seedFleet);
// and empty orgs to hold slots in (an org keeps at most 100 live holds).

import { eq } from "drizzle-orm";
import { contacts, incidents, orgs, services, technicians } from "../../drizzle/schema";
import { connect } from "../../src/cli/connect";
import { insertAccounts } from "../../src/db/accounts";
import { createKey } from "../../src/db/api-keys";
import { createDb, type Db } from "../../src/db/client";
import { createOrg, storeSchedule } from "../../src/db/orgs";
import { newId } from "../../src/lib/ids";
import { candidateSlots } from "../../src/scheduling/slots";
import { importAccount } from "../../src/schemas/accounts";
import { DAY } from "../support/time";

const ROWS_PER_STATEMENT = 1_000;

export const BENCH_SCHEDULE = {
  timeZone: "America/New_York",
  slotMinutes: 60,
  capacity: 12,
  minNoticeMinutes: 60,
  horizonDays: 365,
  weeklyHours: Object.fromEntries(
    (["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const).map((day) => [
      day,
      day === "sun" ? [] : [["08:00", "18:00"]],
    ]),
  ) as Record<"mon" | "tue" | "wed" | "thu" | "fri" | "sat" | "sun", [string, string][]>,
};
/** At most this many seeded bookings per slot, so the benchmark's own bookings still fit (capacity 12). */
const SEEDED_PER_SLOT = 8;

/** Contact i's number (E.164): valid, distinct, in New York's 917 area. */
const phoneDigits = (i: number) => `+1917${2_000_000 + i}`;

/** A seeded booking to move between its slot and the next (neither filled by the move). */
export interface Move {
  id: string;
  from: number;
  to: number;
}

export interface BenchOrg {
  orgId: string;
  apiKey: string;
  accountId: string;
}

/** Inserts `rows` (arrays in `columns` order) with one JSON parameter per statement, all in one atomic batch. */
async function bulkInsert(d1: D1Database, table: string, columns: string[], orgId: string, rows: unknown[][]) {
  const sql = `INSERT INTO ${table} (org_id, ${columns.join(", ")}) SELECT ?1, ${columns.map((_, i) => `value ->> ${i}`).join(", ")} FROM json_each(?2)`;
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
    statements.push(d1.prepare(sql).bind(orgId, JSON.stringify(rows.slice(i, i + ROWS_PER_STATEMENT))));
  }
  await d1.batch(statements);
}

/** SQL names of a drizzle table's columns. */
const col = <K extends string>(table: Record<K, { name: string }>, names: K[]) => names.map((name) => table[name].name);

async function newOrg(db: Db, name: string, accountCount: number, now: number): Promise<BenchOrg> {
  const { orgId, apiKey } = await createOrg(db, { name, timeZone: BENCH_SCHEDULE.timeZone, now });
  await storeSchedule(db, orgId, BENCH_SCHEDULE);
  // The same bulk insert as `accounts import`.
  const rows = Array.from({ length: accountCount }, (_, i) => importAccount().parse({ name: `Account ${i}` }));
  const { accounts } = (await insertAccounts(db, orgId, rows, now))!;
  return { orgId, apiKey, accountId: accounts[0]!.id };
}

export async function seed(
  stateDir: string,
  contactCount: number,
  bookingCount: number,
  { holdOrgs = 0, now = Date.now() }: { holdOrgs?: number; now?: number } = {},
) {
  const { d1, dispose } = await connect({ remote: false, persistTo: stateDir });
  try {
    const db = createDb(d1);
    const heavy = await newOrg(db, "Bench Heavy", 1_000, now);
    const empty = await newOrg(db, "Bench Empty", 1, now);
    // A voice agent's key of the heavy org (docs/api.md, "Key roles"), bound to the caller its calls report.
    const agentKey = (await createKey(db, heavy.orgId, "agent", now))!.apiKey;
    const holders: BenchOrg[] = [];
    for (let i = 0; i < holdOrgs; i++) holders.push(await newOrg(db, `Bench Holds ${i}`, 1, now));

    let started = performance.now();
    const accountIds = (
      await d1.prepare("SELECT id FROM accounts WHERE org_id = ?").bind(heavy.orgId).raw<[string]>()
    ).map(([id]) => id);
    const contactRows = Array.from({ length: contactCount }, (_, i) => {
      // Distinct creation times, one per second back from now, like a CRM filled over a day.
      const at = now - (contactCount - i) * 1_000;
      const email = `contact${i}@example.com`;
      return [
        newId("ct", at),
        `First${i}`,
        `Last${i}`,
        email,
        email,
        `(917) ${phoneDigits(i).slice(5, 8)}-${phoneDigits(i).slice(8)}`,
        phoneDigits(i),
        accountIds[i % accountIds.length],
        at,
        at,
      ];
    });
    await bulkInsert(
      d1,
      "contacts",
      col(contacts, [
        "id",
        "firstName",
        "lastName",
        "email",
        "emailLower",
        "mobilePhone",
        "mobileE164",
        "accountId",
        "createdAt",
        "updatedAt",
      ]),
      heavy.orgId,
      contactRows,
    );
    const contactsSeconds = (performance.now() - started) / 1000;

    started = performance.now();
    // Bookings over a year, half past and half to come, at random slots of the
    // opening hours (a deterministic generator: every run seeds the same year).
    const schedule = { ...BENCH_SCHEDULE, closedDates: [] };
    const slots = [...candidateSlots(schedule, now - 182 * DAY, now + 183 * DAY)];
    const perSlot = new Uint8Array(slots.length);
    const bookingRows: unknown[][] = [];
    // One booking of each slot from day 120 on, to be moved to the next slot and back (reschedule):
    // with the benchmark's own bookings, no slot gets more than 8 + 2 of its 12 places.
    const moves: Move[] = [];
    const movedFrom = new Set<number>();
    // The first booking, of its number's contact (n = 1: contact 1's number and account), for a bound read.
    let callerIncident: { id: string; phone: string } | undefined;
    for (let n = 1; bookingRows.length < bookingCount; n++) {
      const index = (n * 2_654_435_761) % slots.length;
      if (perSlot[index]! >= SEEDED_PER_SLOT) continue;
      perSlot[index]!++;
      const slot = slots[index]!;
      const id = newId("inc", slot.start);
      callerIncident ??= { id, phone: phoneDigits(n % contactCount) };
      bookingRows.push([
        id,
        `Client ${n}`,
        "Ants",
        accountIds[n % accountIds.length],
        phoneDigits(n % contactCount),
        slot.start,
        slot.end,
        slot.start,
        slot.start,
      ]);
      const next = slots[index + 1];
      if (slot.start > now + 120 * DAY && next && !movedFrom.has(index)) {
        movedFrom.add(index);
        moves.push({ id, from: slot.start, to: next.start });
      }
    }
    await bulkInsert(
      d1,
      "incidents",
      col(incidents, [
        "id",
        "clientName",
        "insectName",
        "accountId",
        "phone",
        "startsAt",
        "endsAt",
        "createdAt",
        "updatedAt",
      ]),
      heavy.orgId,
      bookingRows,
    );
    const bookingsSeconds = (performance.now() - started) / 1000;
    const fleet = await seedFleet(db, d1, now);
    return {
      heavy,
      empty,
      fleet,
      contacts: contactCount,
      bookings: bookingRows.length,
      contactsSeconds,
      bookingsSeconds,
      moves,
      caller: phoneDigits(0),
      callerIncident: callerIncident!,
      agent: { orgId: heavy.orgId, apiKey: agentKey, accountId: heavy.accountId } satisfies BenchOrg,
      holders,
    };
  } finally {
    await dispose();
  }
}

const FLEET_TECHNICIANS = 20;
const FLEET_VISITS = 5_000;

/** A technician-mode org: its services and the postal code its visits are asked for. */
export interface FleetOrg extends BenchOrg {
  /** The default service: general pest control, 60 minutes. */
  general: string;
  /** Termite treatment: 180 minutes and a 30-minute buffer, a licence. */
  termite: string;
  postalCode: string;
}

/**
 * A technician-mode org: 3 services (60 minutes, 120 with a window, 180 + 30
 * with a licence), 20 technicians over 4 postal prefixes (every fourth
 * licensed), and 5,000 visits over the year, each with a technician free for
 * it (no technician's visits overlap), as create-incident would leave them.
 */
async function seedFleet(db: Db, d1: D1Database, now: number): Promise<FleetOrg> {
  const org = await newOrg(db, "Bench Fleet", 1, now);
  const service = (name: string, durationMinutes: number, extra: Partial<typeof services.$inferInsert> = {}) => ({
    id: newId("svc", now),
    orgId: org.orgId,
    name,
    nameLower: name.toLowerCase(),
    durationMinutes,
    skills: [],
    keywords: [],
    createdAt: now,
    updatedAt: now,
    ...extra,
  });
  const rows = [
    service("General pest control", 60, { isDefault: true }),
    service("Rodent exclusion", 120, { arrivalWindowMinutes: 120 }),
    service("Termite treatment", 180, { bufferMinutes: 30, skills: ["termite-license"] }),
  ];
  const techs = Array.from({ length: FLEET_TECHNICIANS }, (_, i) => ({
    id: newId("tech", now),
    orgId: org.orgId,
    name: `Technician ${i}`,
    skills: i % 4 === 0 ? ["termite-license"] : [],
    postalCodes: [["100"], ["112"], ["104"], ["113"]][i % 4]!,
    daysOff: [],
    createdAt: now,
    updatedAt: now,
  }));
  // One row per statement: D1 binds at most 100 parameters to one.
  await db.batch([
    db.update(orgs).set({ maxSlotMinutes: 210 }).where(eq(orgs.id, org.orgId)),
    ...rows.map((row) => db.insert(services).values(row)),
    ...techs.map((tech) => db.insert(technicians).values(tech)),
  ]);
  const schedule = { ...BENCH_SCHEDULE, closedDates: [] };
  const slots = [...candidateSlots(schedule, now - 182 * DAY, now + 183 * DAY)];
  // Each technician's busy slots: a visit takes its slot and, for the long services, the next ones.
  const busy = techs.map(() => new Set<number>());
  const visitRows: unknown[][] = [];
  for (let n = 1; visitRows.length < FLEET_VISITS; n++) {
    const index = (n * 2_654_435_761) % slots.length;
    const kind = rows[n % 3]!;
    const tech = n % FLEET_TECHNICIANS;
    const hours = Math.ceil((kind.durationMinutes + (kind.bufferMinutes ?? 0)) / 60);
    const taken = Array.from({ length: hours }, (_, h) => index + h);
    if (taken.some((i) => busy[tech]!.has(i) || !slots[i])) continue;
    for (const i of taken) busy[tech]!.add(i);
    const start = slots[index]!.start;
    const end = start + kind.durationMinutes * 60_000;
    visitRows.push([
      newId("inc", start),
      `Client ${n}`,
      "Ants",
      start,
      end,
      end + (kind.bufferMinutes ?? 0) * 60_000,
      kind.id,
      techs[tech]!.id,
      "11201",
      start,
      start,
    ]);
  }
  await bulkInsert(
    d1,
    "incidents",
    col(incidents, [
      "id",
      "clientName",
      "insectName",
      "startsAt",
      "endsAt",
      "occupiedUntil",
      "serviceId",
      "technicianId",
      "postalCode",
      "createdAt",
      "updatedAt",
    ]),
    org.orgId,
    visitRows,
  );
  // 10001: the licensed technicians' area (every fourth covers 100).
  return { ...org, general: rows[0]!.id, termite: rows[2]!.id, postalCode: "10001" };
}
