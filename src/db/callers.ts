// Finding a caller by phone (docs/api.md, "Find a caller"): one batch of three
// indexed reads, so one round trip. Each phone column has an index that leads
// with the org, and every OR branch names the org itself, so SQLite reads each
// branch from its own index (MULTI-INDEX OR) and sorts only the caller's few
// rows.
import { and, asc, desc, eq, gt, inArray, isNotNull, or, sql } from "drizzle-orm";
import { accounts, contacts, incidents } from "../../drizzle/schema";
import { accountView } from "./accounts";
import type { Db } from "./client";
import { contactView } from "./contacts";
import { incidentView } from "./incidents";
import type { Org } from "./orgs";
import { hasPhone } from "./phones";

/** At most this many of each list. */
export const CALLER_LIMIT = 10;

export async function findCaller(db: Db, { org, phone, now }: { org: Org; phone: string; now: number }) {
  const linkedAccounts = db
    .select({ id: contacts.accountId })
    .from(contacts)
    .where(and(hasPhone(contacts, org.id, phone), isNotNull(contacts.accountId)));
  // A unary + keeps a term out of the planner's choice of index (SQLite's own
  // idiom): without statistics it would read the org's whole account index
  // for the org_id term, or all its scheduled incidents for the status term,
  // instead of the few rows the id or account list names.
  const accountMatch = or(
    hasPhone(accounts, org.id, phone),
    and(sql`+${accounts.orgId} = ${org.id}`, inArray(accounts.id, linkedAccounts)),
  );
  const newestFirst = <T extends typeof contacts | typeof accounts>(table: T) => [
    desc(table.createdAt),
    desc(table.id),
  ];
  const listedAccounts = db
    .select({ id: accounts.id })
    .from(accounts)
    .where(accountMatch)
    .orderBy(...newestFirst(accounts))
    .limit(CALLER_LIMIT);
  // Not ended: a booking lasts at most maxBookingMs, which bounds the start
  // from below so that each branch reads one range of its index.
  const upcoming = and(
    eq(incidents.orgId, org.id),
    sql`+${incidents.status} = 'scheduled'`,
    gt(incidents.startsAt, now - org.maxBookingMs),
    gt(incidents.endsAt, now),
  );
  const [contactRows, accountRows, incidentRows] = await db.batch([
    db
      .select()
      .from(contacts)
      .where(hasPhone(contacts, org.id, phone))
      .orderBy(...newestFirst(contacts))
      .limit(CALLER_LIMIT),
    db
      .select()
      .from(accounts)
      .where(accountMatch)
      .orderBy(...newestFirst(accounts))
      .limit(CALLER_LIMIT),
    db
      .select()
      .from(incidents)
      .where(or(and(upcoming, eq(incidents.phone, phone)), and(upcoming, inArray(incidents.accountId, listedAccounts))))
      .orderBy(asc(incidents.startsAt), asc(incidents.id))
      .limit(CALLER_LIMIT),
  ]);
  return {
    phone,
    contacts: contactRows.map(contactView),
    accounts: accountRows.map(accountView),
    upcomingIncidents: incidentRows.map((row) => incidentView(row, org.schedule.timeZone)),
  };
}
