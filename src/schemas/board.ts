// The dispatch board (docs/api.md, "The dispatch board"): one local day of the
// organisation, a row per technician with their hours, visits and holds.
import * as z from "zod/v4";
import { once } from "../lib/once";
import { isoOut, textOut } from "./common";
import { incident } from "./incidents";
import { appointment } from "./slots";

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_MS = 86_400_000;

/** A calendar date "YYYY-MM-DD" (years 0001–9999) as days since 1970-01-01, or null when there is no such date. */
export function localDateFrom(text: string): number | null {
  const m = DATE.exec(text);
  if (!m || m[1] === "0000") return null;
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not map years 0–99 to 1900–1999.
  date.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return date.toISOString().slice(0, 10) === text ? date.getTime() / DAY_MS : null;
}

export const boardQuery = once(() =>
  z.strictObject({
    date: z
      .string()
      .trim()
      // An empty value is left to the query validator (empty_value).
      .refine((v) => v === "" || localDateFrom(v) !== null, {
        message: "must be a date YYYY-MM-DD",
        params: { code: "invalid_format" },
      })
      .optional()
      .meta({
        format: "date",
        description: "A local date of the organisation; default its today",
        example: "2026-11-24",
      })
      .transform((v) => (v ? (localDateFrom(v) as number) : undefined)),
  }),
);

const times = () => appointment().shape;

export const board = once(() =>
  z
    .object({
      date: z.string().meta({ example: "2026-11-24", description: "The local date shown" }),
      timeZone: z.string().meta({ example: "America/New_York" }),
      rows: z.array(
        z.object({
          technician: z
            .object({ id: z.string(), name: z.string() })
            .nullable()
            .meta({ description: "null: visits with no active technician, or every crew in crew mode" }),
          duty: z.array(z.object(times())).meta({
            description:
              "The hours worked that day (the technician's own or the organisation's); [] on a day off or a closed date",
          }),
          visits: z.array(incident()).meta({ description: "The row's visits of that date, by start, then id" }),
          holds: z.array(
            z
              .object({
                start: isoOut(),
                end: isoOut().meta({ description: "The held visit's end" }),
                expiresAt: isoOut().meta({ description: "When the place is free again unless booked" }),
                serviceId: textOut(),
              })
              .meta({ description: "A live hold starting that date" }),
          ),
        }),
      ),
    })
    .meta({ id: "Board" }),
);

export type BoardOut = z.output<ReturnType<typeof board>>;
