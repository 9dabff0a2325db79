// Slot objects (docs/api.md, "Slot objects"), the reasons a slot cannot be
// booked, and an incident's appointment (a slot without its places left).
import * as z from "zod/v4";
import { once } from "../lib/once";
import { isoOut, textOut } from "./common";

const times = () => ({
  start: isoOut(),
  end: isoOut(),
  localStart: z
    .string()
    .meta({ example: "2026-11-23T09:00:00-05:00", description: "Org wall-clock time with its offset" }),
  localEnd: z.string().meta({ example: "2026-11-23T10:00:00-05:00" }),
});

/** The arrival window promised to the customer: [start, start + the service's window). */
export const arrivalWindow = once(() =>
  z.object(times()).nullable().meta({
    id: "ArrivalWindow",
    description: "When the technician arrives: from start to the service's arrival window; null for an exact time",
  }),
);

export const slot = once(() =>
  z
    .object({
      ...times(),
      remaining: z.number().int().meta({
        description: "Places left: crews free for the whole visit, or eligible technicians free and on duty for it",
      }),
      serviceId: textOut().meta({ description: "The service of the visit; null when none applies" }),
      arrivalWindow: arrivalWindow(),
    })
    .meta({ id: "Slot" }),
);

export type SlotOut = z.output<ReturnType<typeof slot>>;

export const reason = once(() =>
  z
    .enum([
      "in_the_past",
      "beyond_horizon",
      "closed",
      "not_a_slot_start",
      "out_of_service_area",
      "no_qualified_technician",
      "too_soon",
      "fully_booked",
    ])
    .meta({ id: "UnavailableReason" }),
);

/** An incident's appointment: the visit's times. */
export const appointment = once(() => z.object(times()).meta({ id: "Appointment" }));
