// Finding a caller by phone (docs/api.md, "Find a caller"): one batch of four
// indexed reads, so one round trip. Each phone column has an index that leads
// with the org, and every OR branch names the org itself, so SQLite reads each
// branch from its own index (MULTI-INDEX OR) and sorts only the caller's few
// rows.
import { and, asc, desc, eq, gt, inArray, isNotNull, or, sql } from "drizzle-orm";
import { accounts, contacts, incidents, plans } from "../../drizzle/schema";
import { accountColumns, accountView, type ShownAccount } from "./accounts";
import { type Db, param, prepared } from "./client";
import { contactColumns, contactView, type ShownContact } from "./contacts";
import { incidentColumns, incidentView, type ShownIncident } from "./incidents";
import { isScheduledUnindexed } from "./occupancy";
import type { Org } from "./orgs";
import { hasPhone } from "./phones";
import { type PlanRow, planView } from "./plans";

/** At most this many of each list. */
export const CALLER_LIMIT = 10;

const newestFirst = <T extends typeof contacts | typeof accounts>(table: T) => [desc(table.createdAt), desc(table.id)];

// Values bound per request: orgId, phone, now, and since (now less the longest booking).
const callerContacts = prepared((db) =>
  db
    .select(contactColumns)
    .from(contacts)
    .where(hasPhone(contacts, param("orgId"), param("phone")))
    .orderBy(...newestFirst(contacts))
    .limit(CALLER_LIMIT),
);

function accountMatch(db: Db) {
  const linkedAccounts = db
    .select({ id: contacts.accountId })
    .from(contacts)
    .where(and(hasPhone(contacts, param("orgId"), param("phone")), isNotNull(contacts.accountId)));
  // A unary + keeps a term out of the planner's choice of index (SQLite's own
  // idiom): without statistics it would read the org's whole account index
  // for the org_id term, or all its scheduled incidents for the status term,
  // instead of the few rows the id or account list names.
  return or(
    hasPhone(accounts, param("orgId"), param("phone")),
    and(sql`+${accounts.orgId} = ${param("orgId")}`, inArray(accounts.id, linkedAccounts)),
  );
}

const callerAccounts = prepared((db) =>
  db
    .select(accountColumns)
    .from(accounts)
    .where(accountMatch(db))
    .orderBy(...newestFirst(accounts))
    .limit(CALLER_LIMIT),
);

const callerIncidents = prepared((db) => {
  const listedAccounts = db
    .select({ id: accounts.id })
    .from(accounts)
    .where(accountMatch(db))
    .orderBy(...newestFirst(accounts))
    .limit(CALLER_LIMIT);
  // Not ended: a booking lasts at most maxBookingMs, which bounds the start
  // from below so that each branch reads one range of its index.
  const upcoming = and(
    eq(incidents.orgId, param("orgId")),
    isScheduledUnindexed,
    gt(incidents.startsAt, param("since")),
    gt(incidents.endsAt, param("now")),
  );
  return db
    .select(incidentColumns)
    .from(incidents)
    .where(
      or(
        and(upcoming, eq(incidents.phone, param("phone"))),
        and(upcoming, inArray(incidents.accountId, listedAccounts)),
      ),
    )
    .orderBy(asc(incidents.startsAt), asc(incidents.id))
    .limit(CALLER_LIMIT);
});

/** The caller's active plans (same match as the upcoming visits), newest first (docs/api.md, "Plans"). */
const callerPlans = prepared((db) => {
  const listedAccounts = db
    .select({ id: accounts.id })
    .from(accounts)
    .where(accountMatch(db))
    .orderBy(...newestFirst(accounts))
    .limit(CALLER_LIMIT);
  // Each branch reads its own index (org, phone or account, created); the status term stays out of the choice.
  const active = and(eq(plans.orgId, param("orgId")), sql`+${plans.status} = 'active'`);
  return db
    .select()
    .from(plans)
    .where(or(and(active, eq(plans.phone, param("phone"))), and(active, inArray(plans.accountId, listedAccounts))))
    .orderBy(desc(plans.createdAt), desc(plans.id))
    .limit(CALLER_LIMIT);
});

export async function findCaller(db: Db, { org, phone, now }: { org: Org; phone: string; now: number }) {
  const values = { orgId: org.id, phone, now, since: now - org.maxBookingMs };
  const [contactRows, accountRows, incidentRows, planRows] = (await db.batch([
    callerContacts(db, values),
    callerAccounts(db, values),
    callerIncidents(db, values),
    callerPlans(db, values),
  ])) as [ShownContact[], ShownAccount[], ShownIncident[], PlanRow[]];
  return {
    phone,
    contacts: contactRows.map(contactView),
    accounts: accountRows.map(accountView),
    upcomingIncidents: incidentRows.map((row) => incidentView(row, org.schedule.timeZone)),
    plans: planRows.map(planView),
  };
}
