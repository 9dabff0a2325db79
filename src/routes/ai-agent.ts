// The ai-agent group (docs/api.md, "Scheduling"): what voice and chat agents call
// while a customer waits. Every answer is computed from the org's schedule and
// the bookings of the scanned window, at the request's `now`.

import type { Context } from "hono";
import { alternativesAfter, scanBookable } from "../availability/scan";
import { findCaller } from "../db/callers";
import { type HoldRow, holdPlace, liveHolds, MAX_LIVE_HOLDS, releaseHold } from "../db/holds";
import { type Booked, type BookingRequest, bookSlot } from "../db/incidents";
import type { AppEnv } from "../env";
import { boundCaller, callerMismatch } from "../http/caller";
import { defineOperation } from "../http/operation";
import { holdLimitReached, slotUnavailable, validationFailed } from "../http/problem";
import { e164OrFail, requestOrFail } from "../http/validate";
import { writtenResponse } from "../http/written";
import { toIso } from "../lib/datetime";
import { type Reason, slotView } from "../scheduling/slots";
import { assessVisit, onDutyFor, placesCounter } from "../scheduling/visits";
import {
  availableAppointments,
  availableAppointmentsBody,
  bookingCheck,
  bookingCheckBody,
  caller,
  createIncidentBody,
  findCallerBody,
} from "../schemas/ai-agent";
import { heldSlot, holdSlotBody, releasedHold, releaseHoldBody } from "../schemas/holds";
import { bookedIncident } from "../schemas/incidents";

export const aiAgentOperations = [
  defineOperation({
    operationId: "findAvailableAppointments",
    tool: "find_available_appointments",
    method: "post",
    path: "/api/v1/ai-agent/available-appointments",
    tag: "ai-agent",
    effect: "read",
    roles: ["office", "agent", "read"],
    summary: "Find available appointment slots",
    description:
      "The first `limit` (default 10) bookable slots starting at or after `dateTime` (earlier values are lifted to now + minimum notice), ascending, within the booking horizon, for the visit's service (`serviceId`, else the one whose keyword is `insectName`, else the default) at `postalCode`. An empty list is a valid answer.",
    body: availableAppointmentsBody,
    response: availableAppointments,
    handler: async (c, { body: { dateTime, limit, ...visit } }) => {
      const { db, org } = c.var;
      const { timeZone } = org.schedule;
      const request = requestOrFail(org, visit);
      const { slots } = await scanBookable(db, { org, request, now: Date.now(), from: dateTime, limit });
      return c.json({ timeZone, slots: slots.map((slot) => slotView(slot, timeZone, request.visit)) }, 200);
    },
  }),
  defineOperation({
    operationId: "checkBookingAvailability",
    tool: "check_booking_availability",
    method: "post",
    path: "/api/v1/ai-agent/is-booking-available",
    tag: "ai-agent",
    effect: "read",
    roles: ["office", "agent", "read"],
    summary: "Check whether one slot can be booked",
    description:
      "Answers for exactly the slot that starts at `dateTime`: `available`, the `reason` when not (in_the_past, beyond_horizon, closed, not_a_slot_start, out_of_service_area, no_qualified_technician, too_soon, fully_booked — the first that applies), the slot itself, and up to 3 bookable alternatives after it.",
    body: bookingCheckBody,
    response: bookingCheck,
    handler: async (c, { body: { dateTime, ...visit } }) => {
      const { db, org } = c.var;
      const { timeZone } = org.schedule;
      const now = Date.now();
      const request = requestOrFail(org, visit);
      const { slot, fits, reason: unavailable } = assessVisit(request, now, dateTime);
      // Alternatives and the visits occupying this one's span come from one round trip.
      const span = slot && { start: slot.start, end: slot.end + request.visit.bufferMs };
      const { slots, covered } = await scanBookable(db, {
        org,
        request,
        now,
        from: dateTime + 1,
        limit: 3,
        alsoCover: span ? [span] : [],
      });
      // A crew visit that does not fit its day has no place, whatever the crews.
      const remaining = slot && fits ? placesCounter(request, covered, org.maxBookingMs)(slot.start) : 0;
      const reason: Reason | null = unavailable ?? (remaining > 0 ? null : "fully_booked");
      return c.json(
        {
          dateTime: toIso(dateTime),
          available: reason === null,
          reason,
          slot: slot ? slotView({ start: slot.start, end: slot.end, remaining }, timeZone, request.visit) : null,
          alternatives: slots.map((s) => slotView(s, timeZone, request.visit)),
        },
        200,
      );
    },
  }),
  defineOperation({
    operationId: "createIncident",
    tool: "create_incident",
    method: "post",
    path: "/api/v1/ai-agent/create-incident",
    tag: "ai-agent",
    effect: "create",
    roles: ["office", "agent"],
    summary: "Log an incident and book its visit",
    description:
      "Logs a pest or service incident and books the visit that starts at `dateTime`, atomically: never beyond capacity, and with technicians, assigned to an eligible technician free for the whole visit (never two overlapping visits for one technician). If the slot cannot be booked nothing is stored and the answer is 409 `slot_unavailable` with `reason` and `alternatives`. `clientName` is linked to the account of that name (case-insensitive) when exactly one exists.",
    body: createIncidentBody,
    response: bookedIncident,
    errors: ["slot_unavailable"],
    handler: (c, { body }) => bookOrRefuse(c, body, (request) => bookSlot(c.get("db"), request)),
  }),
  defineOperation({
    operationId: "holdSlot",
    tool: "hold_slot",
    method: "post",
    path: "/api/v1/ai-agent/hold-slot",
    tag: "ai-agent",
    effect: "create",
    roles: ["office", "agent"],
    summary: "Hold a slot while the caller gives their details",
    description:
      "Keeps the place of the visit that starts at `dateTime` for `holdMinutes` (1–15, default 5): until it expires, is released or is used by create-incident's `holdId`, it is counted by every availability answer, booking and reschedule, and the booking that names it cannot lose it. In technician mode the technician is chosen (and held) as a booking would be. If the start is not bookable: 409 `slot_unavailable` with `reason` and `alternatives`. At most 100 live holds per organisation (409 `hold_limit_reached`).",
    body: holdSlotBody,
    response: heldSlot,
    errors: ["slot_unavailable", "hold_limit_reached"],
    handler: async (c, { body: { dateTime, holdMinutes, ...visit } }) => {
      const { db, org, idempotencyKey } = c.var;
      const request = requestOrFail(org, visit);
      const now = Date.now();
      const { slot, reason } = assessVisit(request, now, dateTime);
      const candidates = slot && onDutyFor(request, slot.start);
      let live: number;
      if (reason === null && slot && candidates?.length !== 0) {
        const placement = { request, slot, candidates };
        const held = await holdPlace(db, { org, placement, minutes: holdMinutes, now, idempotencyKey });
        if (held.written) return writtenResponse(c, held.written);
        live = held.live;
      } else live = await liveHolds(db, org, now);
      if (live >= MAX_LIVE_HOLDS) throw holdLimitReached();
      throw slotUnavailable(reason ?? "fully_booked", await alternativesAfter(db, org, request, now, dateTime));
    },
  }),
  defineOperation({
    operationId: "releaseHold",
    tool: "release_hold",
    method: "post",
    path: "/api/v1/ai-agent/release-hold",
    tag: "ai-agent",
    effect: "change",
    roles: ["office", "agent"],
    summary: "Release a hold",
    description:
      "Gives a held place back (the caller chose another time, or hung up). Releasing a hold that has expired, been released or been used is also 200 and frees nothing a booking took, so retries are safe.",
    body: releaseHoldBody,
    response: releasedHold,
    handler: async (c, { body: { holdId } }) => {
      const { db, org, idempotencyKey } = c.var;
      const released = await releaseHold(db, { org, id: holdId, now: Date.now(), idempotencyKey });
      if (!released) throw validationFailed([unknownHold()]);
      return writtenResponse(c, released);
    },
  }),
  defineOperation({
    operationId: "findCaller",
    tool: "find_caller",
    method: "post",
    path: "/api/v1/ai-agent/find-caller",
    tag: "ai-agent",
    effect: "read",
    roles: ["office", "agent", "read"],
    summary: "Find who is calling, by phone number",
    description:
      "For the first second of an inbound call: the contacts and accounts whose mobile or business phone is this number (and the accounts of those contacts), newest first, and the caller's upcoming scheduled incidents (by phone or by one of those accounts), soonest first, and their active plans, newest first; at most 10 of each. An unknown caller is empty lists, not 404.",
    body: findCallerBody,
    response: caller,
    errors: ["caller_mismatch", "caller_unknown"],
    handler: async (c, { body }) => {
      const { db, org } = c.var;
      const given = body.phone === null ? null : e164OrFail(body.phone, org.country);
      const caller = boundCaller(c);
      if (caller !== undefined && given !== null && given !== caller) throw callerMismatch();
      return c.json(await findCaller(db, { org, phone: caller ?? (given as string), now: Date.now() }), 200);
    },
  }),
];

/** What create-incident (and create-plan, for its first visit) takes of the visit. */
export interface VisitBody {
  dateTime: number;
  clientName: string;
  insectName: string;
  phone: string | null;
  notes: string | null;
  serviceId: string | null;
  postalCode: string | null;
  holdId: string | null;
}

/**
 * Books a new visit as create-incident does (docs/api.md, "Book"), with
 * `book` (bookSlot, or createPlan for a plan's first visit): its answer, or
 * when nothing was booked the refusal — the named hold's 422, else 409
 * slot_unavailable with alternatives (and holdExpired when a hold was named).
 */
export async function bookOrRefuse(
  c: Context<AppEnv>,
  { dateTime, phone, serviceId, holdId, ...details }: VisitBody,
  book: (request: BookingRequest) => Promise<Booked>,
): Promise<Response> {
  const { db, org, idempotencyKey, actor } = c.var;
  // An agent's booking with no phone is the caller's (a reported one); another phone is kept as given.
  const given = phone === null ? null : e164OrFail(phone, org.country);
  const incident = { ...details, phone: given ?? (actor.role === "agent" ? actor.callerPhone : null) };
  const request = requestOrFail(org, { serviceId, insectName: details.insectName, postalCode: details.postalCode });
  const now = Date.now();
  const { slot, reason } = assessVisit(request, now, dateTime);
  const candidates = slot && onDutyFor(request, slot.start);
  const open = reason === null && candidates?.length !== 0;
  // A live hold for this visit books it whatever the worker thinks of the start now.
  const booked =
    open || holdId !== null
      ? await book({
          org,
          placement: {
            request,
            slot: slot ?? { start: dateTime, end: dateTime + request.visit.durationMs },
            candidates,
          },
          open,
          incident,
          now,
          holdId: holdId ?? undefined,
          idempotencyKey,
          actor,
        })
      : {};
  if (booked.written) return writtenResponse(c, booked.written);
  if (holdId !== null) refuseHold(holdId, booked.hold, now);
  const alternatives = await alternativesAfter(db, org, request, now, dateTime);
  throw slotUnavailable(reason ?? "fully_booked", alternatives, holdId === null ? {} : { holdExpired: true });
}

const unknownHold = () => ({ path: "holdId", code: "not_found", message: "no hold with this id in your organisation" });

/**
 * Why a booking naming a hold was refused, when the hold is the reason:
 * unknown to the org, or live but for another visit (it stays live). A
 * lapsed hold is not a reason: the booking went as if it were not named.
 */
function refuseHold(holdId: string, hold: HoldRow | undefined, now: number) {
  if (!hold) throw validationFailed([unknownHold()]);
  if (hold.expiresAt > now) {
    throw validationFailed([
      {
        path: "holdId",
        code: "hold_mismatch",
        message: `hold ${holdId} is for another visit: the one starting ${toIso(hold.startsAt)} (service ${hold.serviceId ?? "none"}${hold.technicianId ? `, postal code ${hold.postalCode ?? "none"}` : ""}); book that start, or release it and hold this one`,
      },
    ]);
  }
}
