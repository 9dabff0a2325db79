// The incidents list (docs/api.md, "Incidents"): a page of an org's
// incidents in (start, id) order, by keyset, under any of its filters; for a
// call bound to a caller, only the caller's (ofCaller).
import { and, eq, gte, lt } from "drizzle-orm";
import { type IncidentStatus, incidents } from "../../drizzle/schema";
import { afterCursor, afterOf, type CursorPosition, type Db, pageOf, param, preparedWith } from "./client";
import { incidentColumns, ofCaller } from "./incidents";

export interface IncidentFilters {
  from?: number;
  to?: number;
  status?: IncidentStatus;
  accountId?: string;
  /** E.164. */
  phone?: string;
  updatedSince?: number;
  technicianId?: string;
  serviceId?: string;
}

export interface IncidentPageQuery {
  orgId: string;
  filters: IncidentFilters;
  /** A bound call's caller: only the caller's incidents are read. */
  caller?: string;
  after?: CursorPosition;
  limit: number;
}

/**
 * One page in (startsAt, id) order, read by keyset. Each filter but
 * updatedSince has an index ending in that order (org, then the filter, then
 * start and id), so a page reads its rows and one more, at any depth.
 */
const incidentPage = preparedWith((db, has) =>
  db
    .select(incidentColumns)
    .from(incidents)
    .where(
      and(
        eq(incidents.orgId, param("orgId")),
        has("from") ? gte(incidents.startsAt, param("from")) : undefined,
        has("to") ? lt(incidents.startsAt, param("to")) : undefined,
        has("status") ? eq(incidents.status, param("status")) : undefined,
        has("accountId") ? eq(incidents.accountId, param("accountId")) : undefined,
        has("phone") ? eq(incidents.phone, param("phone")) : undefined,
        has("updatedSince") ? gte(incidents.updatedAt, param("updatedSince")) : undefined,
        has("technicianId") ? eq(incidents.technicianId, param("technicianId")) : undefined,
        has("serviceId") ? eq(incidents.serviceId, param("serviceId")) : undefined,
        has("caller") ? ofCaller(db, param("orgId"), param("caller")) : undefined,
        has("afterAt") ? afterCursor(incidents.startsAt, incidents.id) : undefined,
      ),
    )
    .orderBy(incidents.startsAt, incidents.id)
    .limit(param("limit")),
);

export async function listIncidents(db: Db, { orgId, filters, caller, after, limit }: IncidentPageQuery) {
  const { from, to, status, accountId, phone, updatedSince, technicianId, serviceId } = filters;
  const rows = await incidentPage(db, {
    orgId,
    // A cursor's row is at or after `from` already (cursors are bound to the
    // filters), and SQLite seeks by one lower bound only: the keyset's.
    from: after ? undefined : from,
    to,
    status,
    accountId,
    phone,
    updatedSince,
    technicianId,
    serviceId,
    caller,
    ...afterOf(after),
    limit: limit + 1,
  }).all();
  return pageOf(rows, limit);
}
