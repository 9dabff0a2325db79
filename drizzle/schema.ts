// Tables of the service. Every tenant table carries a NOT NULL org_id and its
// indexes lead with it, so each query of one org touches only that org's rows.
// Times are epoch milliseconds (integers sort and compare cheaply in SQLite);
// the API renders them as ISO 8601 UTC.

import { sql } from "drizzle-orm";
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { StoredSchedule, WeeklyHours } from "../src/scheduling/schedule";

/**
 * The free-text phone fields of the seed (kept as given) and, beside each, its
 * E.164 form when it parses to a valid number in the org's country
 * (docs/api.md, "Phone numbers"): what finding a caller matches on. Null when absent or not a number.
 */
const phoneColumns = () => ({
  mobilePhone: text("mobile_phone"),
  businessPhone: text("business_phone"),
  mobileE164: text("mobile_e164"),
  businessE164: text("business_e164"),
});

/** The postal-address columns shared by accounts, contacts and leads (a fresh set per table). */
const addressColumns = () => ({
  buildingLocation: text("building_location"),
  street1: text("street1"),
  street2: text("street2"),
  city: text("city"),
  postalCode: text("postal_code"),
  state: text("state"),
  country: text("country"),
});

export const orgs = sqliteTable("orgs", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  timeZone: text("time_zone").notNull().default("UTC"),
  // ISO 3166-1 alpha-2: the country a phone number written without "+" is read in (docs/api.md, "Phone numbers").
  country: text("country").notNull().default("US"),
  // The schedule document (docs/api.md, "The schedule") minus its timeZone (kept above), as
  // JSON; null means the defaults.
  schedule: text("schedule", { mode: "json" }).$type<StoredSchedule>(),
  // The longest span a visit of this org may occupy, in minutes: the longest
  // slotMinutes it has had and the longest duration + buffer of its services,
  // ever (it only grows). A visit occupying an instant t starts after
  // t - maxSlotMinutes: that bound lets window reads use the starts_at index.
  maxSlotMinutes: integer("max_slot_minutes").notNull().default(60),
  // The HMAC key of the org's list cursors (hex of 32 random bytes, from
  // createOrg): a cursor whose position or filters a client changed does not
  // verify. The migration that added it filled existing orgs; '' only in rows
  // written by raw SQL, which cannot list with cursors (src/http/cursor.ts).
  cursorSecret: text("cursor_secret").notNull().default(""),
  createdAt: integer("created_at").notNull(),
});

/** What a key may call (docs/api.md, "Key roles"): fixed when the key is created. */
export const KEY_ROLES = ["office", "agent", "read"] as const;
export type KeyRole = (typeof KEY_ROLES)[number];

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id),
    // SHA-256 (hex) of the whole key; the key itself is never stored.
    keyHash: text("key_hash").notNull(),
    // Keys made before roles existed could call everything: the migration makes them office keys.
    role: text("role", { enum: KEY_ROLES }).notNull().default("office"),
    createdAt: integer("created_at").notNull(),
    revokedAt: integer("revoked_at"),
    lastUsedAt: integer("last_used_at"),
  },
  (t) => [uniqueIndex("api_keys_key_hash").on(t.keyHash), index("api_keys_org").on(t.orgId, t.createdAt)],
);

export const accounts = sqliteTable(
  "accounts",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id),
    name: text("name").notNull(),
    // JavaScript toLowerCase() of the trimmed name: SQLite's NOCASE is ASCII-only.
    nameLower: text("name_lower").notNull(),
    accountType: integer("account_type"),
    email: text("email"),
    ...phoneColumns(),
    ...addressColumns(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("accounts_org_name").on(t.orgId, t.nameLower),
    index("accounts_org_mobile").on(t.orgId, t.mobileE164),
    index("accounts_org_business").on(t.orgId, t.businessE164),
  ],
);

export const contacts = sqliteTable(
  "contacts",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id),
    firstName: text("first_name"),
    lastName: text("last_name"),
    email: text("email"),
    // JavaScript toLowerCase() of email, for the case-insensitive filter.
    emailLower: text("email_lower"),
    ...phoneColumns(),
    accountId: text("account_id").references(() => accounts.id),
    ...addressColumns(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    // One index per way the list is read, each ending in the keyset order.
    index("contacts_org_created").on(t.orgId, t.createdAt, t.id),
    index("contacts_org_account_created").on(t.orgId, t.accountId, t.createdAt, t.id),
    index("contacts_org_email_created").on(t.orgId, t.emailLower, t.createdAt, t.id),
    index("contacts_org_updated").on(t.orgId, t.updatedAt),
    index("contacts_org_mobile_created").on(t.orgId, t.mobileE164, t.createdAt, t.id),
    index("contacts_org_business_created").on(t.orgId, t.businessE164, t.createdAt, t.id),
  ],
);

export const leads = sqliteTable(
  "leads",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id),
    firstName: text("first_name"),
    lastName: text("last_name"),
    title: text("title"),
    companyName: text("company_name"),
    email: text("email"),
    ...phoneColumns(),
    leadSource: integer("lead_source"),
    accountType: integer("account_type"),
    rating: integer("rating"),
    estimatedValue: real("estimated_value"),
    estimatedCloseDate: integer("estimated_close_date"),
    ...addressColumns(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    index("leads_org_created").on(t.orgId, t.createdAt),
    index("leads_org_mobile").on(t.orgId, t.mobileE164),
    index("leads_org_business").on(t.orgId, t.businessE164),
  ],
);

/**
 * Services (job types, docs/api.md "Services"): what a visit of each takes.
 * Names are unique per org case-insensitively (name_lower). Lists are JSON
 * arrays. Rows are never deleted: a visit keeps its service id for good, and
 * the span and buffer it was booked with (incidents.ends_at, occupied_until).
 */
export const services = sqliteTable(
  "services",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id),
    name: text("name").notNull(),
    nameLower: text("name_lower").notNull(),
    durationMinutes: integer("duration_minutes").notNull(),
    bufferMinutes: integer("buffer_minutes").notNull().default(0),
    arrivalWindowMinutes: integer("arrival_window_minutes").notNull().default(0),
    skills: text("skills", { mode: "json" }).$type<string[]>().notNull(),
    keywords: text("keywords", { mode: "json" }).$type<string[]>().notNull(),
    isDefault: integer("is_default", { mode: "boolean" }).notNull().default(false),
    active: integer("active", { mode: "boolean" }).notNull().default(true),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("services_org_name").on(t.orgId, t.nameLower),
    // At most one default per org, kept by the database itself.
    uniqueIndex("services_org_default").on(t.orgId).where(sql`${t.isDefault} = 1`),
  ],
);

/**
 * Technicians (docs/api.md "Technicians"): who may take which visit, where and
 * when. `postal_codes` holds normalised prefixes (no spaces or "-", upper
 * case); `weekly_hours` null means the org's; `days_off` local dates.
 */
export const technicians = sqliteTable(
  "technicians",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id),
    name: text("name").notNull(),
    skills: text("skills", { mode: "json" }).$type<string[]>().notNull(),
    postalCodes: text("postal_codes", { mode: "json" }).$type<string[]>().notNull(),
    weeklyHours: text("weekly_hours", { mode: "json" }).$type<WeeklyHours>(),
    daysOff: text("days_off", { mode: "json" }).$type<string[]>().notNull(),
    active: integer("active", { mode: "boolean" }).notNull().default(true),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("technicians_org").on(t.orgId, t.id)],
);

export const INCIDENT_STATUSES = ["scheduled", "cancelled", "completed", "no_show"] as const;
export type IncidentStatus = (typeof INCIDENT_STATUSES)[number];

/**
 * The statuses whose visit occupies its span (docs/api.md, "Close"): a
 * scheduled visit, and a closed one, which keeps the span it was booked
 * with; only a cancelled visit frees its place.
 */
export const OCCUPYING_STATUSES = ["scheduled", "completed", "no_show"] as const;

/** A plan's life (docs/api.md, "Plans"): active until every visit is decided (completed) or it is cancelled. */
export const PLAN_STATUSES = ["active", "completed", "cancelled"] as const;
export type PlanStatus = (typeof PLAN_STATUSES)[number];
export const PLAN_UNITS = ["week", "month"] as const;
export type PlanUnit = (typeof PLAN_UNITS)[number];

/**
 * Service plans (docs/api.md, "Plans"): a visit every `every_count`
 * `every_unit`s, `visits` in all (null: until cancelled), each due on the
 * first visit's local date plus k × every, at `local_time` in the org's
 * zone. `visits_made` counts the visits decided (booked or unplaced, the
 * first included); `next_due_date` is the next one's local date and
 * `decide_at` the instant it may be decided (its due date less the days the
 * cron looks ahead, at local midnight), both null unless active.
 */
export const plans = sqliteTable(
  "plans",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id),
    status: text("status", { enum: PLAN_STATUSES }).notNull().default("active"),
    everyCount: integer("every_count").notNull(),
    everyUnit: text("every_unit", { enum: PLAN_UNITS }).notNull(),
    visits: integer("visits"),
    serviceId: text("service_id").references(() => services.id),
    postalCode: text("postal_code"),
    clientName: text("client_name").notNull(),
    insectName: text("insect_name").notNull(),
    phone: text("phone"),
    accountId: text("account_id").references(() => accounts.id),
    notes: text("notes"),
    technicianId: text("technician_id").references(() => technicians.id),
    // "HH:MM" and "YYYY-MM-DD", the first visit's as booked, in the org's zone.
    localTime: text("local_time").notNull(),
    firstVisitDate: text("first_visit_date").notNull(),
    visitsMade: integer("visits_made").notNull(),
    nextDueDate: text("next_due_date"),
    decideAt: integer("decide_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    cancelledAt: integer("cancelled_at"),
    cancelReason: text("cancel_reason"),
  },
  (t) => [
    // The list's keyset order (newest first: created, id), under each filter.
    index("plans_org_created").on(t.orgId, t.createdAt, t.id),
    index("plans_org_status_created").on(t.orgId, t.status, t.createdAt, t.id),
    index("plans_org_phone_created").on(t.orgId, t.phone, t.createdAt, t.id),
    index("plans_org_account_created").on(t.orgId, t.accountId, t.createdAt, t.id),
    // The cron, across orgs: active plans whose next visit may be decided, soonest first.
    index("plans_active_decide").on(t.decideAt).where(sql`${t.status} = 'active'`),
  ],
);

/**
 * Each due visit of a plan, decided once (docs/api.md, "Plans"): booked (its
 * incident) or unplaced. The primary key (plan, k) is what makes a visit
 * decided exactly once: a second decision's batch meets it and fails whole.
 * Written in the batch that books the visit or records it unplaced.
 */
export const planVisits = sqliteTable(
  "plan_visits",
  {
    planId: text("plan_id")
      .notNull()
      .references(() => plans.id),
    k: integer("k").notNull(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id),
    dueDate: text("due_date").notNull(),
    // Null: unplaced (no bookable start within three days of the due date).
    incidentId: text("incident_id"),
    decidedAt: integer("decided_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.planId, t.k] })],
);

/**
 * Incidents logged by agents; a `scheduled` one books the slot [startsAt,
 * endsAt), and so does a closed one (`completed`, `no_show`); a `cancelled`
 * one holds nothing (docs/api.md, "Incidents").
 */
export const incidents = sqliteTable(
  "incidents",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id),
    status: text("status", { enum: INCIDENT_STATUSES }).notNull().default("scheduled"),
    clientName: text("client_name").notNull(),
    insectName: text("insect_name").notNull(),
    accountId: text("account_id").references(() => accounts.id),
    // The caller's number, E.164 (stored only normalised).
    phone: text("phone"),
    notes: text("notes"),
    startsAt: integer("starts_at").notNull(),
    endsAt: integer("ends_at").notNull(),
    createdAt: integer("created_at").notNull(),
    // The default serves only the migration's ADD COLUMN, which then copies created_at.
    updatedAt: integer("updated_at").notNull().default(0),
    cancelledAt: integer("cancelled_at"),
    cancelReason: text("cancel_reason"),
    // When it was closed (completed or no_show), and the office's note on it.
    closedAt: integer("closed_at"),
    outcomeNote: text("outcome_note"),
    // The plan that booked it (null: booked by a request).
    planId: text("plan_id"),
    // The service and technician of the visit (null: none applied, crew mode)
    // and the caller's postal code as given, trimmed.
    serviceId: text("service_id").references(() => services.id),
    technicianId: text("technician_id").references(() => technicians.id),
    postalCode: text("postal_code"),
    // The end of the span the visit occupies its technician or crew: ends_at
    // plus the service's buffer as booked (the migration copied ends_at).
    occupiedUntil: integer("occupied_until").notNull().default(0),
    // The arrival window promised, in minutes from the start, as booked (0: an exact time).
    arrivalWindowMinutes: integer("arrival_window_minutes").notNull().default(0),
  },
  (t) => [
    // Availability reads the visits occupying a time window: org first,
    // then start; with the occupied end and technician too, the index alone
    // answers (covering) and its order is the order of the groups, so no
    // temporary b-tree is built. Partial: a cancelled incident holds no slot
    // and is not even read. Queries name the statuses exactly so, as literals
    // (occupiesIn, src/db/occupancy.ts), so the planner may use it; the
    // status is a column of it too, for SQLite proves an IN term of the
    // index's own WHERE from the index's columns only (an "=" it would not need).
    index("incidents_occupying_org_starts_occupied")
      .on(t.orgId, t.startsAt, t.occupiedUntil, t.technicianId, t.status)
      .where(sql`${t.status} IN ('scheduled', 'completed', 'no_show')`),

    // The list's keyset order (start, id), under each filter that narrows it.
    index("incidents_org_starts").on(t.orgId, t.startsAt, t.id),
    index("incidents_org_status_starts").on(t.orgId, t.status, t.startsAt, t.id),
    index("incidents_org_account_starts").on(t.orgId, t.accountId, t.startsAt, t.id),
    index("incidents_org_phone_starts").on(t.orgId, t.phone, t.startsAt, t.id),
    // Also one technician's visits near an instant: the overlap test and the
    // day's count of the assignment statement.
    index("incidents_org_technician_starts").on(t.orgId, t.technicianId, t.startsAt, t.id),
    index("incidents_org_service_starts").on(t.orgId, t.serviceId, t.startsAt, t.id),
    // A plan's visits (cancelling a plan cancels those not started).
    index("incidents_org_plan_starts").on(t.orgId, t.planId, t.startsAt),
  ],
);

/**
 * Places kept while a caller gives their details (docs/api.md, "Holding a
 * slot"). A hold occupies [startsAt, occupiedUntil) of its technician (or of
 * a crew) exactly as a scheduled visit does, while `expiresAt` is after the
 * request's now, so expiry is a condition of every query, never a job.
 * Release and use set `expiresAt` to 0, below any request's clock (two
 * isolates' clocks may disagree), and `endedAt` to when; `incidentId` is the
 * booking that used it. The cron sweep deletes holds a day after they ended.
 */
export const holds = sqliteTable(
  "holds",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id),
    startsAt: integer("starts_at").notNull(),
    endsAt: integer("ends_at").notNull(),
    occupiedUntil: integer("occupied_until").notNull(),
    serviceId: text("service_id"),
    technicianId: text("technician_id"),
    // Normalised (docs/api.md, "Services and technicians"), as the assignment read it.
    postalCode: text("postal_code"),
    expiresAt: integer("expires_at").notNull(),
    // When it was released or used (null: neither).
    endedAt: integer("ended_at"),
    incidentId: text("incident_id"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    // The occupancy reads, as incidents_scheduled_org_starts_occupied (live ones filtered on expiry).
    index("holds_org_starts").on(t.orgId, t.startsAt, t.occupiedUntil, t.technicianId, t.expiresAt),
    // One technician's holds near an instant (the assignment's overlap test).
    index("holds_org_technician_starts").on(t.orgId, t.technicianId, t.startsAt),
    // The live holds of an org (the limit of 100), and the sweep across orgs.
    index("holds_org_expires").on(t.orgId, t.expiresAt),
    index("holds_expires").on(t.expiresAt),
  ],
);

/**
 * Idempotency-Key records (docs/api.md, "Retries: Idempotency-Key"): one per org and key, holding the first
 * response of the request that claimed it. `status` is null while that request
 * is still running; a claim older than 60 s without a status was abandoned.
 */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id),
    key: text("key").notNull(),
    // SHA-256 of method, path, query and the SHA-256 of the raw body.
    requestHash: text("request_hash").notNull(),
    createdAt: integer("created_at").notNull(),
    claimedAt: integer("claimed_at").notNull(),
    status: integer("status"),
    contentType: text("content_type"),
    body: text("body"),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.key] }),
    // For the hourly purge of expired records across all orgs (not a tenant read).
    index("idempotency_keys_created").on(t.createdAt),
  ],
);

export const EVENT_TYPES = [
  "lead.created",
  "contact.created",
  "incident.created",
  "incident.rescheduled",
  "incident.cancelled",
  "incident.reassigned",
  "incident.completed",
  "incident.no_show",
  "plan.created",
  "plan.cancelled",
  "plan.visit_unplaced",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** How a change reached the API (an event's actor.channel): a request's transport, the admin CLI, the cron, or a plan. */
export const CHANNELS = ["http", "mcp", "vapi", "retell", "cli", "cron", "plan"] as const;
export type Channel = (typeof CHANNELS)[number];

/**
 * The outbox (docs/webhooks.md, "Events"): one row per change, inserted by the change's own
 * batch. `seq` is assigned by the database at insert, and D1 commits one
 * write at a time, so seq order is commit order (AUTOINCREMENT: never
 * reused, even once the newest rows are purged). `body` is the event JSON as
 * listed and delivered. `enqueued_at` is null while the event still has to be
 * sent to the delivery queue (it had subscribers when recorded).
 */
export const events = sqliteTable(
  "events",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    id: text("id").notNull(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id),
    type: text("type").$type<EventType>().notNull(),
    createdAt: integer("created_at").notNull(),
    body: text("body").notNull(),
    enqueuedAt: integer("enqueued_at"),
  },
  (t) => [
    uniqueIndex("events_id").on(t.id),
    index("events_org_seq").on(t.orgId, t.seq),
    index("events_org_type_seq").on(t.orgId, t.type, t.seq),
    // The 30-day purge, across all orgs.
    index("events_created").on(t.createdAt),
    // The sweep: events recorded with subscribers but not yet sent to the queue.
    index("events_unenqueued").on(t.createdAt).where(sql`${t.enqueuedAt} IS NULL`),
  ],
);

export type EndpointStatus = "enabled" | "disabled";

/** Webhook endpoints (docs/operations.md, "Webhook endpoints"); `events` is the JSON array of subscribed types. */
export const webhookEndpoints = sqliteTable(
  "webhook_endpoints",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id),
    url: text("url").notNull(),
    events: text("events", { mode: "json" }).$type<EventType[]>().notNull(),
    status: text("status").$type<EndpointStatus>().notNull().default("enabled"),
    createdAt: integer("created_at").notNull(),
    disabledAt: integer("disabled_at"),
  },
  (t) => [index("webhook_endpoints_org").on(t.orgId, t.createdAt)],
);

/**
 * An endpoint's signing secrets, AES-GCM ciphertext only (never the secret in
 * the clear). The current one has no expiry; after a rotation the previous one
 * expires 24 h later and signs beside the new one until then.
 */
export const webhookSecrets = sqliteTable(
  "webhook_secrets",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id),
    endpointId: text("endpoint_id")
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: "cascade" }),
    ciphertext: text("ciphertext").notNull(),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at"),
  },
  (t) => [index("webhook_secrets_endpoint").on(t.endpointId)],
);

export type DeliveryStatus = "delivered" | "retrying" | "failed";

/** Every delivery attempt (docs/webhooks.md, "Retries"), newest last by id; kept 30 days. */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id),
    eventId: text("event_id").notNull(),
    endpointId: text("endpoint_id").notNull(),
    attempt: integer("attempt").notNull(),
    status: text("status").$type<DeliveryStatus>().notNull(),
    httpStatus: integer("http_status"),
    durationMs: integer("duration_ms").notNull(),
    error: text("error"),
    at: integer("at").notNull(),
  },
  (t) => [
    index("webhook_deliveries_org").on(t.orgId, t.id),
    index("webhook_deliveries_org_event").on(t.orgId, t.eventId, t.endpointId, t.at),
    index("webhook_deliveries_org_endpoint").on(t.orgId, t.endpointId, t.id),
    index("webhook_deliveries_at").on(t.at),
  ],
);

/** `webhook replay` requests, sent to the delivery queue by the next sweep (the CLI has no queue of its own). */
export const webhookReplays = sqliteTable("webhook_replays", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  orgId: text("org_id")
    .notNull()
    .references(() => orgs.id),
  eventId: text("event_id").notNull(),
  endpointId: text("endpoint_id").notNull(),
  requestedAt: integer("requested_at").notNull(),
});

/**
 * A batch's guards (src/db/guards.ts): never holds a row. Inserting one
 * raises "guard failed: <name>" (the trigger of migration 0011), which
 * aborts the batch it is in, and a D1 batch is one transaction.
 */
export const guards = sqliteTable("guards", {
  name: text("name").notNull(),
});

/** The tables a write of the API changes: each change records an event and its key's answer (src/db/write.ts). */
export type WritableTable = typeof leads | typeof contacts | typeof incidents | typeof holds | typeof plans;
