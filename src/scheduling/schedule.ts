// An org's schedule (docs/api.md, "The schedule"): its types, its defaults and
// the zod schema that validates a `schedule set` document.
import * as z from "zod/v4";
import { once } from "../lib/once";

export const WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;
export type Weekday = (typeof WEEKDAYS)[number];
/** [opening, closing] as "HH:MM" local wall-clock times; closing may be "24:00". */
export type Interval = [string, string];

export type WeeklyHours = Record<Weekday, Interval[]>;

export interface Schedule {
  timeZone: string;
  slotMinutes: number;
  capacity: number;
  minNoticeMinutes: number;
  horizonDays: number;
  weeklyHours: WeeklyHours;
  closedDates: string[];
}

/** What the orgs table stores: the schedule without its zone (a column of its own). */
export type StoredSchedule = Omit<Schedule, "timeZone">;

const OFFICE_HOURS: Interval[] = [["08:00", "17:00"]];

export const DEFAULT_SCHEDULE: StoredSchedule = {
  slotMinutes: 60,
  capacity: 1,
  minNoticeMinutes: 120,
  horizonDays: 30,
  weeklyHours: {
    mon: OFFICE_HOURS,
    tue: OFFICE_HOURS,
    wed: OFFICE_HOURS,
    thu: OFFICE_HOURS,
    fri: OFFICE_HOURS,
    sat: [],
    sun: [],
  },
  closedDates: [],
};

export const scheduleOf = (timeZone: string, stored: StoredSchedule | null): Schedule => ({
  timeZone,
  ...(stored ?? DEFAULT_SCHEDULE),
});

/** Minutes after local midnight of "HH:MM" ("24:00" is 1440). */
export const minutesOf = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

export function isTimeZone(name: string): boolean {
  // Intl also takes offsets such as "+05:00"; a schedule takes IANA names only.
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const isPlainDate = (text: string) => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return false;
  const date = new Date(Date.UTC(2000, Number(m[2]) - 1, Number(m[3])));
  date.setUTCFullYear(Number(m[1]));
  return date.toISOString().startsWith(text);
};

const time = (closing: boolean) =>
  z.string().regex(closing ? /^(([01]\d|2[0-3]):[0-5]\d|24:00)$/ : /^([01]\d|2[0-3]):[0-5]\d$/, {
    message: closing
      ? 'must be a time "HH:MM" from "00:01" to "24:00"'
      : 'must be a time "HH:MM" from "00:00" to "23:59"',
  });

// One schema, shared by the seven days of weeklyHours.
const dayHours = once(() =>
  z
    .array(z.tuple([time(false), time(true)]))
    .max(48)
    .superRefine((intervals, ctx) => {
      intervals.forEach(([open, close], i) => {
        if (minutesOf(open) >= minutesOf(close)) {
          ctx.addIssue({
            code: "custom",
            path: [i],
            message: `opens at ${open}, not before it closes at ${close}`,
            params: { code: "invalid_interval" },
          });
        }
      });
      const sorted = [...intervals].sort((a, b) => minutesOf(a[0]) - minutesOf(b[0]));
      for (let i = 1; i < sorted.length; i++) {
        const [prev, next] = [sorted[i - 1]!, sorted[i]!];
        if (minutesOf(next[0]) < minutesOf(prev[1])) {
          ctx.addIssue({
            code: "custom",
            path: [],
            message: `${prev.join("–")} overlaps ${next.join("–")}`,
            params: { code: "overlapping_intervals" },
          });
        }
      }
    })
    .transform((intervals) => [...intervals].sort((a, b) => minutesOf(a[0]) - minutesOf(b[0])) as Interval[]),
);

type DayHours = ReturnType<typeof dayHours>;

/**
 * A `schedule set` document: every member optional (a missing one takes its
 * default, a missing day of weeklyHours is closed), unknown members refused.
 */
export const scheduleDocument = once(() =>
  z.strictObject({
    timeZone: z
      .string()
      .refine(isTimeZone, { message: "must be an IANA time zone such as America/New_York" })
      .optional(),
    slotMinutes: z.number().int().min(5).max(1440).optional(),
    capacity: z.number().int().min(1).max(1000).optional(),
    // At most a year: it keeps instants well inside Date's range.
    minNoticeMinutes: z.number().int().min(0).max(525_600).optional(),
    horizonDays: z.number().int().min(1).max(365).optional(),
    weeklyHours: z
      .strictObject(
        Object.fromEntries(WEEKDAYS.map((day) => [day, dayHours().optional()])) as Record<
          Weekday,
          z.ZodOptional<DayHours>
        >,
      )
      .optional(),
    closedDates: z
      .array(z.string().refine(isPlainDate, { message: "must be a date YYYY-MM-DD" }))
      .max(1000)
      .optional(),
  }),
);

export type ScheduleDocument = z.output<ReturnType<typeof scheduleDocument>>;

export function resolveDocument(document: ScheduleDocument, currentTimeZone: string): Schedule {
  const weeklyHours = document.weeklyHours
    ? (Object.fromEntries(WEEKDAYS.map((day) => [day, document.weeklyHours?.[day] ?? []])) as Record<
        Weekday,
        Interval[]
      >)
    : DEFAULT_SCHEDULE.weeklyHours;
  return {
    timeZone: document.timeZone ?? currentTimeZone,
    slotMinutes: document.slotMinutes ?? DEFAULT_SCHEDULE.slotMinutes,
    capacity: document.capacity ?? DEFAULT_SCHEDULE.capacity,
    minNoticeMinutes: document.minNoticeMinutes ?? DEFAULT_SCHEDULE.minNoticeMinutes,
    horizonDays: document.horizonDays ?? DEFAULT_SCHEDULE.horizonDays,
    weeklyHours,
    closedDates: [...new Set(document.closedDates ?? [])].sort(),
  };
}
