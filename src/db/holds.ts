// Holds (docs/api.md, "Holding a slot"): a place kept for a caller while they
// give their details. A hold is written, used and released by one statement
// each; while live it occupies its place as a visit does (occupancy.ts).
import { and, count, eq, gt, isNull, lt, lte, or, type Placeholder, sql } from "drizzle-orm";
import { holds, incidents } from "../../drizzle/schema";
import { MINUTE, toIso } from "../lib/datetime";
import { newId } from "../lib/ids";
import { once } from "../lib/once";
import { slotView } from "../scheduling/slots";
import { type Db, inColumnOrder, insertWhere, keptPer, param, placeholdersFor, prepared } from "./client";
import type { IdempotencyKey, Written } from "./idempotency";
import type { Org } from "./orgs";
import { type PlaceMode, type Placement, placeTemplate, placeValues } from "./placement";
import { commitWrite } from "./write";

export type HoldRow = typeof holds.$inferSelect;

/** Live holds an org may have at once. */
export const MAX_LIVE_HOLDS = 100;
/** How long the cron sweep keeps a hold after it ended (a day: its id still answers as lapsed until then). */
export const HOLD_KEPT_MS = 86_400_000;

const ofOrg = (org: Org, id: string) => and(eq(holds.orgId, org.id), eq(holds.id, id));

export interface HoldRequest {
  org: Org;
  placement: Placement;
  minutes: number;
  now: number;
  idempotencyKey?: IdempotencyKey;
}

/**
 * Holds a place in one round trip, by one conditional statement as a booking
 * does (same room, same assignment rule), and only while the org has fewer
 * than 100 live holds: its 200 JSON; or, when there was no place or no room
 * under the limit, the live holds counted in the same batch.
 */
export async function holdPlace(
  db: Db,
  { org, placement, minutes, now, idempotencyKey }: HoldRequest,
): Promise<{ written: Written } | { written?: undefined; live: number }> {
  const { request, slot } = placement;
  const id = newId("hold", now);
  const row = inColumnOrder(holds, {
    id,
    orgId: org.id,
    startsAt: slot.start,
    endsAt: slot.end,
    occupiedUntil: slot.end + request.visit.bufferMs,
    serviceId: request.visit.serviceId,
    technicianId: null,
    postalCode: request.postalCode,
    expiresAt: now + minutes * MINUTE,
    endedAt: null,
    incidentId: null,
    createdAt: now,
  });
  const view = {
    holdId: id,
    expiresAt: toIso(row.expiresAt),
    slot: slotView({ ...slot, remaining: 0 }, org.schedule.timeZone, request.visit),
    technicianId: null,
  };
  const place = placeValues({ org, now }, placement);
  const template = holdTemplates(place.mode);
  const values = { ...row, ...place.values, view: JSON.stringify(view) };
  const { applied, results, written } = await commitWrite(db, {
    orgId: org.id,
    now,
    idempotencyKey,
    row: { table: holds, id },
    statements: { inserted: template.insert(db, values), live: liveCount(db, values) },
    body: template.body,
    values,
  });
  return applied ? { written } : { live: (results.live as unknown as { live: number }[])[0]?.live ?? 0 };
}

const liveOf = (orgId: string | Placeholder, now: number | Placeholder) =>
  and(eq(holds.orgId, orgId), gt(holds.expiresAt, now));
const liveCount = prepared((db) =>
  db
    .select({ live: count() })
    .from(holds)
    .where(liveOf(param("orgId"), param("now"))),
);

/**
 * A hold, built once over placeholders: the row's columns by name and
 * placeTemplate's values, with `view` (the answer's JSON). It is inserted
 * only while the org has fewer than 100 live holds and the place has room
 * (the booking's condition and assignment); the answer sets the places left
 * and the technician the statement chose.
 */
function holdTemplate(mode: PlaceMode) {
  const { chosen: assigned, technician, room, left } = placeTemplate(mode, true);
  const underLimit = sql`(SELECT count(*) FROM ${holds} WHERE ${liveOf(param("orgId"), param("now"))}) < ${MAX_LIVE_HOLDS}`;
  const row = placeholdersFor(holds);
  const chosen = sql`(SELECT ${holds.technicianId} FROM ${holds} WHERE ${eq(holds.id, param("id"))})`;
  return {
    insert: prepared((db) =>
      insertWhere(
        db,
        holds,
        technician ? { ...row, technicianId: technician } : row,
        sql`${underLimit} AND ${room}`,
        assigned,
      ),
    ),
    body: sql`json_set(${param("view")}, '$.slot.remaining', ${left}, '$.technicianId', ${chosen})`,
  };
}

/** The hold templates, one per mode, each made on the first hold of its mode (not at startup). */
const holdTemplates = keptPer(holdTemplate);

/** The org's live holds (for the limit's answer when no statement counted them). */
export async function liveHolds(db: Db, org: Org, now: number): Promise<number> {
  const [row] = await liveCount(db, { orgId: org.id, now }).all();
  return row?.live ?? 0;
}

/**
 * Releases a hold in one round trip, through the write path (an Idempotency-Key
 * Idempotency-Key is claimed in the same batch, so a refused key releases
 * nothing): its 200 JSON, or null when the org has no hold of that id. Its
 * expiry becomes 0, below any request's clock, so that no request whose clock
 * lags this one's can still take it for live; a used or lapsed hold keeps
 * when it ended: releasing frees nothing a booking took.
 */
export async function releaseHold(
  db: Db,
  { org, id, now, idempotencyKey }: { org: Org; id: string; now: number; idempotencyKey?: IdempotencyKey },
): Promise<Written | null> {
  const release = db
    .update(holds)
    .set({ expiresAt: 0, endedAt: sql`coalesce(${holds.endedAt}, min(${holds.expiresAt}, ${now}))` })
    .where(ofOrg(org, id));
  const { applied, written } = await commitWrite(db, {
    orgId: org.id,
    now,
    idempotencyKey,
    row: { table: holds, id, state: eq(holds.expiresAt, 0) },
    statements: { released: release },
    body: JSON.stringify({ holdId: id, released: true }),
  });
  return applied ? written : null;
}

/**
 * The hold a booking names, as SQL over placeholders for the booking's own
 * batch (bound as `holdId`, `orgId`, `now`, the visit's `startsAt` and
 * `serviceId`, `holdPostalCode` its normalised postal code, and `id` the
 * incident's): whether it is live and for this very visit (same start and
 * service; with a technician, the same postal code), whether it has lapsed
 * (expired, released or used), its technician, and the statements that read
 * it before the booking and use it up after. Built once.
 */
export const HOLD_CLAIM = once(() => {
  const named = and(eq(holds.orgId, param("orgId")), eq(holds.id, param("holdId")));
  const now = param("now");
  const matching = and(
    named,
    gt(holds.expiresAt, now),
    eq(holds.startsAt, param("startsAt")),
    sql`${holds.serviceId} IS ${param("serviceId")}`,
    sql`(${holds.technicianId} IS NULL OR ${holds.postalCode} IS ${param("holdPostalCode")})`,
  );
  const booked = sql`EXISTS (SELECT 1 FROM ${incidents} WHERE ${eq(incidents.id, param("id"))})`;
  return {
    /** The hold by its id, as it is (none: unknown to this org). */
    read: (db: Db) => db.select().from(holds).where(named),
    matches: sql`EXISTS (SELECT 1 FROM ${holds} WHERE ${matching})`,
    lapsed: sql`EXISTS (SELECT 1 FROM ${holds} WHERE ${and(named, lte(holds.expiresAt, now))})`,
    technician: sql`(SELECT ${holds.technicianId} FROM ${holds} WHERE ${named})`,
    /** Uses the hold up if the incident was booked on it (the booking's condition was `matches`): expiry 0, as a release. */
    use: (db: Db) =>
      db
        .update(holds)
        .set({ expiresAt: 0, endedAt: sql`${now}`, incidentId: sql`${param("id")}` })
        .where(and(named, gt(holds.expiresAt, now), booked)),
    /** The answer's `holdExpired`: whether the booking went ahead without the hold. */
    expired: sql`CASE WHEN EXISTS (SELECT 1 FROM ${holds} WHERE ${and(named, eq(holds.incidentId, param("id")))}) THEN json('false') ELSE json('true') END`,
  };
});

const holdById = prepared((db) => HOLD_CLAIM().read(db));

/**
 * The hold a refused booking named, read after the refusal (none: unknown to
 * this org). The refused batch wrote nothing, so it is the hold the booking met,
 * or later; it costs the refusal's trip, never a booking's.
 */
export const holdNamed = (db: Db, orgId: string, holdId: string): Promise<HoldRow | undefined> =>
  holdById(db, { orgId, holdId }).get();

/** The cron sweep: holds a day after they expired or ended go (expiry is a condition of every query: it needs no job). */
export async function sweepHolds(db: Db, now: number) {
  const cutoff = now - HOLD_KEPT_MS;
  await db.delete(holds).where(and(lt(holds.expiresAt, cutoff), or(isNull(holds.endedAt), lt(holds.endedAt, cutoff))));
}
