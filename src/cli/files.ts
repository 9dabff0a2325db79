// The operator's files: read and validated whole before anything is written.
import { readFile } from "node:fs/promises";
import * as z from "zod/v4";
import { toFieldErrors } from "../http/validate";
import { parseCsv } from "../lib/csv";
import { once } from "../lib/once";
import { type ScheduleDocument, scheduleDocument, WEEKDAYS, type WeeklyHours } from "../scheduling/schedule";
import { normalisePostalCode } from "../scheduling/visits";
import { importAccount, type NewAccount } from "../schemas/accounts";
import { CliError } from "./errors";

const MAX_REPORTED_ERRORS = 20;

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? "error"}`);
  }
}

/** A `schedule set` document (docs/api.md, "The schedule"), or a CliError listing every problem. */
export async function parseScheduleFile(file: string): Promise<ScheduleDocument> {
  const text = await readText(file);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new CliError(`${file} is not valid JSON`);
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new CliError(`${file} must hold one schedule object`);
  }
  const result = scheduleDocument().safeParse(json);
  if (!result.success) {
    const problems = toFieldErrors(result.error.issues, json, Object.keys(scheduleDocument().shape)).map(
      (e) => `${e.path || "(schedule)"}: ${e.message}`,
    );
    throw new CliError(`${file}: invalid schedule, nothing stored:\n  ${problems.join("\n  ")}`);
  }
  return result.data;
}

/** The refusal of an import with bad records: the first problems, and how many more. */
function nothingImported(file: string, problems: string[]): CliError {
  const shown = problems.slice(0, MAX_REPORTED_ERRORS).join("\n  ");
  const more = problems.length > MAX_REPORTED_ERRORS ? `\n  … and ${problems.length - MAX_REPORTED_ERRORS} more` : "";
  return new CliError(`${file}: ${problems.length} problem(s), nothing imported:\n  ${shown}${more}`);
}

export async function parseAccountsFile(file: string): Promise<NewAccount[]> {
  return parseAccounts(await readText(file), file);
}

/** Validated accounts of a .json or .csv file, or a CliError listing the bad rows. */
export function parseAccounts(text: string, file: string): NewAccount[] {
  const records = file.toLowerCase().endsWith(".csv") ? csvRecords(text) : jsonRecords(text);
  const problems: string[] = [];
  const valid: NewAccount[] = [];
  records.forEach((record, i) => {
    const result = importAccount().safeParse(record);
    if (result.success) valid.push(result.data);
    else
      for (const e of toFieldErrors(result.error.issues, record, Object.keys(importAccount().shape)))
        problems.push(`record ${i + 1}: ${e.path || "(record)"}: ${e.message}`);
  });
  if (problems.length > 0) throw nothingImported(file, problems);
  return valid;
}
function jsonRecords(text: string, what = "account"): unknown[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CliError("the file is not valid JSON");
  }
  if (!Array.isArray(parsed)) throw new CliError(`a .json file must hold an array of ${what} objects`);
  return parsed;
}

/** An accounts cell: a numeric accountType becomes a number, so "1.5" is reported as "must be an integer". */
const accountCell = (name: string, cell: string): unknown =>
  name === "accountType" && /^[+-]?\d+(\.\d+)?$/.test(cell.trim()) ? Number(cell) : cell;

function csvRecords(
  text: string,
  cellValue: (name: string, cell: string) => unknown = accountCell,
): Record<string, unknown>[] {
  let rows: string[][];
  try {
    rows = parseCsv(text);
  } catch (error) {
    throw new CliError(`the file is not valid CSV: ${(error as Error).message}`);
  }
  const [header, ...body] = rows;
  if (!header) throw new CliError("a .csv file needs a header row");
  const names = header.map((h) => h.trim());
  return body
    .filter((cells) => cells.some((cell) => cell !== ""))
    .map((cells, i) => {
      if (cells.length !== names.length)
        throw new CliError(`CSV row ${i + 2} has ${cells.length} cells, the header ${names.length}`);
      const record: Record<string, unknown> = {};
      names.forEach((name, j) => {
        const cell = cells[j] ?? "";
        if (cell === "") return; // an empty cell is an absent field
        record[name] = cellValue(name, cell);
      });
      return record;
    });
}

// Technicians (docs/api.md, "Technicians"): the fields of a technicians file,
// which the flags of `technician add|update` are checked with too.

const unique = <T>(list: T[]): T[] => [...new Set(list)];

const text = (what: string) =>
  z.string({ error: (issue) => (issue.input === undefined ? "is required" : `must be ${what}`) });

/** A name of 1 to 200 characters, trimmed. */
export const nameField = once(() =>
  text("a string").trim().min(1, "must not be empty").max(200, "must be at most 200 characters"),
);

/** What a technician has and a service needs: at most 10, lower-case; a repeat is dropped. */
export const skillsField = once(() =>
  z
    .array(text("a string").regex(/^[a-z0-9-]{1,50}$/, 'must be 1 to 50 characters of a-z, 0-9 and "-"'), {
      error: "must be a list",
    })
    .max(10, "at most 10 skills")
    .transform(unique),
);

/** Prefixes of the postal codes served, stored as they are compared: no spaces or "-", upper case. */
export const postalCodesField = once(() =>
  z
    .array(
      text("a string")
        .transform(normalisePostalCode)
        .pipe(z.string().regex(/^[A-Z0-9]{1,12}$/, 'must be 1 to 12 letters and digits (spaces and "-" are ignored)')),
      { error: "must be a list" },
    )
    .transform(unique),
);

/** Local dates off (YYYY-MM-DD, checked as the schedule's closedDates are), at most 366, sorted. */
export const daysOffField = once(() =>
  z
    .array(scheduleDocument().shape.closedDates.unwrap().element, { error: "must be a list" })
    .max(366, "at most 366 days off")
    .transform((dates) => unique(dates).sort()),
);

/** A schedule's weeklyHours object (docs/api.md, "The schedule"); a day left out is closed. */
export const weeklyHoursField = once(() =>
  scheduleDocument()
    .shape.weeklyHours.unwrap()
    .transform((hours) => Object.fromEntries(WEEKDAYS.map((day) => [day, hours[day] ?? []])) as WeeklyHours),
);

/** One record of a technicians file: what is left out takes the defaults of `technician add`. */
export const technicianRecord = once(() =>
  z.strictObject({
    name: nameField(),
    skills: skillsField().default([]),
    postalCodes: postalCodesField().default([]),
    // In CSV the cell holds the object's JSON; a cell that is not JSON stays a string.
    weeklyHours: z
      .custom((value) => typeof value !== "string", "must be a weeklyHours object (in CSV, its JSON)")
      .pipe(weeklyHoursField())
      .nullable()
      .default(null),
    daysOff: daysOffField().default([]),
    active: z.boolean({ error: "must be true or false" }).default(true),
  }),
);

export type NewTechnician = z.output<ReturnType<typeof technicianRecord>>;

/** A value at `path` of `input`, for showing the item a problem is about. */
function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path)
    value = value !== null && typeof value === "object" ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  return value;
}

/**
 * One line per problem: where (the field path without list positions, then
 * the item as given when it is a list item) and what is wrong with it.
 */
export function problemLines(issues: readonly z.core.$ZodIssue[], input: unknown): string[] {
  return issues.flatMap((issue) => {
    const where = issue.path.filter((key) => typeof key !== "number").join(".");
    const prefix = where === "" ? "" : `${where}: `;
    if (issue.code === "unrecognized_keys") return issue.keys.map((key) => `${prefix}unknown field "${key}"`);
    const value = valueAt(input, issue.path);
    const item = typeof issue.path.at(-1) === "number" && typeof value === "string" ? `"${value}" ` : "";
    return [`${prefix}${item}${issue.message}`];
  });
}

/** Reads `file` as JSON, or a CliError saying it is not. */
async function readJson(file: string): Promise<unknown> {
  const text = await readText(file);
  try {
    return JSON.parse(text);
  } catch {
    throw new CliError(`${file} is not valid JSON`);
  }
}

/** `--hours-file`: a bare weeklyHours object, or null for the org's hours; a CliError listing every problem. */
export async function parseWeeklyHoursFile(file: string): Promise<WeeklyHours | null> {
  const json = await readJson(file);
  if (json === null) return null;
  if (typeof json !== "object" || Array.isArray(json))
    throw new CliError(`${file} must hold one weeklyHours object such as {"mon": [["08:00", "17:00"]]}, or null`);
  const result = weeklyHoursField().safeParse(json);
  if (!result.success)
    throw new CliError(
      `${file}: invalid weeklyHours, nothing stored:\n  ${problemLines(result.error.issues, json).join("\n  ")}`,
    );
  return result.data;
}

export async function parseTechniciansFile(file: string): Promise<NewTechnician[]> {
  return parseTechnicians(await readText(file), file);
}

const LIST_COLUMNS = ["skills", "postalCodes", "daysOff"];

/** A technicians CSV cell: a list separates its values with ";", weeklyHours is JSON, active true or false. */
function technicianCell(name: string, cell: string): unknown {
  if (LIST_COLUMNS.includes(name))
    return cell
      .split(";")
      .map((item) => item.trim())
      .filter((item) => item !== "");
  if (name === "weeklyHours") {
    try {
      return JSON.parse(cell);
    } catch {
      return cell;
    }
  }
  if (name === "active" && /^\s*(true|false)\s*$/.test(cell)) return cell.trim() === "true";
  return cell;
}

/** Validated technicians of a .json or .csv file, or a CliError naming every bad record: all or nothing. */
export function parseTechnicians(text: string, file: string): NewTechnician[] {
  const records = file.toLowerCase().endsWith(".csv")
    ? csvRecords(text, technicianCell)
    : jsonRecords(text, "technician");
  const problems: string[] = [];
  const valid: NewTechnician[] = [];
  records.forEach((record, i) => {
    const result = technicianRecord().safeParse(record);
    if (result.success) valid.push(result.data);
    else {
      const name = (record as { name?: unknown } | null)?.name;
      const which = `record ${i + 1}${typeof name === "string" && name.trim() !== "" ? ` (${name.trim()})` : ""}`;
      for (const line of problemLines(result.error.issues, record)) problems.push(`${which}: ${line}`);
    }
  });
  if (problems.length > 0) throw nothingImported(file, problems);
  return valid;
}
