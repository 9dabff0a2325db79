// Holds (docs/api.md, "Holding a slot"): the bodies of hold-slot and
// release-hold, their answers, and the holdId a booking names.
import * as z from "zod/v4";
import { once } from "../lib/once";
import { dateTime, isoOut, LIMITS, optionalText, requiredText, textOut } from "./common";
import { visitFields } from "./services";
import { slot } from "./slots";

/** Ids are "hold_" and 26 characters; anything longer cannot be one. */
const HOLD_ID_MAX = 64;
const HOLD_EXAMPLE_ID = "hold_01m81r170vt72z173z69cgy8ce";

/** create-incident's holdId: the hold whose place the booking takes. */
export const holdIdField = () =>
  optionalText(HOLD_ID_MAX).meta({
    description:
      "A hold of hold-slot for this start and service: the booking takes its place. Expired, released or used: booked as if absent, with holdExpired: true",
    example: HOLD_EXAMPLE_ID,
  });

export const holdSlotBody = once(() =>
  z.strictObject({
    dateTime: dateTime(),
    ...visitFields(),
    insectName: optionalText(LIMITS.name).meta({
      description: "What the caller said (e.g. termites): chooses the service by its keywords",
      example: "termites",
    }),
    holdMinutes: z
      .number()
      .int()
      .min(1)
      .max(15)
      .nullish()
      .transform((v) => v ?? 5)
      .meta({ description: "How long the place is kept, 1 to 15 minutes (default 5)", example: 5 }),
  }),
);

export const releaseHoldBody = once(() =>
  z.strictObject({
    holdId: requiredText(HOLD_ID_MAX).meta({ description: "The id hold-slot answered", example: HOLD_EXAMPLE_ID }),
  }),
);

export const heldSlot = once(() =>
  z
    .object({
      holdId: z.string().meta({ example: HOLD_EXAMPLE_ID }),
      expiresAt: isoOut(),
      slot: slot(),
      technicianId: textOut().meta({ description: "The technician held, in technician mode; else null" }),
    })
    .meta({ id: "Hold", description: "The place kept; slot.remaining already counts it" }),
);

export const releasedHold = once(() =>
  z
    .object({ holdId: z.string().meta({ example: HOLD_EXAMPLE_ID }), released: z.literal(true) })
    .meta({ id: "ReleasedHold" }),
);
