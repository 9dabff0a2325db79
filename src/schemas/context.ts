// The call context (docs/api.md, "Call context"): what a voice agent needs in
// its first turn.
import * as z from "zod/v4";
import { once } from "../lib/once";
import { isoOut } from "./common";
import { service } from "./services";
import { slot } from "./slots";

const WEEKDAY_NAMES = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] as const;

const weekdayName = () => z.enum(WEEKDAY_NAMES).meta({ description: "The local day's English name, lower case" });

export const callContext = once(() =>
  z
    .object({
      organization: z.object({
        id: z.string().meta({ example: "org_demo" }),
        name: z.string().meta({ example: "Demo Pest Control" }),
      }),
      timeZone: z.string().meta({ example: "America/New_York" }),
      now: isoOut().meta({ description: "The server's clock" }),
      localNow: z.string().meta({
        description: "The same instant in the organisation's zone, to the second, with its offset",
        example: "2026-11-25T09:03:00-05:00",
      }),
      localDate: z.string().meta({ example: "2026-11-25" }),
      weekday: weekdayName(),
      openingHours: z
        .array(
          z.object({
            date: z.string().meta({ example: "2026-11-25" }),
            weekday: weekdayName(),
            intervals: z
              .array(z.tuple([z.string(), z.string()]))
              .meta({ description: "Opening intervals, local HH:MM; [] when closed", example: [["08:00", "17:00"]] }),
          }),
        )
        .meta({ description: "7 local dates from today, closed dates with no intervals" }),
      services: z.array(
        service().pick({ id: true, name: true, durationMinutes: true, arrivalWindowMinutes: true, keywords: true }),
      ),
      nextAvailable: slot().nullable().meta({
        description: "The first bookable slot of the default visit from now (as available-appointments lists it)",
      }),
    })
    .meta({ id: "CallContext" }),
);

export { WEEKDAY_NAMES };
