// Instants written as the API writes them (src/lib/datetime.ts toIso,
// src/scheduling/zone.ts localIso), in SQL: for a JSON answer that only the
// batch can build, because only the batch has read the row (a change in one
// round trip, src/db/incident-changes.ts). The zone comes as offsetsJson's
// table; test/integration/db/local-times.test.ts holds both to the JavaScript.
import { type AnyColumn, type SQL, sql } from "drizzle-orm";
import { DAY, MINUTE } from "../lib/datetime";
import type { Schedule } from "../scheduling/schedule";
import { offsetsJson } from "../scheduling/zone";

/** "2026-11-23T14:00:00.000Z" of an integer instant (ms); NULL of NULL. */
export const isoSql = (expression: SQL): SQL => {
  const instant = sql`(${expression})`;
  return sql`(strftime('%Y-%m-%dT%H:%M:%S', ${instant} / 1000, 'unixepoch') || printf('.%03dZ', ${instant} % 1000))`;
};

/**
 * "2026-11-23T09:00:00-05:00" of an integer instant at or after the first
 * row of `offsets` (offsetsJson's JSON): the offset of the last row that
 * starts by then.
 */
export const localIsoSql = (expression: SQL, offsets: SQL): SQL => {
  const instant = sql`(${expression})`;
  return sql`(SELECT strftime('%Y-%m-%dT%H:%M:%S', (${instant} + json_extract(o.value, '$[1]')) / 1000, 'unixepoch') || json_extract(o.value, '$[2]')
    FROM json_each(${offsets}) AS o WHERE json_extract(o.value, '$[0]') <= ${instant} ORDER BY o.key DESC LIMIT 1)`;
};

/** The end of a visit's arrival window: its start plus its window's minutes (arrivalWindowView's end). */
export const windowEndSql = (start: SQL | AnyColumn, minutes: SQL | AnyColumn): SQL =>
  sql`${start} + ${minutes} * ${sql.raw(String(MINUTE))}`;

/** timesView's object ({start, end, localStart, localEnd}) as JSON. */
export const timesSql = (start: SQL, end: SQL, offsets: SQL): SQL =>
  sql`json_object('start', ${isoSql(start)}, 'end', ${isoSql(end)}, 'localStart', ${localIsoSql(start, offsets)}, 'localEnd', ${localIsoSql(end, offsets)})`;

/** The zone's table for a change in one trip: from `back` days before today to 2 days past the horizon. */
export function zoneTable(schedule: Pick<Schedule, "timeZone" | "horizonDays">, now: number, back: number) {
  const today = Math.floor(now / DAY);
  const [from, until] = [today - back, today + schedule.horizonDays + 2];
  return { json: offsetsJson(from, until, schedule.timeZone), from: from * DAY, until: until * DAY };
}
