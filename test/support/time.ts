// Instants the tests pick, relative to the real clock so that expectations hold
// whatever the day and hour of the run. Pure: usable in workerd, Node and unit tests.

export const MINUTE = 60_000;
export const HOUR = 3_600_000;
export const DAY = 86_400_000;

export const iso = (t: number) => new Date(t).toISOString();

/** 00:00 UTC of the day of `now`. */
export const today = (now = Date.now()) => Math.floor(now / DAY) * DAY;

/** `hour`:00 UTC, `days` days after today (ms). */
export const daysAhead = (days: number, hour: number, now = Date.now()) => today(now) + days * DAY + hour * HOUR;

/**
 * `hour`:00 UTC, `days` days after today, as ISO: by default 15:00 the day
 * after tomorrow, a whole hour open in an around-the-clock schedule and far
 * from notice and horizon edges.
 */
export const slotAt = (days = 2, hour = 15, now = Date.now()) => iso(daysAhead(days, hour, now));

/** The start of the hour `hours` after the next full hour from `now` (ms). */
export const hoursAhead = (hours: number, now = Date.now()) => Math.ceil(now / HOUR) * HOUR + hours * HOUR;

/** The same as ISO: a slot of an around-the-clock hourly schedule. */
export const slotIn = (hours: number, now = Date.now()) => iso(hoursAhead(hours, now));
