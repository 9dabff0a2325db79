// Who may take a visit (docs/api.md, "Services and technicians"): a
// technician qualified for it (every skill it needs), covering its postal
// code, and not off on its local date. The booking decides in JavaScript who
// the candidates are (visits.ts: fleetFor, dutyRoster), and its statement
// decides again in SQL, on the rows as they are then (src/db/placement.ts,
// assignee), so each rule is written here twice, side by side:
// test/integration/scheduling/eligibility.property.test.ts holds the two
// forms equal. The SQL forms name no table: they read the columns given.
import type { AnyColumn, Placeholder, SQL } from "drizzle-orm";
import { sql } from "drizzle-orm";
import type { Technician } from "./visits";

/** A value of a statement: JSON or plain text, or a prepared statement's placeholder. */
type Text = string | Placeholder | SQL;

/** A technician's columns as the SQL forms read them: JSON arrays of text. */
export interface TechnicianColumns {
  skills: AnyColumn | SQL;
  postalCodes: AnyColumn | SQL;
  daysOff: AnyColumn | SQL;
}

/** Whether the technician has every one of `skills`. */
export const qualified = (technician: Pick<Technician, "skills">, skills: string[]): boolean =>
  skills.every((s) => technician.skills.includes(s));

/** qualified, in SQL: `skills` is a JSON array. */
export const qualifiedSql = (technician: TechnicianColumns, skills: Text): SQL =>
  sql`NOT EXISTS (SELECT 1 FROM json_each(${skills}) AS k WHERE k.value NOT IN (SELECT value FROM json_each(${technician.skills})))`;

/**
 * Whether the technician works at `postalCode` (normalised; null: none
 * given, so anywhere): they have no prefixes (everywhere), or one the code
 * starts with.
 */
export const covers = (technician: Pick<Technician, "postalCodes">, postalCode: string | null): boolean =>
  postalCode === null ||
  technician.postalCodes.length === 0 ||
  technician.postalCodes.some((prefix) => postalCode.startsWith(prefix));

/** covers, in SQL; no condition at all when no postal code is given (null here, or NULL in SQL). */
export const coversSql = (technician: TechnicianColumns, postalCode: Text | null): SQL | undefined =>
  postalCode === null
    ? undefined
    : sql`(${postalCode} IS NULL OR json_array_length(${technician.postalCodes}) = 0 OR EXISTS (SELECT 1 FROM json_each(${technician.postalCodes}) AS z WHERE substr(${postalCode}, 1, length(z.value)) = z.value))`;

/** Whether `date` (a local YYYY-MM-DD) is a day off of the technician's. */
export const offOn = (technician: Pick<Technician, "daysOff">, date: string): boolean =>
  technician.daysOff.includes(date);

/** offOn, in SQL. */
export const offOnSql = (technician: TechnicianColumns, date: Text): SQL =>
  sql`EXISTS (SELECT 1 FROM json_each(${technician.daysOff}) AS d WHERE d.value = ${date})`;
