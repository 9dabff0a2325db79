// Slot objects (docs/api.md, "Slot objects"), the reasons a slot cannot be
// booked, and an incident's appointment (a slot without its places left).
import * as z from "zod";
import { once } from "../lib/once";
import { isoOut } from "./common";

export const slot = once(() =>
  z
    .object({
      start: isoOut(),
      end: isoOut(),
      localStart: z
        .string()
        .meta({ example: "2026-11-23T09:00:00-05:00", description: "Org wall-clock time with its offset" }),
      localEnd: z.string().meta({ example: "2026-11-23T10:00:00-05:00" }),
      remaining: z.number().int().meta({ description: "Places left: capacity minus bookings holding the slot" }),
    })
    .meta({ id: "Slot" }),
);

export type SlotOut = z.output<ReturnType<typeof slot>>;

export const reason = once(() =>
  z
    .enum(["in_the_past", "beyond_horizon", "closed", "not_a_slot_start", "too_soon", "fully_booked"])
    .meta({ id: "UnavailableReason" }),
);

export const appointment = once(() => {
  const { remaining: _, ...times } = slot().shape;
  return z.object(times).meta({ id: "Appointment" });
});
