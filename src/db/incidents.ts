import { and, eq, inArray, isNotNull, or, type Placeholder, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { accounts, contacts, type EventType, incidents, type plans } from "../../drizzle/schema";
import { MINUTE, toIso, toIsoOrNull } from "../lib/datetime";
import { newId } from "../lib/ids";
import { arrivalWindowView, timesView } from "../scheduling/slots";
import type { Incident } from "../schemas/incidents";
import {
  columnsBut,
  type Db,
  inColumnOrder,
  insertWhere,
  keptPer,
  param,
  placeholdersFor,
  prepared,
  preparedWith,
} from "./client";
import type { Actor } from "./events";
import { HOLD_CLAIM, type HoldRow, holdNamed } from "./holds";
import type { IdempotencyKey, Written } from "./idempotency";
import { hasPhone } from "./phones";
import { assignee, type PlaceMode, type Placement, placeTemplate, placeValues, roomFor } from "./placement";

export type { Placement };

import type { Org } from "./orgs";
import { commitWrite } from "./write";

export type IncidentRow = typeof incidents.$inferSelect;

/** The event of each change of an incident: a move, a cancel, a close by its outcome. */
export const CHANGE_EVENTS = {
  move: "incident.rescheduled",
  cancel: "incident.cancelled",
  completed: "incident.completed",
  no_show: "incident.no_show",
} as const satisfies Record<string, EventType>;

const HIDDEN = ["orgId", "occupiedUntil"] as const;
/** The columns incidentView shows: what a read answered with it alone selects. */
export const incidentColumns = columnsBut(incidents, ...HIDDEN);
export type ShownIncident = Omit<IncidentRow, (typeof HIDDEN)[number]>;

/** The incident as the API shows it (docs/api.md, "Incidents"): its appointment in the org's zone. */
export function incidentView(row: ShownIncident, timeZone: string): Incident {
  const appointment = timesView(row.startsAt, row.endsAt, timeZone);
  return {
    id: row.id,
    status: row.status,
    dateTime: appointment.start,
    clientName: row.clientName,
    insectName: row.insectName,
    accountId: row.accountId,
    phone: row.phone,
    notes: row.notes,
    serviceId: row.serviceId,
    technicianId: row.technicianId,
    postalCode: row.postalCode,
    appointment,
    arrivalWindow: arrivalWindowView(row.startsAt, row.arrivalWindowMinutes * MINUTE, timeZone),
    createdAt: toIso(row.createdAt),
    updatedAt: toIso(row.updatedAt),
    cancelledAt: toIsoOrNull(row.cancelledAt),
    cancelReason: row.cancelReason,
    closedAt: toIsoOrNull(row.closedAt),
    outcomeNote: row.outcomeNote,
    planId: row.planId,
  };
}

export interface NewIncident {
  clientName: string;
  insectName: string;
  /** The caller's number, already E.164. */
  phone: string | null;
  notes: string | null;
  /** As given, trimmed. */
  postalCode: string | null;
  /** The plan booking it; absent: a request's booking. */
  planId?: string;
}

export interface BookingRequest {
  org: Org;
  placement: Placement;
  /** Whether the worker found the visit bookable (assessVisit, someone on duty); else only a live hold books it. Default true. */
  open?: boolean;
  incident: NewIncident;
  now: number;
  /** The hold the caller names (holdId): used if live and for this visit. */
  holdId?: string;
  /** The request's Idempotency-Key, if it holds one: the answer is recorded in the same batch. */
  idempotencyKey?: IdempotencyKey;
  /** Who books it (its event's actor). */
  actor: Actor;
}

export type Booked = { written: Written } | { written?: undefined; hold?: HoldRow };

/**
 * Books a new incident's visit in one round trip: its JSON or, when it was
 * not booked, the named hold (read then). One statement decides and writes: in
 * crew mode the row is inserted only while fewer than `capacity` visits and
 * holds occupy each instant of its span; in technician mode it is inserted
 * with the technician assignee() picks, and only if there is one; on a live
 * hold for this visit, in its place (and with its technician), unconditionally,
 * the hold used up in the same batch. D1 runs statements one at a time, so N
 * racing requests for r places yield exactly min(N, r) bookings, never two
 * overlapping visits of one technician, and a hold's place is never lost. The
 * account is linked in the same statement when exactly one account has the
 * name. What only the batch knows (account, technician, places left, whether
 * the hold was used) SQL sets into the JSON (json_set); with an Idempotency-Key
 * Idempotency-Key that same text is what the batch records.
 */
export async function bookSlot(db: Db, request: BookingRequest): Promise<Booked> {
  const { org, now, idempotencyKey, actor } = request;
  const booking = bookingOf(request);
  const { applied, written } = await commitWrite(db, {
    orgId: org.id,
    now,
    idempotencyKey,
    row: { table: incidents, id: booking.id },
    statements: booking.statements(db),
    // The event's data is the incident resource, which has no `remaining`.
    event: { type: "incident.created", data: booking.template.view, actor },
    body: booking.template.body,
    values: booking.values,
  });
  return applied ? { written } : { hold: await heldAfterRefusal(db, request) };
}

/** The hold a refused booking named, read now (none: unknown to the org, or none named). */
export const heldAfterRefusal = async (db: Db, { org, holdId }: BookingRequest): Promise<HoldRow | undefined> =>
  holdId === undefined ? undefined : holdNamed(db, org.id, holdId);

/**
 * A new incident's booking, ready for a batch (bookSlot's, or a plan's
 * first visit, src/db/plans.ts): its id, the template of its mode and hold
 * claim, the values that template binds, and its statements — the hold read
 * before (when one is named), the conditional insert, the hold used after.
 */
export function bookingOf(booking: BookingRequest) {
  const { org, placement, open = true, incident, now, holdId } = booking;
  const { request, slot } = placement;
  const id = newId("inc", now);
  const row = inColumnOrder(incidents, {
    ...incident,
    id,
    orgId: org.id,
    status: "scheduled",
    startsAt: slot.start,
    endsAt: slot.end,
    occupiedUntil: slot.end + request.visit.bufferMs,
    serviceId: request.visit.serviceId,
    arrivalWindowMinutes: request.visit.windowMs / MINUTE,
    createdAt: now,
    updatedAt: now,
  });
  const view = JSON.stringify(incidentView(row, org.schedule.timeZone));
  // The template of the org's mode and of the hold named (if any), its values bound by name.
  const place = placeValues({ org, now }, placement);
  const claim: HoldClaim = holdId === undefined ? "none" : open ? "open" : "closed";
  const template = bookingTemplates(`${place.mode} ${claim}`, place.mode, claim);
  const values = {
    ...row,
    ...place.values,
    nameLower: incident.clientName.toLowerCase(),
    view,
    holdId,
    holdPostalCode: request.postalCode,
  };
  const statements = (db: Db): Record<string, BatchItem<"sqlite">> => {
    const inserted = template.insert(db, values);
    return template.hold ? { inserted, used: template.hold.use(db, values) } : { inserted };
  };
  return { id, row, template, values, statements };
}

/** Whether a booking names a hold, and whether the visit is open without it (else only the hold books it). */
type HoldClaim = "none" | "open" | "closed";

type Bound = string | Placeholder;

/** The one account of the org with this name (lower-cased), else NULL, in SQL. */
const accountNamed = (orgId: Bound, nameLower: Bound) =>
  sql`(SELECT CASE WHEN count(*) = 1 THEN min(${accounts.id}) END FROM ${accounts}
    WHERE ${and(eq(accounts.orgId, orgId), eq(accounts.nameLower, nameLower))})`;

/** The incident's view (JSON text) with what only the batch knows set from the stored row: its account and technician. */
function viewAsBooked(view: Bound, id: Bound) {
  const stored = (column: typeof incidents.accountId | typeof incidents.technicianId) =>
    sql`(SELECT ${column} FROM ${incidents} WHERE ${eq(incidents.id, id)})`;
  return sql`json_set(${view}, '$.accountId', ${stored(incidents.accountId)}, '$.technicianId', ${stored(incidents.technicianId)})`;
}

const withRemaining = (view: SQL, left: SQL) => sql`json_set(${view}, '$.appointment.remaining', ${left})`;

/**
 * The booking of `mode`, built once over placeholders: the row's columns by
 * name and placeTemplate's values, with `nameLower` (the account's) and
 * `view` (the incident's JSON). Naming a hold (`holdId`, `holdPostalCode`),
 * the row goes in on the hold's place and technician when the hold is live
 * for this visit, else as without it (when the visit is "open"), and the
 * batch uses the hold up after.
 */
function bookingTemplate(mode: PlaceMode, claim: HoldClaim) {
  // Without a hold, the technician is assigned once; with one, only when the hold does not decide.
  const place = placeTemplate(mode, claim === "none");
  const hold = claim === "none" ? undefined : HOLD_CLAIM();
  const room = claim === "closed" ? sql`0` : place.room;
  const technician = hold
    ? sql`CASE WHEN ${hold.matches} THEN ${hold.technician} ELSE ${place.technician ?? sql`NULL`} END`
    : place.technician;
  const row = { ...placeholdersFor(incidents), accountId: accountNamed(param("orgId"), param("nameLower")) };
  const view = viewAsBooked(param("view"), param("id"));
  const remaining = withRemaining(view, place.left);
  return {
    /** The answer's parts: the incident with `remaining`, and `holdExpired` when a hold is named. */
    remaining,
    holdExpired: hold?.expired,
    insert: prepared((db) =>
      insertWhere(
        db,
        incidents,
        technician ? { ...row, technicianId: technician } : row,
        hold ? sql`(${hold.matches} OR (${hold.lapsed} AND ${room}))` : room,
        place.chosen,
      ),
    ),
    hold: hold && { use: prepared(hold.use) },
    view,
    body: hold ? sql`json_set(${remaining}, '$.holdExpired', ${hold.expired})` : remaining,
  };
}

/** The booking templates, one per mode and claim, each made on its first booking (not at startup). */
const bookingTemplates = keptPer((_key: string, mode: PlaceMode, claim: HoldClaim) => bookingTemplate(mode, claim));

/**
 * The incidents (or plans) of a caller (docs/api.md, "The caller of a call"): its phone
 * is the caller's, or its account is one the caller's number matches — by the
 * account's own phones or by a contact of it with that number, every such
 * account. Each branch names the org, so each reads its own index.
 */
export function ofCaller(db: Db, orgId: Bound, phone: Bound, table: typeof incidents | typeof plans = incidents): SQL {
  const linked = db
    .select({ id: contacts.accountId })
    .from(contacts)
    .where(and(hasPhone(contacts, orgId, phone), isNotNull(contacts.accountId)));
  const own = db
    .select({ id: accounts.id })
    .from(accounts)
    .where(hasPhone(accounts, orgId, phone));
  return or(
    and(eq(table.orgId, orgId), eq(table.phone, phone)),
    and(eq(table.orgId, orgId), inArray(table.accountId, own)),
    and(eq(table.orgId, orgId), inArray(table.accountId, linked)),
  ) as SQL;
}

const incidentById = preparedWith((db, has) =>
  db
    .select()
    .from(incidents)
    .where(
      and(
        eq(incidents.orgId, param("orgId")),
        eq(incidents.id, param("id")),
        has("caller") ? ofCaller(db, param("orgId"), param("caller")) : undefined,
      ),
    )
    .limit(1),
);

/** The incident, if the org has it — and, for a call bound to `caller`, only if it is the caller's. */
export async function getIncident(
  db: Db,
  orgId: string,
  id: string,
  caller?: string,
): Promise<IncidentRow | undefined> {
  return incidentById(db, { orgId, id, caller }).get();
}

export interface IncidentChange {
  org: Org;
  /** The incident as read: the change applies only if it is still exactly so. */
  seen: IncidentRow;
  /** The incident as it is to be (a move's technician is chosen by the statement). */
  changed: IncidentRow;
  /** A move: where the visit goes, which must have room for it (the incident itself not counted). */
  move?: Placement;
  /** Its event: incident.rescheduled for a move, else incident.cancelled unless given (a close's outcome). */
  type?: EventType;
  idempotencyKey?: IdempotencyKey;
  actor: Actor;
}

/**
 * Applies a change to one incident in one conditional statement (compare and
 * set): it writes only while the incident's status, times and updatedAt are
 * still those that were read and, for a move, the new place has room (in
 * technician mode: the same technician if free, else another by the
 * booking's rule), so the decision taken on that reading and the write happen
 * at once, and two changes to one incident are serialised. With an Idempotency-Key
 * Idempotency-Key the answer is recorded in the same batch. When it did not
 * apply, the incident as it now is comes back (undefined if it is gone) for
 * the caller to decide again.
 */
export async function changeIncident(
  db: Db,
  { org, seen, changed, move, type, idempotencyKey, actor }: IncidentChange,
): Promise<{ written: Written } | { written?: undefined; current: IncidentRow | undefined }> {
  const { status, startsAt, endsAt, occupiedUntil, updatedAt, cancelledAt, cancelReason, closedAt, outcomeNote } =
    changed;
  const census = { org, now: updatedAt, except: seen.id };
  const technician = move && move.candidates !== null ? assignee(census, move, seen.technicianId) : undefined;
  const room = move && roomFor(census, move, technician ?? null);
  const update = db
    .update(incidents)
    .set({
      status,
      startsAt,
      endsAt,
      occupiedUntil,
      updatedAt,
      cancelledAt,
      cancelReason,
      closedAt,
      outcomeNote,
      ...(move && { technicianId: technician ?? null }),
    })
    .where(
      and(
        eq(incidents.orgId, org.id),
        eq(incidents.id, seen.id),
        eq(incidents.status, seen.status),
        eq(incidents.startsAt, seen.startsAt),
        eq(incidents.endsAt, seen.endsAt),
        eq(incidents.updatedAt, seen.updatedAt),
        room,
      ),
    );
  const current = db
    .select()
    .from(incidents)
    .where(and(eq(incidents.orgId, org.id), eq(incidents.id, seen.id)));
  // The record's own check that the change is in place: the row as changed.
  const state = and(eq(incidents.status, status), eq(incidents.startsAt, startsAt), eq(incidents.updatedAt, updatedAt));
  const technicianNow = sql`(SELECT ${incidents.technicianId} FROM ${incidents} WHERE ${eq(incidents.id, seen.id)})`;
  const text = JSON.stringify(incidentView(changed, org.schedule.timeZone));
  const body = move ? sql`json_set(${text}, '$.technicianId', ${technicianNow})` : text;
  const was = incidentView(seen, org.schedule.timeZone);
  // A move that changed the technician lists the old one too.
  const moved = { dateTime: was.dateTime, appointment: was.appointment };
  const previous = !move
    ? undefined
    : seen.technicianId === null
      ? moved
      : sql`CASE WHEN ${technicianNow} IS ${seen.technicianId} THEN json(${JSON.stringify(moved)})
          ELSE json_set(${JSON.stringify(moved)}, '$.technicianId', ${seen.technicianId}) END`;
  const { applied, results, written } = await commitWrite(db, {
    orgId: org.id,
    now: updatedAt,
    idempotencyKey,
    row: { table: incidents, id: seen.id, state },
    statements: { updated: update, current },
    event: { type: move ? CHANGE_EVENTS.move : (type ?? CHANGE_EVENTS.cancel), data: body, previous, actor },
    body,
  });
  return applied ? { written } : { current: results.current[0] };
}
