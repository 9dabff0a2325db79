// `schedule set` / `schedule show` (contract 6): the file is validated whole
// before anything is written; the update is one statement.
import { readFile } from "node:fs/promises";
import { eq, sql } from "drizzle-orm";
import type { z } from "zod";
import { orgs } from "../../drizzle/schema";
import type { Db } from "../db/client";
import { toFieldErrors } from "../http/validate";
import { resolveDocument, type Schedule, scheduleDocument, scheduleOf } from "../scheduling/schedule";
import { CliError } from "./errors";

export async function showSchedule(db: Db, orgId: string): Promise<Schedule> {
  const [org] = await db
    .select({ timeZone: orgs.timeZone, schedule: orgs.schedule })
    .from(orgs)
    .where(eq(orgs.id, orgId));
  if (!org) throw new CliError(`unknown org: ${orgId}`);
  return scheduleOf(org.timeZone, org.schedule);
}

export async function setSchedule(db: Db, orgId: string, file: string): Promise<Schedule> {
  return storeSchedule(db, orgId, parseScheduleFile(await readText(file), file));
}

/** Stores a validated document; members it leaves out take their defaults, except the zone, which is kept. */
export async function storeSchedule(
  db: Db,
  orgId: string,
  document: z.output<typeof scheduleDocument>,
): Promise<Schedule> {
  const { timeZone: _ignored, ...stored } = resolveDocument(document, "UTC");
  const [org] = await db
    .update(orgs)
    .set({
      ...(document.timeZone ? { timeZone: document.timeZone } : {}),
      schedule: stored,
      // Only grows: bookings made under a longer slot length still count.
      maxSlotMinutes: sql`max(${orgs.maxSlotMinutes}, ${stored.slotMinutes})`,
    })
    .where(eq(orgs.id, orgId))
    .returning({ timeZone: orgs.timeZone });
  if (!org) throw new CliError(`unknown org: ${orgId}`);
  return scheduleOf(org.timeZone, stored);
}

export function parseScheduleFile(text: string, file: string) {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new CliError(`${file} is not valid JSON`);
  }
  if (typeof json !== "object" || json === null || Array.isArray(json))
    throw new CliError(`${file} must hold one schedule object`);
  const result = scheduleDocument.safeParse(json);
  if (!result.success) {
    const problems = toFieldErrors(result.error.issues, json, Object.keys(scheduleDocument.shape)).map(
      (e) => `${e.path || "(schedule)"}: ${e.message}`,
    );
    throw new CliError(`${file}: invalid schedule, nothing stored:\n  ${problems.join("\n  ")}`);
  }
  return result.data;
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? "error"}`);
  }
}
