// The commands of the admin CLI (docs/operations.md, "The admin CLI"): each checks the operator's
// input, calls src/db, and turns a null (no such org or key) into a CliError.
import { insertAccounts } from "../db/accounts";
import { createKey, listKeys, revokeKey } from "../db/api-keys";
import type { Db } from "../db/client";
import { seedDemo } from "../db/demo";
import { createOrg, getSchedule, orgExists, setCountry, storeSchedule } from "../db/orgs";
import { backfillPhones } from "../db/phones";
import { findOutOfRangeDates, repairOutOfRangeDates } from "../db/repair";
import { isPhoneCountry } from "../lib/phones";
import { isTimeZone } from "../scheduling/schedule";
import { CATALOGUE_COMMANDS } from "./catalogue";
import { CliError } from "./errors";
import { parseAccountsFile, parseScheduleFile } from "./files";
import { keyRole } from "./roles";
import { type Command, type Flags, required, WEBHOOK_COMMANDS } from "./webhooks";

export type { CliEnv, Flags } from "./webhooks";

/** `value`, or the CLI's error when the database found nothing. */
function found<T>(value: T | null, message: string): T {
  if (value === null) throw new CliError(message);
  return value;
}

const unknownOrg = (flags: Flags) => `unknown org: ${required(flags, "org")}`;

/** The one time-zone check of the CLI (org create), the same one `schedule set` applies. */
export function checkTimeZone(timeZone: string): string {
  if (!isTimeZone(timeZone)) throw new CliError(`unknown IANA time zone: ${timeZone}`);
  return timeZone;
}

/** An ISO 3166-1 alpha-2 country the phone library supports, upper-cased ("gb" is GB). */
export function checkCountry(code: string): string {
  const country = code.trim().toUpperCase();
  if (!isPhoneCountry(country))
    throw new CliError(`unknown or unsupported country: ${code} (an ISO 3166-1 alpha-2 code such as US)`);
  return country;
}

/** `--org ORG` when given (it must exist), else undefined: every org. */
async function orgOrEvery(db: Db, flags: Flags): Promise<string | undefined> {
  if (flags.org === undefined) return undefined;
  const org = required(flags, "org");
  if (!(await orgExists(db, org))) throw new CliError(unknownOrg(flags));
  return org;
}

function orgName(flags: Flags): string {
  const name = required(flags, "name");
  if (name.length > 200) throw new CliError("--name must be 1 to 200 characters");
  return name;
}

export const COMMANDS: Record<string, Command> = {
  "org create": (db, f) => {
    const timeZone = checkTimeZone(typeof f["time-zone"] === "string" ? f["time-zone"] : "UTC");
    const country = checkCountry(typeof f.country === "string" ? f.country : "US");
    return createOrg(db, { name: orgName(f), timeZone, country });
  },
  "org update": async (db, f) => {
    const country = checkCountry(required(f, "country"));
    return found(await setCountry(db, required(f, "org"), country), unknownOrg(f));
  },
  "key create": async (db, f) =>
    found(await createKey(db, required(f, "org"), keyRole(f.role, "office")), unknownOrg(f)),
  "key revoke": async (db, f) =>
    found(
      await revokeKey(db, required(f, "org"), required(f, "key")),
      `org ${required(f, "org")} has no key ${required(f, "key")}`,
    ),
  "key list": async (db, f) => found(await listKeys(db, required(f, "org")), unknownOrg(f)),
  "accounts import": async (db, f) => {
    const rows = await parseAccountsFile(required(f, "file"));
    return found(await insertAccounts(db, required(f, "org"), rows), unknownOrg(f));
  },
  "schedule set": async (db, f) => {
    const document = await parseScheduleFile(required(f, "file"));
    return found(await storeSchedule(db, required(f, "org"), document), unknownOrg(f));
  },
  "schedule show": async (db, f) => found(await getSchedule(db, required(f, "org")), unknownOrg(f)),
  "phones backfill": async (db, f) => backfillPhones(db, await orgOrEvery(db, f)),
  "dates check": async (db, f) => ({ findings: await findOutOfRangeDates(db, await orgOrEvery(db, f)) }),
  "dates repair": async (db, f) => repairOutOfRangeDates(db, await orgOrEvery(db, f)),
  ...WEBHOOK_COMMANDS,
  ...CATALOGUE_COMMANDS,
  "demo seed": (db) => seedDemo(db),
};
