// An org's services and technicians (docs/api.md, "Services and technicians"):
// read with the org by the auth middleware, so every request has them; and
// written by the admin CLI (docs/operations.md), whose functions return null
// for an unknown org and say why they refused anything else.
import { and, asc, count, eq, gt, lt, ne, or, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { alias } from "drizzle-orm/sqlite-core";
import { events, holds, incidents, orgs, services, technicians } from "../../drizzle/schema";
import { newId } from "../lib/ids";
import { type Schedule, scheduleOf } from "../scheduling/schedule";
import type { Booking } from "../scheduling/slots";
import {
  assignmentOrder,
  type Catalogue,
  normalisePostalCode,
  type Plan,
  type Service,
  type Technician,
} from "../scheduling/visits";
import { dateString, localDateOf, localToInstant } from "../scheduling/zone";
import type { ServiceOut } from "../schemas/services";
import { type Db, insertWhere } from "./client";
import { actorOf, recordEvent } from "./events";
import { type IncidentRow, incidentView } from "./incidents";

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

// ---------------------------------------------------------------------------
// Writes of the admin CLI.

/** The most services an org may define (GET /api/v1/services lists them all, unpaged). */
export const MAX_SERVICES = 200;

const MINUTE = 60_000;

/** A new service's fields; `active` is left out: a new service is active. */
export type ServiceFields = Omit<Service, "id" | "active">;
export type ServiceChanges = Partial<Omit<Service, "id">>;
export type TechnicianFields = Omit<Technician, "id">;
export type TechnicianChanges = Partial<TechnicianFields>;

export type ServiceWrite =
  | { service: ServiceOut }
  | { refused: "unknown_service" }
  /** `by`: the service holding the name, when known (a racing write: not). */
  | { refused: "name_taken"; by?: string }
  | { refused: "too_many" }
  | { refused: "inactive_default" };

/** Written as a literal, not a parameter, so that the planner may use the partial index of scheduled incidents. */
const isScheduled = sql`${incidents.status} = 'scheduled'`;

const orgQuery = (db: Db, orgId: string) =>
  db
    .select({ timeZone: orgs.timeZone, schedule: orgs.schedule, maxSlotMinutes: orgs.maxSlotMinutes })
    .from(orgs)
    .where(eq(orgs.id, orgId));

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

/**
 * A statement that makes its batch fail, and so roll back whole (a D1 batch
 * is one transaction), when `condition` holds: it would insert an event with
 * no body into a NOT NULL column. What a batch cannot decide statement by
 * statement (all of its conditional updates applied, no overlap they made)
 * it checks at its end with this.
 */
const failIf = (db: Db, orgId: string, condition: SQL) =>
  insertWhere(
    db,
    events,
    {
      seq: sql`NULL`,
      id: "evt_guard",
      orgId,
      type: "incident.reassigned",
      createdAt: 0,
      body: sql`NULL`,
      enqueuedAt: null,
    },
    condition,
  );

/** The error of a batch that failIf stopped. */
const stoppedByGuard = (error: unknown) => /NOT NULL constraint failed: events\.body/.test(errorText(error));

/** The unique index on (org, lower-cased name), which a racing add or rename can meet. */
const nameClash = (error: unknown) =>
  /UNIQUE constraint failed: services\.org_id, services\.name_lower/.test(errorText(error));

const errorText = (error: unknown): string =>
  error instanceof Error
    ? `${error.message} ${error.cause === undefined ? "" : errorText(error.cause)}`
    : String(error);

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
      failIf(db, orgId, tooMany),
    ]);
  } catch (error) {
    if (stoppedByGuard(error)) return { refused: "too_many" };
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

const technicianRow = (orgId: string, t: Technician, now: number) => ({ ...t, orgId, createdAt: now, updatedAt: now });

/** JSON text as SQL: an INSERT … SELECT (insertWhere) binds values as they are, without the columns' JSON mode. */
const json = (value: unknown) => (value === null ? null : sql`${JSON.stringify(value)}`);

/** The statement adding `t`, only while the org exists (the org is checked and written in one statement). */
const insertTechnician = (db: Db, orgId: string, t: Technician, now: number) =>
  insertWhere(
    db,
    technicians,
    {
      ...technicianRow(orgId, t, now),
      skills: json(t.skills)!,
      postalCodes: json(t.postalCodes)!,
      weeklyHours: json(t.weeklyHours),
      daysOff: json(t.daysOff)!,
    },
    sql`EXISTS (SELECT 1 FROM ${orgs} WHERE ${eq(orgs.id, orgId)})`,
  );

/** Adds a technician in one statement that checks the org; null for an unknown org. */
export async function addTechnician(
  db: Db,
  orgId: string,
  fields: TechnicianFields,
  now = Date.now(),
): Promise<Technician | null> {
  const technician: Technician = { ...fields, id: newId("tech", now) };
  const { meta } = await insertTechnician(db, orgId, technician, now);
  return meta.changes === 1 ? technicianView(technician) : null;
}

/**
 * Adds every technician of a file in one batch (all or none), each in one
 * statement of at most ten parameters (D1 allows 100). Ids follow the file's
 * order (a millisecond apart), as assignment breaks ties by id.
 */
export async function importTechnicians(db: Db, orgId: string, fields: TechnicianFields[], now = Date.now()) {
  const added: Technician[] = fields.map((f, i) => ({ ...f, id: newId("tech", now + i) }));
  const [first, ...rest] = added.map((t) => insertTechnician(db, orgId, t, now));
  if (!first) return (await orgQuery(db, orgId)).length === 0 ? null : { imported: 0, technicians: [] };
  const [result] = await db.batch([first, ...rest]);
  if (result.meta.changes !== 1) return null;
  return { imported: added.length, technicians: added.map(({ id, name }) => ({ id, name })) };
}

/** Every technician of the org, inactive ones too, by id (the order they were added); null for an unknown org. */
export async function listTechnicians(db: Db, orgId: string): Promise<Technician[] | null> {
  const [[org], rows] = await db.batch([orgQuery(db, orgId), catalogueQueries(db, orgId)[1]]);
  return org ? rows.map((row) => technicianView(technicianOf(row))) : null;
}

export type TechnicianUpdate =
  | { technician: Technician; reassigned: string[] }
  | { refused: "unknown_technician" }
  /** Future visits the change would strand (no --reassign), or that no other technician can take. */
  | { refused: "stranded" | "unplaced"; incidentIds: string[] }
  /** The visits changed between the read and the write: nothing was written. */
  | { refused: "changed" };

/** A visit moving from the technician being changed to another one. */
interface Move {
  row: IncidentRow;
  to: string;
}

/**
 * Changes a technician without ever stranding a visit (docs/api.md,
 * "Technicians"). A future scheduled visit of theirs that the change would
 * make them unable to do (deactivated, a day off that date, a skill or the
 * coverage of its postal code lost) is refused, or with `reassign` moved to
 * another technician who could have been assigned it: eligible, on duty and
 * free for its span, the fewest visits that local day first, ties by id. If
 * any cannot move, nothing changes. The change, the moves and one
 * `incident.reassigned` event per move are one batch, which a final guard
 * makes fail whole if the visits changed since they were read.
 */
export async function updateTechnician(
  db: Db,
  orgId: string,
  id: string,
  changes: TechnicianChanges,
  { reassign = false, now = Date.now() }: { reassign?: boolean; now?: number } = {},
): Promise<TechnicianUpdate | null> {
  const [[org], serviceRows, technicianRows, visits] = await db.batch([
    orgQuery(db, orgId),
    ...catalogueQueries(db, orgId),
    db
      .select()
      .from(incidents)
      .where(and(eq(incidents.orgId, orgId), isScheduled, eq(incidents.technicianId, id), gt(incidents.startsAt, now)))
      .orderBy(asc(incidents.startsAt), asc(incidents.id)),
  ]);
  if (!org) return null;
  const row = technicianRows.find((t) => t.id === id);
  if (!row) return { refused: "unknown_technician" };
  const before = technicianOf(row);
  const after: Technician = { ...before, ...changes };
  const schedule = scheduleOf(org.timeZone, org.schedule);
  const catalogue = catalogueOf(serviceRows, technicianRows);
  const needs = (visit: IncidentRow) => needsOf(visit, catalogue.services, schedule.timeZone);
  const stranded = visits.filter((visit) => strands(before, after, needs(visit)));
  if (stranded.length > 0 && !reassign) return { refused: "stranded", incidentIds: stranded.map((v) => v.id) };

  let moves: Move[] = [];
  if (stranded.length > 0) {
    const others = catalogue.technicians.filter((t) => t.id !== id);
    const booked = await bookingsAround(db, orgId, stranded, schedule.timeZone, org.maxSlotMinutes * MINUTE, now);
    const placed = place(stranded, { ...catalogue, technicians: others }, schedule, booked);
    if (placed.unplaced.length > 0) return { refused: "unplaced", incidentIds: placed.unplaced };
    moves = placed.moves;
  }

  const { id: _id, orgId: _org, createdAt: _created, ...stored } = technicianRow(orgId, after, now);
  const guard = or(
    movesUndone(orgId, moves, now),
    movesOverlap(orgId, moves, now),
    // A visit booked meanwhile that this change might strand (it was not checked).
    restricts(before, after) ? unseenVisits(orgId, id, now, visits) : undefined,
  );
  try {
    await db.batch([
      db
        .update(technicians)
        .set(stored)
        .where(and(eq(technicians.orgId, orgId), eq(technicians.id, id))),
      ...moves.flatMap((move) => moveStatements(db, orgId, move, schedule.timeZone, now)),
      ...(guard ? [failIf(db, orgId, guard)] : []),
    ]);
  } catch (error) {
    if (stoppedByGuard(error)) return { refused: "changed" };
    throw error;
  }
  return { technician: technicianView(after), reassigned: moves.map((m) => m.row.id) };
}

/** What a visit needs of its technician: its local date, its service's skills, and its place (normalised). */
interface Needs {
  date: string;
  skills: string[];
  postalCode: string | null;
}

function needsOf(visit: IncidentRow, serviceList: Service[], timeZone: string): Needs {
  return {
    date: dateOf(visit.startsAt, timeZone),
    skills: serviceList.find((s) => s.id === visit.serviceId)?.skills ?? [],
    postalCode: visit.postalCode === null ? null : normalisePostalCode(visit.postalCode),
  };
}

const dateOf = (instant: number, timeZone: string) => dateString(localDateOf(instant, timeZone));

const covers = (t: Technician, postalCode: string) =>
  t.postalCodes.length === 0 || t.postalCodes.some((prefix) => postalCode.startsWith(prefix));

/**
 * Whether the change from `before` to `after` makes the technician unable to
 * do a visit with these needs, by one of the four things a change can take
 * away. Only what the change takes counts: a visit that already fell short
 * (its service gained a skill after it was booked) does not block an
 * unrelated change.
 */
function strands(before: Technician, after: Technician, needs: Needs): boolean {
  if (before.active && !after.active) return true;
  if (!before.daysOff.includes(needs.date) && after.daysOff.includes(needs.date)) return true;
  if (needs.skills.some((s) => before.skills.includes(s) && !after.skills.includes(s))) return true;
  return needs.postalCode !== null && covers(before, needs.postalCode) && !covers(after, needs.postalCode);
}

/** Whether the change takes anything away at all (so that some visit could be stranded by it). */
function restricts(before: Technician, after: Technician): boolean {
  const narrower =
    after.postalCodes.length > 0 &&
    (before.postalCodes.length === 0 ||
      before.postalCodes.some((p) => !after.postalCodes.some((q) => p.startsWith(q))));
  return (
    (before.active && !after.active) ||
    after.daysOff.some((d) => !before.daysOff.includes(d)) ||
    before.skills.some((s) => !after.skills.includes(s)) ||
    narrower
  );
}

/**
 * The scheduled visits (any technician) that could overlap the stranded
 * ones or start on one of their local days, and the holds live at `now` that
 * could overlap them: from the start of the first one's day, less the longest
 * span a visit occupies, to the end of the last one's day or occupied span.
 */
async function bookingsAround(
  db: Db,
  orgId: string,
  visits: IncidentRow[],
  timeZone: string,
  longestSpanMs: number,
  now: number,
): Promise<{ visits: Booking[]; held: Booking[] }> {
  const dayStart = (instant: number) => localToInstant(localDateOf(instant, timeZone), 0, timeZone);
  const dayEnd = (instant: number) => localToInstant(localDateOf(instant, timeZone) + 1, 0, timeZone);
  const from = dayStart(visits[0]!.startsAt) - longestSpanMs;
  const until = Math.max(...visits.map((v) => Math.max(dayEnd(v.startsAt), v.occupiedUntil)));
  const rows = await db
    .select({
      held: sql<number>`0`,
      startsAt: incidents.startsAt,
      endsAt: incidents.occupiedUntil,
      technicianId: incidents.technicianId,
    })
    .from(incidents)
    .where(and(eq(incidents.orgId, orgId), isScheduled, gt(incidents.startsAt, from), lt(incidents.startsAt, until)))
    .unionAll(
      db
        .select({
          held: sql<number>`1`,
          startsAt: holds.startsAt,
          endsAt: holds.occupiedUntil,
          technicianId: holds.technicianId,
        })
        .from(holds)
        .where(
          and(eq(holds.orgId, orgId), gt(holds.startsAt, from), lt(holds.startsAt, until), gt(holds.expiresAt, now)),
        ),
    );
  const of = (held: number) => rows.filter((r) => r.held === held).map(({ held: _, ...booking }) => booking);
  return { visits: of(0), held: of(1) };
}

/**
 * Where each visit goes, in order: the first technician `assignmentOrder`
 * gives for it, counting the visits placed before it in this run as booked.
 * `catalogue.technicians` leaves out the technician the visits leave.
 */
function place(
  visits: IncidentRow[],
  catalogue: Catalogue,
  schedule: Schedule,
  around: { visits: Booking[]; held: Booking[] },
): { moves: Move[]; unplaced: string[] } {
  // A live hold keeps its technician busy, but is not one of their visits of the day.
  const booked = [...around.visits];
  const moves: Move[] = [];
  const unplaced: string[] = [];
  for (const row of visits) {
    const needs = needsOf(row, catalogue.services, schedule.timeZone);
    const plan: Plan = {
      schedule,
      // As booked: its own span and buffer, its service's skills now.
      visit: {
        serviceId: row.serviceId,
        durationMs: row.endsAt - row.startsAt,
        bufferMs: row.occupiedUntil - row.endsAt,
        windowMs: row.arrivalWindowMinutes * MINUTE,
        skills: needs.skills,
      },
      technicians: catalogue.technicians,
      postalCode: needs.postalCode,
    };
    const sameDay = booked.filter((b) => dateOf(b.startsAt, schedule.timeZone) === needs.date);
    const [chosen] = assignmentOrder(plan, [...booked, ...around.held], row.startsAt, sameDay);
    if (!chosen) {
      unplaced.push(row.id);
      continue;
    }
    moves.push({ row, to: chosen.id });
    booked.push({ startsAt: row.startsAt, endsAt: row.occupiedUntil, technicianId: chosen.id });
  }
  return { moves, unplaced };
}

/**
 * A move: the incident's technician, only while it is still scheduled with
 * the one it leaves, at the times and updatedAt that were read; and its
 * `incident.reassigned` event (recorded only if the move is in place).
 */
function moveStatements(db: Db, orgId: string, { row, to }: Move, timeZone: string, now: number) {
  const update = db
    .update(incidents)
    .set({ technicianId: to, updatedAt: now })
    .where(
      and(
        eq(incidents.orgId, orgId),
        eq(incidents.id, row.id),
        isScheduled,
        eq(incidents.technicianId, row.technicianId!),
        eq(incidents.startsAt, row.startsAt),
        eq(incidents.endsAt, row.endsAt),
        eq(incidents.occupiedUntil, row.occupiedUntil),
        eq(incidents.updatedAt, row.updatedAt),
      ),
    );
  const event = recordEvent(db, {
    orgId,
    type: "incident.reassigned",
    now,
    table: incidents,
    rowId: row.id,
    state: and(eq(incidents.technicianId, to), eq(incidents.updatedAt, now)),
    data: JSON.stringify(incidentView({ ...row, technicianId: to, updatedAt: now }, timeZone)),
    previous: { technicianId: row.technicianId },
    // Reassignments follow a change made with the admin CLI (docs/operations.md).
    actor: actorOf("cli"),
  });
  // Sent to webhooks by the minute's sweep: the CLI has no queue binding.
  return [update, event.insert];
}

/** The moves as one JSON parameter (D1 allows 100 parameters a statement, a run may move more visits). */
const movesJson = (moves: Move[]) => JSON.stringify(moves.map((m) => ({ id: m.row.id, to: m.to })));

/** Some move did not apply: its incident is not scheduled with its new technician as of this write. */
function movesUndone(orgId: string, moves: Move[], now: number): SQL | undefined {
  if (moves.length === 0) return undefined;
  return sql`EXISTS (SELECT 1 FROM json_each(${movesJson(moves)}) AS m WHERE NOT EXISTS (SELECT 1 FROM ${incidents} WHERE ${and(
    eq(incidents.orgId, orgId),
    sql`${incidents.id} = json_extract(m.value, '$.id')`,
    isScheduled,
    sql`${incidents.technicianId} = json_extract(m.value, '$.to')`,
    eq(incidents.updatedAt, now),
  )}))`;
}

/** A moved visit overlaps another scheduled visit or a live hold of its new technician (one made meanwhile, say). */
function movesOverlap(orgId: string, moves: Move[], now: number): SQL | undefined {
  if (moves.length === 0) return undefined;
  const moved = and(
    eq(incidents.orgId, orgId),
    isScheduled,
    sql`${incidents.id} IN (SELECT value FROM json_each(${JSON.stringify(moves.map((m) => m.row.id))}))`,
  );
  const held = sql`EXISTS (SELECT 1 FROM ${incidents} JOIN ${holds} ON ${and(
    eq(holds.orgId, incidents.orgId),
    eq(holds.technicianId, incidents.technicianId),
    gt(holds.expiresAt, now),
    lt(holds.startsAt, incidents.occupiedUntil),
    gt(holds.occupiedUntil, incidents.startsAt),
  )} WHERE ${moved})`;
  const other = alias(incidents, "other");
  // In raw SQL an alias renders as its name only: the table is named here.
  const visits = sql`EXISTS (SELECT 1 FROM ${incidents} JOIN ${incidents} AS ${sql.identifier("other")} ON ${and(
    eq(other.orgId, incidents.orgId),
    eq(other.technicianId, incidents.technicianId),
    ne(other.id, incidents.id),
    sql`${other.status} = 'scheduled'`,
    lt(other.startsAt, incidents.occupiedUntil),
    gt(other.occupiedUntil, incidents.startsAt),
  )} WHERE ${moved})`;
  return sql`(${held} OR ${visits})`;
}

/** A future scheduled visit of the technician that the read did not see. */
const unseenVisits = (orgId: string, id: string, now: number, seen: IncidentRow[]) =>
  sql`EXISTS (SELECT 1 FROM ${incidents} WHERE ${and(
    eq(incidents.orgId, orgId),
    isScheduled,
    eq(incidents.technicianId, id),
    gt(incidents.startsAt, now),
    sql`${incidents.id} NOT IN (SELECT value FROM json_each(${JSON.stringify(seen.map((v) => v.id))}))`,
  )})`;
