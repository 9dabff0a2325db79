// The ai-agent group (contract section 5): what voice and chat agents call
// while a customer waits. Every answer is computed from the org's schedule and
// the bookings of the scanned window, at the request's `now`.
import { bookSlot } from "../../db/incidents";
import { ApiError } from "../../http/problem";
import { toIso } from "../../lib/datetime";
import { writtenResponse } from "../../middleware/idempotency";
import { assessSlot, type Reason, remainingCounter, slotView } from "../../scheduling/slots";
import { availableAppointmentsBody, bookingCheckBody, createIncidentBody } from "../../schemas/ai-agent";
import { availableAppointments, bookingCheck, incident } from "../../schemas/responses";
import { defineOperation } from "../operation";
import { scanBookable } from "./scan";

const ALTERNATIVES = 3;

export const aiAgentOperations = [
  defineOperation({
    operationId: "findAvailableAppointments",
    tool: "find_available_appointments",
    method: "post",
    path: "/api/v1/ai-agent/available-appointments",
    tag: "ai-agent",
    effect: "read",
    summary: "Find available appointment slots",
    description:
      "The first `limit` (default 10) bookable slots starting at or after `dateTime` (earlier values are lifted to now + minimum notice), ascending, within the booking horizon. An empty list is a valid answer.",
    body: availableAppointmentsBody,
    example: { dateTime: "2026-11-24T08:00:00-05:00", limit: 3 },
    response: availableAppointments,
    responseExample: {
      timeZone: "America/New_York",
      slots: [
        {
          start: "2026-11-24T13:00:00.000Z",
          end: "2026-11-24T14:00:00.000Z",
          localStart: "2026-11-24T08:00:00-05:00",
          localEnd: "2026-11-24T09:00:00-05:00",
          remaining: 1,
        },
      ],
    },
    handler: async (c, { body: { dateTime, limit } }) => {
      const { db, org } = c.var;
      const { timeZone } = org.schedule;
      const { slots } = await scanBookable(db, { org, now: Date.now(), from: dateTime, limit });
      return c.json({ timeZone, slots: slots.map((slot) => slotView(slot, timeZone)) }, 200);
    },
  }),
  defineOperation({
    operationId: "checkBookingAvailability",
    tool: "check_booking_availability",
    method: "post",
    path: "/api/v1/ai-agent/is-booking-available",
    tag: "ai-agent",
    effect: "read",
    summary: "Check whether one slot can be booked",
    description:
      "Answers for exactly the slot that starts at `dateTime`: `available`, the `reason` when not (in_the_past, beyond_horizon, closed, not_a_slot_start, too_soon, fully_booked — the first that applies), the slot itself, and up to 3 bookable alternatives after it.",
    body: bookingCheckBody,
    example: { dateTime: "2026-11-24T13:00:00Z" },
    response: bookingCheck,
    responseExample: {
      dateTime: "2026-11-24T13:00:00.000Z",
      available: true,
      reason: null,
      slot: {
        start: "2026-11-24T13:00:00.000Z",
        end: "2026-11-24T14:00:00.000Z",
        localStart: "2026-11-24T08:00:00-05:00",
        localEnd: "2026-11-24T09:00:00-05:00",
        remaining: 1,
      },
      alternatives: [
        {
          start: "2026-11-24T14:00:00.000Z",
          end: "2026-11-24T15:00:00.000Z",
          localStart: "2026-11-24T09:00:00-05:00",
          localEnd: "2026-11-24T10:00:00-05:00",
          remaining: 1,
        },
      ],
    },
    handler: async (c, { body: { dateTime } }) => {
      const { db, org } = c.var;
      const { timeZone, capacity } = org.schedule;
      const now = Date.now();
      const { slot, reason: unavailable } = assessSlot(org.schedule, now, dateTime);
      // Alternatives and the slot's own bookings come from one round trip.
      const { slots, covered } = await scanBookable(db, {
        org,
        now,
        from: dateTime + 1,
        limit: ALTERNATIVES,
        alsoCover: slot ? [slot] : [],
      });
      const remaining = slot ? remainingCounter(covered, capacity, org.maxBookingMs)(slot) : 0;
      const reason: Reason | null = unavailable ?? (remaining > 0 ? null : "fully_booked");
      return c.json(
        {
          dateTime: toIso(dateTime),
          available: reason === null,
          reason,
          slot: slot ? slotView({ ...slot, remaining }, timeZone) : null,
          alternatives: slots.map((s) => slotView(s, timeZone)),
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
    summary: "Log an incident and book its visit",
    description:
      "Logs a pest or service incident and books the slot that starts at `dateTime`, atomically: a slot is never booked beyond its capacity. If the slot cannot be booked nothing is stored and the answer is 409 `slot_unavailable` with `reason` and `alternatives`. `clientName` is linked to the account of that name (case-insensitive) when exactly one exists.",
    body: createIncidentBody,
    example: { dateTime: "2026-11-24T13:00:00Z", clientName: "Acme Apartments", insectName: "German cockroach" },
    response: incident,
    responseExample: {
      id: "inc_01m81r170vt72z173z69cgy8ce",
      dateTime: "2026-11-24T13:00:00.000Z",
      clientName: "Acme Apartments",
      insectName: "German cockroach",
      accountId: "acct_demo0000000000000000000001",
      appointment: {
        start: "2026-11-24T13:00:00.000Z",
        end: "2026-11-24T14:00:00.000Z",
        localStart: "2026-11-24T08:00:00-05:00",
        localEnd: "2026-11-24T09:00:00-05:00",
        remaining: 0,
      },
      createdAt: "2026-11-23T15:04:05.123Z",
    },
    errors: ["slot_unavailable"],
    handler: async (c, { body: { dateTime, ...details } }) => {
      const { db, org, heldKey } = c.var;
      const now = Date.now();
      const { slot, reason } = assessSlot(org.schedule, now, dateTime);
      const booked =
        reason === null && slot ? await bookSlot(db, { org, slot, incident: details, now, held: heldKey }) : null;
      if (booked === null) {
        const { slots } = await scanBookable(db, { org, now, from: dateTime + 1, limit: ALTERNATIVES });
        throw new ApiError("slot_unavailable", "The slot at dateTime cannot be booked; see reason and alternatives", {
          members: {
            reason: reason ?? "fully_booked",
            alternatives: slots.map((s) => slotView(s, org.schedule.timeZone)),
          },
        });
      }
      return writtenResponse(c, booked);
    },
  }),
];
