// Webhook endpoints, their encrypted secrets, delivery attempts and replay
// requests (docs/webhooks.md, "Webhooks", "Retries"). Secrets come in and out of here as
// ciphertext only; src/webhooks/key.ts encrypts and decrypts.
import { and, count, desc, eq, gte, inArray, isNotNull, isNull, lt, lte, or, sql } from "drizzle-orm";
import {
  type DeliveryStatus,
  type EventType,
  events,
  webhookDeliveries,
  webhookEndpoints,
  webhookReplays,
  webhookSecrets,
} from "../../drizzle/schema";
import { toIso } from "../lib/datetime";
import type { Db } from "./client";

export const MAX_ENDPOINTS = 10;
export const DELIVERY_RETENTION_MS = 30 * 86_400_000;
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

type EndpointRow = typeof webhookEndpoints.$inferSelect;

const endpointView = ({ id, url, events, status, createdAt }: EndpointRow) => ({
  endpointId: id,
  url,
  events,
  status,
  createdAt: toIso(createdAt),
});

const ofOrg = (orgId: string, endpointId: string) =>
  and(eq(webhookEndpoints.orgId, orgId), eq(webhookEndpoints.id, endpointId));

export interface NewEndpoint {
  orgId: string;
  id: string;
  url: string;
  events: EventType[];
  /** The secret's ciphertext. */
  ciphertext: string;
  now: number;
}

/**
 * Adds an endpoint with its secret in one batch; false when the org already
 * has MAX_ENDPOINTS (the count and the insert are one statement, so two
 * concurrent adds cannot pass the limit together, and nothing is written).
 */
export async function addEndpoint(db: Db, { orgId, id, url, events, ciphertext, now }: NewEndpoint) {
  const underLimit = sql`(SELECT count(*) FROM ${webhookEndpoints} WHERE ${eq(webhookEndpoints.orgId, orgId)}) < ${MAX_ENDPOINTS}`;
  const [inserted] = await db.batch([
    db
      .insert(webhookEndpoints)
      .select(
        sql`SELECT ${id}, ${orgId}, ${url}, ${JSON.stringify(events)}, 'enabled', ${now}, NULL WHERE ${underLimit}`,
      ),
    db
      .insert(webhookSecrets)
      .select(
        sql`SELECT NULL, ${orgId}, ${id}, ${ciphertext}, ${now}, NULL WHERE EXISTS (SELECT 1 FROM ${webhookEndpoints} WHERE ${ofOrg(orgId, id)})`,
      ),
  ]);
  return inserted.meta.changes === 1;
}

export async function listEndpoints(db: Db, orgId: string) {
  const rows = await db
    .select()
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.orgId, orgId))
    .orderBy(webhookEndpoints.createdAt, webhookEndpoints.id);
  return rows.map(endpointView);
}

export async function getEndpoint(db: Db, orgId: string, endpointId: string) {
  const [row] = await db.select().from(webhookEndpoints).where(ofOrg(orgId, endpointId));
  return row;
}

/** Removes an endpoint and its secrets; false when the org has no such endpoint. */
export async function removeEndpoint(db: Db, orgId: string, endpointId: string) {
  const [, removed] = await db.batch([
    db.delete(webhookSecrets).where(and(eq(webhookSecrets.orgId, orgId), eq(webhookSecrets.endpointId, endpointId))),
    db.delete(webhookEndpoints).where(ofOrg(orgId, endpointId)),
  ]);
  return removed.meta.changes === 1;
}

/**
 * Makes `ciphertext` the endpoint's secret: the current one expires in 24 h
 * (signing beside the new one until then) and any older one at once, so at
 * most two sign. False when the org has no such endpoint (nothing written).
 */
export async function rotateSecret(db: Db, orgId: string, endpointId: string, ciphertext: string, now: number) {
  const mine = and(eq(webhookSecrets.orgId, orgId), eq(webhookSecrets.endpointId, endpointId));
  const exists = sql`EXISTS (SELECT 1 FROM ${webhookEndpoints} WHERE ${ofOrg(orgId, endpointId)})`;
  const [, , inserted] = await db.batch([
    db.delete(webhookSecrets).where(and(mine, isNotNull(webhookSecrets.expiresAt))),
    db
      .update(webhookSecrets)
      .set({ expiresAt: now + ROTATION_OVERLAP_MS })
      .where(and(mine, isNull(webhookSecrets.expiresAt))),
    db
      .insert(webhookSecrets)
      .select(sql`SELECT NULL, ${orgId}, ${endpointId}, ${ciphertext}, ${now}, NULL WHERE ${exists}`),
  ]);
  return inserted.meta.changes === 1;
}

export interface DeliveryKey {
  orgId: string;
  eventId: string;
  endpointId: string;
  /** Attempts logged since this time count towards this delivery (a replay starts again at 1). */
  since: number;
}

/** All a delivery attempt needs, in one round trip; undefined when the event or endpoint is gone. */
export async function deliveryTarget(db: Db, { orgId, eventId, endpointId, since }: DeliveryKey, now: number) {
  const [[event], [endpoint], secrets, [attempts]] = await db.batch([
    db
      .select({ body: events.body })
      .from(events)
      .where(and(eq(events.orgId, orgId), eq(events.id, eventId))),
    db.select().from(webhookEndpoints).where(ofOrg(orgId, endpointId)),
    db
      .select({ ciphertext: webhookSecrets.ciphertext })
      .from(webhookSecrets)
      .where(
        and(
          eq(webhookSecrets.orgId, orgId),
          eq(webhookSecrets.endpointId, endpointId),
          or(isNull(webhookSecrets.expiresAt), sql`${webhookSecrets.expiresAt} > ${now}`),
        ),
      )
      .orderBy(desc(webhookSecrets.id)),
    db
      .select({ n: count() })
      .from(webhookDeliveries)
      .where(
        and(
          eq(webhookDeliveries.orgId, orgId),
          eq(webhookDeliveries.eventId, eventId),
          eq(webhookDeliveries.endpointId, endpointId),
          gte(webhookDeliveries.at, since),
        ),
      ),
  ]);
  if (!event || !endpoint) return undefined;
  return { body: event.body, endpoint, ciphertexts: secrets.map((s) => s.ciphertext), attempts: attempts?.n ?? 0 };
}

export interface Attempt {
  orgId: string;
  eventId: string;
  endpointId: string;
  attempt: number;
  status: DeliveryStatus;
  httpStatus: number | null;
  durationMs: number;
  error: string | null;
  at: number;
  /** A 410 Gone: the endpoint is disabled in the same batch. */
  disable: boolean;
}

export async function logAttempt(db: Db, { disable, ...attempt }: Attempt) {
  const insert = db.insert(webhookDeliveries).values(attempt);
  if (!disable) return void (await insert);
  await db.batch([
    insert,
    db
      .update(webhookEndpoints)
      .set({ status: "disabled", disabledAt: attempt.at })
      .where(and(ofOrg(attempt.orgId, attempt.endpointId), eq(webhookEndpoints.status, "enabled"))),
  ]);
}

export interface DeliveryFilter {
  orgId: string;
  endpointId?: string;
  eventId?: string;
  limit: number;
}

/** Attempts, newest first. */
export async function listDeliveries(db: Db, { orgId, endpointId, eventId, limit }: DeliveryFilter) {
  const rows = await db
    .select()
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.orgId, orgId),
        endpointId === undefined ? undefined : eq(webhookDeliveries.endpointId, endpointId),
        eventId === undefined ? undefined : eq(webhookDeliveries.eventId, eventId),
      ),
    )
    .orderBy(desc(webhookDeliveries.id))
    .limit(limit);
  return rows.map(({ eventId, endpointId, attempt, status, httpStatus, durationMs, error, at }) => ({
    eventId,
    endpointId,
    attempt,
    status,
    httpStatus,
    durationMs,
    error,
    at: toIso(at),
  }));
}

export async function getEvent(db: Db, orgId: string, eventId: string) {
  const [row] = await db
    .select({ id: events.id, type: events.type, createdAt: events.createdAt })
    .from(events)
    .where(and(eq(events.orgId, orgId), eq(events.id, eventId)));
  return row;
}

/** The enabled endpoints that were subscribed to an event of `type` recorded at `at`. */
export async function subscribersAt(db: Db, orgId: string, type: EventType, at: number) {
  const rows = await db
    .select({ id: webhookEndpoints.id })
    .from(webhookEndpoints)
    .where(
      and(
        eq(webhookEndpoints.orgId, orgId),
        eq(webhookEndpoints.status, "enabled"),
        lte(webhookEndpoints.createdAt, at),
        sql`EXISTS (SELECT 1 FROM json_each(${webhookEndpoints.events}) WHERE value = ${type})`,
      ),
    );
  return rows.map((row) => row.id);
}

/** Records replays of an event to `endpointIds`, for the next sweep to send. */
export async function requestReplays(db: Db, orgId: string, eventId: string, endpointIds: string[], now: number) {
  if (endpointIds.length === 0) return;
  await db
    .insert(webhookReplays)
    .values(endpointIds.map((endpointId) => ({ orgId, eventId, endpointId, requestedAt: now })));
}

/**
 * Parks deliveries the consumer cannot make yet (no usable webhook key) as
 * pending sends, for the sweep to send once it can; `since` is kept, so the
 * attempts already made still count.
 */
export async function parkDeliveries(
  db: Db,
  deliveries: { org: string; event: string; endpoint: string; since: number }[],
) {
  if (deliveries.length === 0) return;
  await db.insert(webhookReplays).values(
    deliveries.map(({ org, event, endpoint, since }) => ({
      orgId: org,
      eventId: event,
      endpointId: endpoint,
      requestedAt: since,
    })),
  );
}

export async function pendingReplays(db: Db, limit: number) {
  return db.select().from(webhookReplays).orderBy(webhookReplays.id).limit(limit);
}

export async function forgetReplays(db: Db, ids: number[]) {
  if (ids.length > 0) await db.delete(webhookReplays).where(inArray(webhookReplays.id, ids));
}

/** The hourly purge: attempts older than 30 days and secrets past their expiry. */
export async function purgeWebhooks(db: Db, now: number) {
  await db.batch([
    db.delete(webhookDeliveries).where(lt(webhookDeliveries.at, now - DELIVERY_RETENTION_MS)),
    db.delete(webhookSecrets).where(lte(webhookSecrets.expiresAt, now)),
  ]);
}
