// `service …` and `technician …` commands of the admin CLI (docs/operations.md,
// "Services and technicians"): flags are checked here, with the same field
// rules as a technicians file (./files), then src/db/services.ts or
// src/db/technicians.ts writes; their refusals become CliErrors that say what
// to do.
import type * as z from "zod/v4";
import {
  addService,
  listServices,
  MAX_SERVICES,
  type ServiceChanges,
  type ServiceWrite,
  updateService,
} from "../db/services";
import {
  addTechnician,
  importTechnicians,
  listTechnicians,
  type TechnicianChanges,
  type TechnicianUpdate,
  updateTechnician,
} from "../db/technicians";
import { once } from "../lib/once";
import type { ServiceOut } from "../schemas/services";
import { CliError } from "./errors";
import {
  daysOffField,
  nameField,
  parseTechniciansFile,
  parseWeeklyHoursFile,
  postalCodesField,
  problemLines,
  skillsField,
} from "./files";
import { type Command, type Flags, required } from "./webhooks";

const unknownOrg = (orgId: string) => `unknown org: ${orgId}`;

/** `value` checked by `schema`, or a CliError naming the flag and every problem. */
function checked<T>(flag: string, schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new CliError(`--${flag}: ${problemLines(result.error.issues, value).join("; ")}`);
  return result.data;
}

/**
 * A comma-separated list flag, checked; undefined when the flag is absent.
 * Empty items are dropped, so `--skills ""` clears the list.
 */
function listFlag<T>(flags: Flags, flag: string, schema: z.ZodType<T>): T | undefined {
  const value = flags[flag];
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw new CliError(`--${flag} needs a value`);
  const items = value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
  return checked(flag, schema, items);
}

/** A whole number of minutes from `min` to `max`, a multiple of `step`; undefined when the flag is absent. */
function minutesFlag(flags: Flags, flag: string, min: number, max: number, step = 1): number | undefined {
  const value = flags[flag];
  if (value === undefined) return undefined;
  const minutes = typeof value === "string" && /^\s*\d{1,5}\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!(minutes >= min && minutes <= max && minutes % step === 0))
    throw new CliError(
      `--${flag} must be ${step > 1 ? `a multiple of ${step}` : "a whole number"} from ${min} to ${max} (minutes)`,
    );
  return minutes;
}

function activeFlag(flags: Flags): boolean | undefined {
  const value = flags.active;
  if (value === undefined) return undefined;
  if (value !== "true" && value !== "false") throw new CliError("--active must be true or false");
  return value === "true";
}

const nameFlag = (flags: Flags) => (flags.name === undefined ? undefined : checked("name", nameField(), flags.name));

/** What a caller may say for a service: at most 50, each trimmed, 1 to 200 characters; a repeat is dropped. */
const keywordsField = once(() =>
  nameField()
    .array()
    .max(50, "at most 50 keywords")
    .transform((words) => [...new Set(words)]),
);

/** The service fields given as flags; --default only sets the mark (another service's --default takes it). */
const serviceChanges = (flags: Flags): ServiceChanges =>
  withoutAbsent({
    name: nameFlag(flags),
    durationMinutes: minutesFlag(flags, "duration", 5, 1440, 5),
    bufferMinutes: minutesFlag(flags, "buffer", 0, 240),
    arrivalWindowMinutes: minutesFlag(flags, "window", 0, 480),
    skills: listFlag(flags, "skills", skillsField()),
    keywords: listFlag(flags, "keywords", keywordsField()),
    isDefault: flags.default === true ? true : undefined,
    active: activeFlag(flags),
  });

async function technicianChanges(flags: Flags): Promise<TechnicianChanges> {
  const hoursFile = flags["hours-file"] === undefined ? undefined : required(flags, "hours-file");
  return withoutAbsent({
    name: nameFlag(flags),
    skills: listFlag(flags, "skills", skillsField()),
    postalCodes: listFlag(flags, "postal-codes", postalCodesField()),
    weeklyHours: hoursFile === undefined ? undefined : await parseWeeklyHoursFile(hoursFile),
    daysOff: listFlag(flags, "days-off", daysOffField()),
    active: activeFlag(flags),
  });
}

/** The object without its undefined members: what an update leaves as it is. */
const withoutAbsent = <T extends object>(value: T): T =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;

/** Flags of an update only: on an add they would be ignored, which would surprise. */
function refuseUpdateFlags(flags: Flags, command: string) {
  for (const flag of ["id", "active", "reassign"])
    if (flags[flag] !== undefined) throw new CliError(`--${flag} is for \`${command} update\` only`);
}

/** The service written, or the CliError of the refusal (`asked`: the service's id and name as the flags give them). */
function serviceOut(orgId: string, result: ServiceWrite | null, asked: { id?: string; name?: string }): ServiceOut {
  if (result === null) throw new CliError(unknownOrg(orgId));
  if ("service" in result) return result.service;
  switch (result.refused) {
    case "unknown_service":
      throw new CliError(`org ${orgId} has no service ${asked.id}`);
    case "name_taken":
      throw new CliError(
        `org ${orgId} already has a service named "${asked.name}"${result.by ? ` (${result.by})` : ""}; names are unique, whatever their case`,
      );
    case "too_many":
      throw new CliError(
        `org ${orgId} already has ${MAX_SERVICES} services (the most allowed); change one with \`service update\` instead`,
      );
    case "inactive_default":
      throw new CliError(
        `service ${asked.id} is inactive, and an inactive service cannot be the default (add --active true)`,
      );
  }
}

function technicianUpdated(orgId: string, technicianId: string, result: TechnicianUpdate | null) {
  if (result === null) throw new CliError(unknownOrg(orgId));
  if ("technician" in result) return result;
  switch (result.refused) {
    case "unknown_technician":
      throw new CliError(`org ${orgId} has no technician ${technicianId}`);
    case "stranded":
      throw new CliError(
        `technician ${technicianId} has future visits this change would leave without a technician: ${result.incidentIds.join(", ")}; nothing changed (add --reassign to move them to other technicians)`,
      );
    case "unplaced":
      throw new CliError(
        `no other technician is eligible, on duty and free for these visits of ${technicianId}: ${result.incidentIds.join(", ")}; nothing changed`,
      );
    case "changed":
      throw new CliError("the schedule changed while reassigning; nothing changed, run it again");
  }
}

export const CATALOGUE_COMMANDS: Record<string, Command> = {
  "service add": async (db, f) => {
    refuseUpdateFlags(f, "service");
    const orgId = required(f, "org");
    const given = serviceChanges({ ...f, name: required(f, "name"), duration: required(f, "duration") });
    const fields = {
      name: given.name!,
      durationMinutes: given.durationMinutes!,
      bufferMinutes: given.bufferMinutes ?? 0,
      arrivalWindowMinutes: given.arrivalWindowMinutes ?? 0,
      skills: given.skills ?? [],
      keywords: given.keywords ?? [],
      isDefault: given.isDefault ?? false,
    };
    return serviceOut(orgId, await addService(db, orgId, fields), fields);
  },
  "service update": async (db, f) => {
    if (f.reassign !== undefined) throw new CliError("--reassign is for `technician update` only");
    const orgId = required(f, "org");
    const id = required(f, "id");
    const changes = serviceChanges(f);
    return serviceOut(orgId, await updateService(db, orgId, id, changes), { id, name: changes.name });
  },
  "service list": async (db, f) => {
    const orgId = required(f, "org");
    const listed = await listServices(db, orgId);
    if (listed === null) throw new CliError(unknownOrg(orgId));
    return { services: listed };
  },
  "technician add": async (db, f) => {
    refuseUpdateFlags(f, "technician");
    const orgId = required(f, "org");
    const given = await technicianChanges({ ...f, name: required(f, "name") });
    const fields = {
      name: given.name!,
      skills: given.skills ?? [],
      postalCodes: given.postalCodes ?? [],
      weeklyHours: given.weeklyHours ?? null,
      daysOff: given.daysOff ?? [],
      active: true,
    };
    const added = await addTechnician(db, orgId, fields);
    if (added === null) throw new CliError(unknownOrg(orgId));
    return added;
  },
  "technician update": async (db, f) => {
    const orgId = required(f, "org");
    const id = required(f, "id");
    const changes = await technicianChanges(f);
    const result = await updateTechnician(db, orgId, id, changes, { reassign: f.reassign === true });
    return technicianUpdated(orgId, id, result);
  },
  "technician list": async (db, f) => {
    const orgId = required(f, "org");
    const listed = await listTechnicians(db, orgId);
    if (listed === null) throw new CliError(unknownOrg(orgId));
    return { technicians: listed };
  },
  "technician import": async (db, f) => {
    const orgId = required(f, "org");
    const records = await parseTechniciansFile(required(f, "file"));
    const imported = await importTechnicians(db, orgId, records);
    if (imported === null) throw new CliError(unknownOrg(orgId));
    return imported;
  },
};
