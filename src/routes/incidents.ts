// Incidents (docs/api.md, "After the booking"): read, list, cancel, reschedule, close.
// A change is first tried in one round trip, its conditions checked by the
// batch on the incident as it is (changeInOneTrip). When they fail, the
// incident, read then, is decided here, then written by one conditional
// statement that applies only if it is still as read (changeIncident); if
// another change came first, it is decided again on the incident as it now is.
import type { Context } from "hono";
import type { EventType } from "../../drizzle/schema";
import { alternativesAfter } from "../availability/scan";
import { changeInOneTrip, type MoveRules, type OneTripChange } from "../db/incident-changes";
import { listIncidents } from "../db/incident-list";
import {
  CHANGE_EVENTS,
  changeIncident,
  getIncident,
  type IncidentRow,
  incidentView,
  type Placement,
} from "../db/incidents";
import { zoneTable } from "../db/local-times";
import type { Org } from "../db/orgs";
import type { AppEnv } from "../env";
import { boundCaller, callerMismatch } from "../http/caller";
import { decodeCursor, encodeCursor } from "../http/cursor";
import { defineOperation } from "../http/operation";
import { ApiError, slotUnavailable } from "../http/problem";
import { e164OrFail } from "../http/validate";
import { writtenResponse } from "../http/written";
import { MINUTE } from "../lib/datetime";
import {
  assessVisit,
  dutyRoster,
  normalisePostalCode,
  onDutyFor,
  type VisitRequest,
  visitOf,
} from "../scheduling/visits";
import { dateString, localDateOf, localToInstant } from "../scheduling/zone";
import {
  cancelIncidentBody,
  closeIncidentBody,
  incident,
  incidentIdParam,
  incidentPage,
  listIncidentsQuery,
  rescheduleIncidentBody,
} from "../schemas/incidents";

/** How many times a change is decided again when other changes to the incident keep coming first. */
const CHANGE_ATTEMPTS = 5;

const notFound = () => new ApiError("incident_not_found", "No incident with this id");

const NOT_CHANGEABLE = {
  cancelled: "The incident is cancelled",
  in_the_past: "The appointment has already started",
  not_started: "The appointment has not started yet: only a started visit can be closed",
  closed: "The incident is closed (completed or no_show)",
} as const;

const notChangeable = (reason: keyof typeof NOT_CHANGEABLE) =>
  new ApiError("incident_not_changeable", NOT_CHANGEABLE[reason], { members: { reason } });

/** Whether the office closed the visit (docs/api.md, "Close"): it then keeps its place, and cannot be changed. */
const isClosed = (row: IncidentRow) => row.status === "completed" || row.status === "no_show";

/**
 * Runs `decide` on the incident as read, and again on the incident as it now
 * is whenever a change decided came too late (another change to it was
 * written first); `decide` answers with a Response or a change to write.
 * With `oneTrip` (the change as the batch can decide it alone, or
 * undefined), the first attempt is that batch, which reads the incident
 * for `decide` when the change did not apply to it.
 */
async function changeLoop(
  c: Context<AppEnv>,
  id: string,
  decide: (
    seen: IncidentRow,
    now: number,
  ) => Promise<Response | { changed: IncidentRow; move?: Placement; type?: EventType }>,
  oneTrip?: (now: number) => { change: OneTripChange; back: number } | undefined,
): Promise<Response> {
  const { db, org, idempotencyKey, actor } = c.var;
  // A bound call reads only the caller's incident: another's is not found, and so never changed.
  const caller = boundCaller(c);
  const now = Date.now();
  const first = oneTrip?.(now);
  let seen: IncidentRow | undefined;
  if (first) {
    const offsets = zoneTable(org.schedule, now, first.back);
    const result = await changeInOneTrip(db, { org, id, caller, now, offsets, ...first, idempotencyKey, actor });
    if (result.written) return writtenResponse(c, result.written);
    seen = result.current;
  } else seen = await getIncident(db, org.id, id, caller);
  for (let attempt = 1; ; attempt++) {
    if (!seen) throw notFound();
    const decision = await decide(seen, Date.now());
    if (decision instanceof Response) return decision;
    if (attempt > CHANGE_ATTEMPTS) {
      throw new ApiError("unavailable", "The incident is changing too often; retry shortly", {
        headers: { "Retry-After": "1" },
      });
    }
    const result = await changeIncident(db, { org, seen, ...decision, idempotencyKey, actor });
    if (result.written) return writtenResponse(c, result.written);
    seen = result.current;
  }
}

export const incidentOperations = [
  defineOperation({
    operationId: "getIncident",
    tool: "get_incident",
    method: "get",
    path: "/api/v1/incidents/{id}",
    tag: "Incidents",
    effect: "read",
    roles: ["office", "agent", "read"],
    summary: "Get an incident",
    description:
      "One incident (a booked appointment) of your organisation, with its status. An unknown id, a malformed id and another organisation's id all answer 404 incident_not_found.",
    params: incidentIdParam,
    response: incident,
    errors: ["incident_not_found", "caller_unknown"],
    handler: async (c, { params }) => {
      const { db, org } = c.var;
      const row = await getIncident(db, org.id, params.id, boundCaller(c));
      if (!row) throw notFound();
      return c.json(incidentView(row, org.schedule.timeZone), 200);
    },
  }),
  defineOperation({
    operationId: "listIncidents",
    tool: "list_incidents",
    method: "get",
    path: "/api/v1/incidents",
    tag: "Incidents",
    effect: "read",
    roles: ["office", "agent", "read"],
    summary: "List incidents",
    description:
      "Incidents by appointment start, then id, read by keyset: pass `nextCursor` as `cursor` for the next page (null on the last). Filters: from (start ≥), to (start <), status, accountId, phone (any spelling), updatedSince (≥).",
    query: listIncidentsQuery,
    response: incidentPage,
    errors: ["caller_mismatch", "caller_unknown"],
    handler: async (c, { query }) => {
      const { limit, cursor, phone, ...rest } = query;
      const { db, org } = c.var;
      const filters = { ...rest, ...(phone === undefined ? {} : { phone: e164OrFail(phone, org.country) }) };
      const caller = boundCaller(c);
      if (caller !== undefined && filters.phone !== undefined && filters.phone !== caller) throw callerMismatch();
      // A cursor belongs to one org and one set of (normalised) filters; `limit` may change.
      const scope = {
        secret: org.cursorSecret,
        filters: [
          "incidents",
          ...(["from", "to", "status", "accountId", "phone", "updatedSince", "technicianId", "serviceId"] as const).map(
            (f) => filters[f] ?? null,
          ),
          caller ?? null,
        ],
      };
      const after = cursor === undefined ? undefined : await decodeCursor(cursor, scope);
      const page = await listIncidents(db, { orgId: org.id, filters, caller, after, limit });
      const last = page.rows.at(-1);
      return c.json(
        {
          data: page.rows.map((row) => incidentView(row, org.schedule.timeZone)),
          hasMore: page.hasMore,
          nextCursor: page.hasMore && last ? await encodeCursor({ at: last.startsAt, id: last.id }, scope) : null,
        },
        200,
      );
    },
  }),
  defineOperation({
    operationId: "cancelIncident",
    tool: "cancel_incident",
    method: "post",
    path: "/api/v1/incidents/{id}/cancel",
    tag: "Incidents",
    effect: "change",
    roles: ["office", "agent"],
    summary: "Cancel an incident's appointment",
    description:
      "The incident becomes `cancelled` and its place is free at once. Cancelling a cancelled incident is 200 with it unchanged (safe to retry); a closed incident is 409 incident_not_changeable (reason closed), and an appointment that has already started too (reason in_the_past).",
    params: incidentIdParam,
    body: cancelIncidentBody,
    response: incident,
    errors: ["incident_not_found", "incident_not_changeable", "caller_unknown"],
    handler: (c, { params, body }) =>
      changeLoop(
        c,
        params.id,
        async (seen, now) => {
          if (seen.status === "cancelled") return c.json(incidentView(seen, c.get("org").schedule.timeZone), 200);
          if (isClosed(seen)) throw notChangeable("closed");
          if (seen.startsAt <= now) throw notChangeable("in_the_past");
          return {
            changed: { ...seen, status: "cancelled", cancelledAt: now, cancelReason: body.reason, updatedAt: now },
          };
        },
        () => ({ change: { kind: "cancel", reason: body.reason }, back: 0 }),
      ),
  }),
  defineOperation({
    operationId: "rescheduleIncident",
    tool: "reschedule_incident",
    method: "post",
    path: "/api/v1/incidents/{id}/reschedule",
    tag: "Incidents",
    effect: "change",
    roles: ["office", "agent"],
    summary: "Move an incident's appointment to another slot",
    description:
      "Moves the appointment to the slot that starts at `dateTime`; the id stays. The new slot must be bookable (as create-incident), the incident's own booking not counted; if not, nothing changes and the answer is 409 slot_unavailable with reason and alternatives. The slot it already holds is 200 unchanged. A cancelled, closed or started incident is 409 incident_not_changeable (reason cancelled, closed or in_the_past).",
    params: incidentIdParam,
    body: rescheduleIncidentBody,
    response: incident,
    errors: ["incident_not_found", "incident_not_changeable", "slot_unavailable", "caller_unknown"],
    handler: (c, { params, body: { dateTime } }) => {
      const { db, org } = c.var;
      let tried: IncidentRow | undefined;
      return changeLoop(
        c,
        params.id,
        async (seen, now) => {
          if (seen.status === "cancelled") throw notChangeable("cancelled");
          if (isClosed(seen)) throw notChangeable("closed");
          if (seen.startsAt <= now) throw notChangeable("in_the_past");
          if (seen.startsAt === dateTime) return c.json(incidentView(seen, org.schedule.timeZone), 200);
          const request = requestOfVisit(org, seen);
          // The change did not apply and the incident is as it was: the slot was full.
          if (tried && sameState(tried, seen))
            throw slotUnavailable("fully_booked", await alternativesAfter(db, org, request, now, dateTime));
          const { slot, reason } = assessVisit(request, now, dateTime);
          const candidates = slot && onDutyFor(request, slot.start);
          if (reason !== null || !slot || candidates?.length === 0)
            throw slotUnavailable(reason ?? "fully_booked", await alternativesAfter(db, org, request, now, dateTime));
          tried = seen;
          const { durationMs, bufferMs } = request.visit;
          return {
            changed: {
              ...seen,
              startsAt: slot.start,
              endsAt: slot.start + durationMs,
              occupiedUntil: slot.start + durationMs + bufferMs,
              updatedAt: now,
            },
            move: { request, slot: { start: slot.start, end: slot.start + durationMs }, candidates },
          };
        },
        (now) => {
          const rules = moveRules(org, now, dateTime);
          return rules && { change: { kind: "move", rules }, back: 0 };
        },
      );
    },
  }),
  defineOperation({
    operationId: "closeIncident",
    tool: "close_incident",
    method: "post",
    path: "/api/v1/incidents/{id}/close",
    tag: "Incidents",
    effect: "change",
    roles: ["office"],
    summary: "Close a started visit: completed or no_show",
    description:
      "The office closes the day: the visit was done (`completed`) or nobody was there (`no_show`), with an optional `note`. Only a scheduled incident whose appointment has started can be closed; else 409 incident_not_changeable with reason cancelled, not_started or closed (checked in that order). Closing again with the same outcome is 200 unchanged (a new note is ignored); another outcome is 409 (reason closed). A closed visit keeps occupying its span as booked.",
    params: incidentIdParam,
    body: closeIncidentBody,
    response: incident,
    errors: ["incident_not_found", "incident_not_changeable"],
    handler: (c, { params, body: { outcome, note } }) =>
      changeLoop(
        c,
        params.id,
        async (seen, now) => {
          if (seen.status === "cancelled") throw notChangeable("cancelled");
          if (seen.startsAt > now) throw notChangeable("not_started");
          if (seen.status === outcome) return c.json(incidentView(seen, c.get("org").schedule.timeZone), 200);
          if (isClosed(seen)) throw notChangeable("closed");
          return {
            changed: { ...seen, status: outcome, closedAt: now, outcomeNote: note, updatedAt: now },
            type: CHANGE_EVENTS[outcome],
          };
        },
        () => ({ change: { kind: "close", outcome, note }, back: CLOSE_BACK_DAYS }),
      ),
  }),
];

/**
 * A booked visit moves as it is: with its service's skills, at its place, and
 * with the length, buffer and arrival window it was booked with (a visit of no
 * service takes the schedule's slot length now, as a booking would).
 */
function requestOfVisit(org: Org, row: IncidentRow): VisitRequest {
  const service = org.catalogue.services.find((s) => s.id === row.serviceId) ?? null;
  const visit = visitOf(org.schedule, service);
  return {
    schedule: org.schedule,
    visit:
      row.serviceId === null
        ? visit
        : {
            serviceId: row.serviceId,
            durationMs: row.endsAt - row.startsAt,
            bufferMs: row.occupiedUntil - row.endsAt,
            windowMs: row.arrivalWindowMinutes * MINUTE,
            skills: visit.skills,
          },
    technicians: org.catalogue.technicians,
    postalCode: row.postalCode === null ? null : normalisePostalCode(row.postalCode),
  };
}

/** How far back a close is decided in one trip: a visit closed later than that takes the read first. */
const CLOSE_BACK_DAYS = 31;

/** Per catalogue, each service's skills by id (JSON): what a move in one trip gives a visit of that service. */
const skillsOf = new WeakMap<Org["catalogue"], string>();

/**
 * What a move to `start` needs of the incident, known before reading it: the
 * lengths a visit may have and be booked there (of no service: the slot; of
 * a service: its current length — another length is decided after a read),
 * and in technician mode who is on duty for each. Undefined when none.
 */
function moveRules(org: Org, now: number, start: number): MoveRules | undefined {
  const { schedule, catalogue } = org;
  const { technicians } = catalogue;
  const slotMs = schedule.slotMinutes * MINUTE;
  const duty = technicians.some((t) => t.active) ? dutyRoster(schedule) : undefined;
  const durations: number[] = [];
  const onDuty: Record<string, string[]> = {};
  for (const durationMs of new Set([slotMs, ...catalogue.services.map((s) => s.durationMinutes * MINUTE)])) {
    const visit = { serviceId: null, durationMs, bufferMs: 0, windowMs: 0, skills: [] };
    const { slot, reason } = assessVisit({ schedule, visit, technicians, postalCode: null }, now, start);
    if (reason !== null || !slot) continue;
    if (duty) {
      const ids = technicians.filter((t) => t.active && duty(t, start, start + durationMs)).map((t) => t.id);
      if (ids.length === 0) continue;
      onDuty[`d${durationMs}`] = ids;
    }
    durations.push(durationMs);
  }
  if (durations.length === 0) return undefined;
  const base = { start, durations: JSON.stringify(durations), slotMs };
  if (!duty) return { ...base, duty: null, skills: null, date: null, dayStart: null, dayEnd: null };
  let skills = skillsOf.get(catalogue);
  if (skills === undefined) {
    skills = JSON.stringify(Object.fromEntries(catalogue.services.map((s) => [s.id, s.skills])));
    skillsOf.set(catalogue, skills);
  }
  const date = localDateOf(start, schedule.timeZone);
  return {
    ...base,
    duty: JSON.stringify(onDuty),
    skills,
    date: dateString(date),
    dayStart: localToInstant(date, 0, schedule.timeZone),
    dayEnd: localToInstant(date + 1, 0, schedule.timeZone),
  };
}

const sameState = (a: IncidentRow, b: IncidentRow) =>
  a.status === b.status && a.startsAt === b.startsAt && a.endsAt === b.endsAt && a.updatedAt === b.updatedAt;
