// The operator's files: read and validated whole before anything is written.
import { readFile } from "node:fs/promises";
import { toFieldErrors } from "../http/validate";
import { parseCsv } from "../lib/csv";
import { type ScheduleDocument, scheduleDocument } from "../scheduling/schedule";
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
  if (problems.length > 0) {
    const shown = problems.slice(0, MAX_REPORTED_ERRORS).join("\n  ");
    const more = problems.length > MAX_REPORTED_ERRORS ? `\n  … and ${problems.length - MAX_REPORTED_ERRORS} more` : "";
    throw new CliError(`${file}: ${problems.length} problem(s), nothing imported:\n  ${shown}${more}`);
  }
  return valid;
}
function jsonRecords(text: string): unknown[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CliError("the file is not valid JSON");
  }
  if (!Array.isArray(parsed)) throw new CliError("a .json file must hold an array of account objects");
  return parsed;
}

function csvRecords(text: string): Record<string, unknown>[] {
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
        // A numeric accountType becomes a number, so "1.5" is reported as "must be an integer".
        record[name] = name === "accountType" && /^[+-]?\d+(\.\d+)?$/.test(cell.trim()) ? Number(cell) : cell;
      });
      return record;
    });
}
