// The ai-agent group (contract section 5): what voice and chat agents call
// while a customer waits. Every answer is computed from the org's schedule and
// the bookings of the scanned window, at the request's `now`.
import { Hono } from "hono";
import { type Booked, bookSlot } from "../../db/incidents";
import type { AppEnv } from "../../env";
import { jsonBody } from "../../http/body";
import { methodNotAllowed } from "../../http/method-not-allowed";
import { ApiError } from "../../http/problem";
import { validate } from "../../http/validate";
import { toIso } from "../../lib/datetime";
import { idempotency } from "../../middleware/idempotency";
import { rateLimit } from "../../middleware/rate-limit";
import { assessSlot, type Reason, remainingCounter, type SlotTimes, slotView } from "../../scheduling/slots";
import { availableAppointmentsBody, bookingCheckBody, createIncidentBody } from "../../schemas/ai-agent";
import { scanBookable } from "./scan";

const ALTERNATIVES = 3;

export const aiAgent = new Hono<AppEnv>()
  .post(
    "/available-appointments",
    rateLimit,
    jsonBody,
    validate("json", availableAppointmentsBody),
    idempotency,
    async (c) => {
      const { dateTime, limit } = c.req.valid("json");
      const { schedule } = c.var.org;
      const { slots } = await scanBookable(c.var.db, c.var.org, Date.now(), dateTime, limit);
      return c.json(
        { timeZone: schedule.timeZone, slots: slots.map((slot) => slotView(slot, schedule.timeZone)) },
        200,
      );
    },
  )
  .post("/is-booking-available", rateLimit, jsonBody, validate("json", bookingCheckBody), idempotency, async (c) => {
    const { dateTime } = c.req.valid("json");
    const { org } = c.var;
    const now = Date.now();
    const { slot, reason: unavailable } = assessSlot(org.schedule, now, dateTime);
    // Alternatives and the slot's own bookings come from one round trip.
    const { slots, covered } = await scanBookable(c.var.db, org, now, dateTime + 1, ALTERNATIVES, slot ? [slot] : []);
    const remaining = slot ? remainingCounter(covered, org.schedule.capacity, org.maxBookingMs)(slot) : 0;
    const reason: Reason | null = unavailable ?? (remaining > 0 ? null : "fully_booked");
    return c.json(
      {
        dateTime: toIso(dateTime),
        available: reason === null,
        reason,
        slot: slot ? slotView({ ...slot, remaining }, org.schedule.timeZone) : null,
        alternatives: slots.map((s) => slotView(s, org.schedule.timeZone)),
      },
      200,
    );
  })
  .post("/create-incident", rateLimit, jsonBody, validate("json", createIncidentBody), idempotency, async (c) => {
    const { dateTime, clientName, insectName } = c.req.valid("json");
    const { org } = c.var;
    const now = Date.now();
    const { slot, reason } = assessSlot(org.schedule, now, dateTime);
    // The JSON of a booking of `slot`, rendered by bookSlot once it knows the account and the places left.
    const respond = (bookedSlot: SlotTimes) => (booked: Booked) => ({
      id: booked.id,
      dateTime: toIso(dateTime),
      clientName,
      insectName,
      accountId: booked.accountId,
      appointment: slotView({ ...bookedSlot, remaining: booked.remaining }, org.schedule.timeZone),
      createdAt: toIso(now),
    });
    const booking =
      reason === null && slot
        ? await bookSlot(c.var.db, org, { clientName, insectName }, slot, now, respond(slot), c.var.heldKey)
        : null;
    if (booking === null) {
      const { slots } = await scanBookable(c.var.db, org, now, dateTime + 1, ALTERNATIVES);
      throw new ApiError(
        409,
        "slot_unavailable",
        "The slot at dateTime cannot be booked; see reason and alternatives",
        {
          members: {
            reason: reason ?? "fully_booked",
            alternatives: slots.map((s) => slotView(s, org.schedule.timeZone)),
          },
        },
      );
    }
    return c.body(booking, 200, { "Content-Type": "application/json" });
  })
  .all("/available-appointments", methodNotAllowed("POST"))
  .all("/is-booking-available", methodNotAllowed("POST"))
  .all("/create-incident", methodNotAllowed("POST"));
