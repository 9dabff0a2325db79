// When a visit or a hold takes a place from a span (docs/api.md, "Holding a
// slot"): it occupies its technician or a crew from its start to the end of
// its buffer, and takes the place if that shares an instant with the span.
// The scans count it in JavaScript (visits.ts) and the statements in SQL
// (src/db/occupancy.ts, overlapping), so the condition is written here twice,
// side by side: test/integration/scheduling/overlap.property.test.ts holds
// the two forms equal.
import type { AnyColumn, Placeholder, SQL } from "drizzle-orm";
import { sql } from "drizzle-orm";
import type { SlotTimes } from "./slots";

/** What a visit or hold occupies: [startsAt, endsAt), its end the end of its buffer. */
export interface Occupied {
  startsAt: number;
  endsAt: number;
}

/** Whether `occupied` shares an instant with [span.start, span.end). */
export const overlaps = (occupied: Occupied, span: SlotTimes): boolean =>
  occupied.startsAt < span.end && occupied.endsAt > span.start;

/**
 * The union of `spans` as the fewest spans, by start: spans that overlap or
 * touch become one, so that each instant is read once. A visit or a hold
 * (at least 5 minutes long) occupies some instant of the union exactly when
 * it occupies some instant of one of the spans.
 */
export function unionOf(spans: SlotTimes[]): SlotTimes[] {
  const union: SlotTimes[] = [];
  for (const span of [...spans].sort((a, b) => a.start - b.start)) {
    const last = union.at(-1);
    if (last && span.start <= last.end) last.end = Math.max(last.end, span.end);
    else union.push({ start: span.start, end: span.end });
  }
  return union;
}

/** An instant of a statement: a time, a column or expression, or a prepared statement's placeholder. */
export type Bound = number | AnyColumn | SQL | Placeholder;

/**
 * overlaps, in SQL, of a row's columns (a visit's or a hold's: their occupied
 * end is `occupiedUntil`): its two conditions, to go into an and().
 */
export const overlapsSql = (
  occupied: { startsAt: Bound; occupiedUntil: Bound },
  span: { start: Bound; end: Bound },
): [SQL, SQL] => [sql`${occupied.startsAt} < ${span.end}`, sql`${occupied.occupiedUntil} > ${span.start}`];
