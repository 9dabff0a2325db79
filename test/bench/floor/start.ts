// Serves the floor worker (index.ts) for the benchmarks (npm run bench, npm run bench:profile).
import path from "node:path";
import { DevServer, d1Execute, freePort, ROOT } from "../../e2e/harness";

export const FLOOR_DIR = path.join(ROOT, "test/bench/floor");

// The page floor's contacts: the API's columns (migrations/), 60 rows filled as
// the bench seeds contacts (names, email, mobile phone, account), with its
// (org_id, created_at, id) index.
const CONTACTS = `CREATE TABLE contacts (id TEXT PRIMARY KEY NOT NULL, org_id TEXT NOT NULL, first_name TEXT, last_name TEXT,
  email TEXT, email_lower TEXT, mobile_phone TEXT, business_phone TEXT, account_id TEXT, building_location TEXT,
  street1 TEXT, street2 TEXT, city TEXT, postal_code TEXT, state TEXT, country TEXT, created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL, mobile_e164 TEXT, business_e164 TEXT);
CREATE INDEX contacts_org_created ON contacts (org_id, created_at, id);
INSERT INTO contacts (id, org_id, first_name, last_name, email, email_lower, mobile_phone, mobile_e164, account_id, created_at, updated_at)
  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60)
  SELECT 'ct_01floor' || printf('%016d', i), 'org_floor', 'First' || i, 'Last' || i, 'contact' || i || '@example.com',
    'contact' || i || '@example.com', '(917) 200-' || printf('%04d', i), '+1917200' || printf('%04d', i),
    'acct_01floor0000000000000000', 1764000000000 + i * 1000, 1764000000000 + i * 1000 FROM n;`;

// The caller floor's tables: contacts, accounts, incidents and plans of the API's
// columns (migrations/) at the bench's scale and as it seeds them
// (test/bench/seed.ts): 100,000 contacts with a mobile number, 1,000 accounts,
// 20,000 visits over a year, each of an account and of a contact's number, no
// plan; with the API's indexes of contacts (the outbox floor's contact is
// written under each), an index for each way the caller is looked up, and the
// incidents' (org, start, id) index their page floor reads. The caller, +19172000000, is one contact of
// account 0, which has 20 visits, 10 of them to come.
const CALLER = `CREATE TABLE caller_contacts (id TEXT PRIMARY KEY NOT NULL, org_id TEXT NOT NULL, first_name TEXT,
  last_name TEXT, email TEXT, email_lower TEXT, mobile_phone TEXT, business_phone TEXT, account_id TEXT,
  building_location TEXT, street1 TEXT, street2 TEXT, city TEXT, postal_code TEXT, state TEXT, country TEXT,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, mobile_e164 TEXT, business_e164 TEXT);
CREATE INDEX caller_contacts_mobile ON caller_contacts (org_id, mobile_e164, created_at, id);
CREATE INDEX caller_contacts_business ON caller_contacts (org_id, business_e164, created_at, id);
CREATE INDEX caller_contacts_created ON caller_contacts (org_id, created_at, id);
CREATE INDEX caller_contacts_account ON caller_contacts (org_id, account_id, created_at, id);
CREATE INDEX caller_contacts_email ON caller_contacts (org_id, email_lower, created_at, id);
CREATE INDEX caller_contacts_updated ON caller_contacts (org_id, updated_at);
INSERT INTO caller_contacts (id, org_id, first_name, last_name, email, email_lower, mobile_phone, mobile_e164,
  account_id, created_at, updated_at)
  WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 99999)
  SELECT 'ct_01floor' || printf('%016d', i), 'org_floor', 'First' || i, 'Last' || i, 'contact' || i || '@example.com',
    'contact' || i || '@example.com', '(917) ' || substr(2000000 + i, 1, 3) || '-' || substr(2000000 + i, 4),
    '+1917' || (2000000 + i), 'acct_01floor' || printf('%016d', i % 1000), 1764000000000 + i * 1000,
    1764000000000 + i * 1000 FROM n;
CREATE TABLE caller_accounts (id TEXT PRIMARY KEY NOT NULL, org_id TEXT NOT NULL, name TEXT NOT NULL, name_lower TEXT NOT NULL,
  account_type INTEGER, email TEXT, mobile_phone TEXT, business_phone TEXT, building_location TEXT, street1 TEXT,
  street2 TEXT, city TEXT, postal_code TEXT, state TEXT, country TEXT, created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL, mobile_e164 TEXT, business_e164 TEXT);
CREATE INDEX caller_accounts_mobile ON caller_accounts (org_id, mobile_e164);
CREATE INDEX caller_accounts_business ON caller_accounts (org_id, business_e164);
INSERT INTO caller_accounts (id, org_id, name, name_lower, created_at, updated_at)
  WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 999)
  SELECT 'acct_01floor' || printf('%016d', i), 'org_floor', 'Account ' || i, 'account ' || i, 1764000000000 + i,
    1764000000000 + i FROM n;
CREATE TABLE incidents (id TEXT PRIMARY KEY NOT NULL, org_id TEXT NOT NULL, client_name TEXT NOT NULL,
  insect_name TEXT NOT NULL, account_id TEXT, starts_at INTEGER NOT NULL, ends_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL, status TEXT DEFAULT 'scheduled' NOT NULL, phone TEXT, notes TEXT,
  updated_at INTEGER DEFAULT 0 NOT NULL, cancelled_at INTEGER, cancel_reason TEXT, service_id TEXT,
  technician_id TEXT, postal_code TEXT, occupied_until INTEGER DEFAULT 0 NOT NULL,
  arrival_window_minutes INTEGER DEFAULT 0 NOT NULL);
CREATE INDEX incidents_account ON incidents (org_id, account_id, starts_at, id);
CREATE INDEX incidents_phone ON incidents (org_id, phone, starts_at, id);
CREATE INDEX incidents_org_starts ON incidents (org_id, starts_at, id);
INSERT INTO incidents (id, org_id, client_name, insect_name, account_id, phone, starts_at, ends_at, created_at,
  updated_at)
  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000), at(now) AS (SELECT unixepoch() * 1000)
  SELECT 'inc_01floor' || printf('%016d', i), 'org_floor', 'Client ' || i, 'Ants',
    'acct_01floor' || printf('%016d', i % 1000), '+1917' || (2000000 + i % 100000), now + (i - 10000) * 1800000,
    now + (i - 10000) * 1800000 + 3600000, now, now FROM n, at;
CREATE TABLE caller_plans (id TEXT PRIMARY KEY NOT NULL, org_id TEXT NOT NULL, status TEXT DEFAULT 'active' NOT NULL,
  every_count INTEGER NOT NULL, every_unit TEXT NOT NULL, visits INTEGER, service_id TEXT, postal_code TEXT,
  client_name TEXT NOT NULL, insect_name TEXT NOT NULL, phone TEXT, account_id TEXT, notes TEXT, technician_id TEXT,
  local_time TEXT NOT NULL, first_visit_date TEXT NOT NULL, visits_made INTEGER NOT NULL, next_due_date TEXT,
  decide_at INTEGER, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, cancelled_at INTEGER, cancel_reason TEXT);
CREATE INDEX caller_plans_phone ON caller_plans (org_id, phone, created_at, id);
CREATE INDEX caller_plans_account ON caller_plans (org_id, account_id, created_at, id);`;

// The outbox floor's events and endpoints: the API's tables and indexes (migrations/0006), no endpoint.
const OUTBOX = `CREATE TABLE events (seq INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, id TEXT NOT NULL, org_id TEXT NOT NULL,
  type TEXT NOT NULL, created_at INTEGER NOT NULL, body TEXT NOT NULL, enqueued_at INTEGER);
CREATE UNIQUE INDEX events_id ON events (id);
CREATE INDEX events_org_seq ON events (org_id, seq);
CREATE INDEX events_org_type_seq ON events (org_id, type, seq);
CREATE INDEX events_created ON events (created_at);
CREATE INDEX events_unenqueued ON events (created_at) WHERE enqueued_at IS NULL;
CREATE TABLE webhook_endpoints (id TEXT PRIMARY KEY NOT NULL, org_id TEXT NOT NULL, url TEXT NOT NULL, events TEXT NOT NULL,
  status TEXT DEFAULT 'enabled' NOT NULL, created_at INTEGER NOT NULL, disabled_at INTEGER);
CREATE INDEX webhook_endpoints_org ON webhook_endpoints (org_id, created_at);`;

// The booking, availability and board floors' visits and holds: the API's columns
// (migrations/), with the (org, start, …) index every count of places reads,
// the (org, technician, start) index a technician's own visits are read by, and
// the API's other indexes of visits (the list's filters), which a booking writes.
// A crew org (org_floor) as dense as the bench's heavy org: 20,000 visits over a
// year, about 5.5 in each hour of 13:00–23:00 UTC (08:00–18:00 in New York). A
// technician-mode org (org_fleet) as the bench's fleet: 20 technicians, 5,000
// visits over a year, each technician's 35 hours apart (none overlaps). No hold.
const VISITS = `CREATE TABLE visits (id TEXT PRIMARY KEY NOT NULL, org_id TEXT NOT NULL, client_name TEXT NOT NULL,
  insect_name TEXT NOT NULL, account_id TEXT, starts_at INTEGER NOT NULL, ends_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL, status TEXT DEFAULT 'scheduled' NOT NULL, phone TEXT, notes TEXT,
  updated_at INTEGER DEFAULT 0 NOT NULL, cancelled_at INTEGER, cancel_reason TEXT, service_id TEXT,
  technician_id TEXT, postal_code TEXT, occupied_until INTEGER DEFAULT 0 NOT NULL,
  arrival_window_minutes INTEGER DEFAULT 0 NOT NULL, closed_at INTEGER, outcome_note TEXT, plan_id TEXT);
CREATE INDEX visits_org_starts ON visits (org_id, starts_at, occupied_until, technician_id, status);
CREATE INDEX visits_org_technician_starts ON visits (org_id, technician_id, starts_at, id);
CREATE INDEX visits_org_starts_id ON visits (org_id, starts_at, id);
CREATE INDEX visits_org_status_starts ON visits (org_id, status, starts_at, id);
CREATE INDEX visits_org_account_starts ON visits (org_id, account_id, starts_at, id);
CREATE INDEX visits_org_phone_starts ON visits (org_id, phone, starts_at, id);
CREATE INDEX visits_org_service_starts ON visits (org_id, service_id, starts_at, id);
CREATE INDEX visits_org_plan_starts ON visits (org_id, plan_id, starts_at);
INSERT INTO visits (id, org_id, client_name, insect_name, starts_at, ends_at, occupied_until, created_at, updated_at)
  WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 19999),
    at(day) AS (SELECT unixepoch() / 86400 * 86400000)
  SELECT 'inc_01crew' || printf('%016d', i), 'org_floor', 'Client ' || i, 'Ants', s, s + 3600000, s + 3600000, s, s
  FROM (SELECT i, day + (i % 3650 / 10 - 182) * 86400000 + (13 + i % 10) * 3600000 AS s FROM n, at);
INSERT INTO visits (id, org_id, client_name, insect_name, starts_at, ends_at, occupied_until, technician_id,
  postal_code, created_at, updated_at)
  WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 4999),
    at(day) AS (SELECT unixepoch() / 86400 * 86400000)
  SELECT 'inc_01fleet' || printf('%016d', i), 'org_fleet', 'Client ' || i, 'Ants', s, s + 3600000, s + 3600000,
    'tech_floor' || printf('%02d', i % 20), '11201', s, s
  FROM (SELECT i, day - 182 * 86400000 + (i / 20 * 35 + i % 20) * 3600000 AS s FROM n, at);
CREATE TABLE holds (id TEXT PRIMARY KEY NOT NULL, org_id TEXT NOT NULL, starts_at INTEGER NOT NULL,
  ends_at INTEGER NOT NULL, occupied_until INTEGER NOT NULL, service_id TEXT, technician_id TEXT, postal_code TEXT,
  expires_at INTEGER NOT NULL, ended_at INTEGER, incident_id TEXT, created_at INTEGER NOT NULL);
CREATE INDEX holds_org_starts ON holds (org_id, starts_at, occupied_until, technician_id, expires_at);`;

// The write floors' leads: the API's columns and indexes (migrations/).
const LEADS = `CREATE TABLE leads (id TEXT PRIMARY KEY NOT NULL, org_id TEXT NOT NULL, first_name TEXT, last_name TEXT,
  title TEXT, company_name TEXT, email TEXT, mobile_phone TEXT, business_phone TEXT, lead_source INTEGER,
  account_type INTEGER, rating INTEGER, estimated_value REAL, estimated_close_date INTEGER, building_location TEXT,
  street1 TEXT, street2 TEXT, city TEXT, postal_code TEXT, state TEXT, country TEXT, created_at INTEGER NOT NULL,
  mobile_e164 TEXT, business_e164 TEXT);
CREATE INDEX leads_org_created ON leads (org_id, created_at);
CREATE INDEX leads_org_mobile ON leads (org_id, mobile_e164);
CREATE INDEX leads_org_business ON leads (org_id, business_e164);`;

/** The floor worker under its own `wrangler dev`, with the one account it reads, the tables its writes fill, the contacts it pages, the caller it finds and the visits it counts. */
export async function startFloor(dir: string): Promise<DevServer> {
  const config = path.join(FLOOR_DIR, "wrangler.toml");
  await d1Execute(
    dir,
    `CREATE TABLE accounts (org_id TEXT NOT NULL, id TEXT NOT NULL, name TEXT NOT NULL, city TEXT, PRIMARY KEY (org_id, id)); INSERT INTO accounts VALUES ('org_floor', 'acct_floor', 'Floor Ltd', 'Leeds'); ${LEADS} ${CONTACTS} ${CALLER} ${OUTBOX} ${VISITS}`,
    config,
  );
  return DevServer.start(dir, await freePort(), ["--config", config]);
}
