import { KEY_ROLES, type KeyRole } from "../../drizzle/schema";
import { CliError } from "./errors";

/** The --role flag: one of the key roles (docs/api.md, "Key roles"), else `fallback` when absent. */
export function keyRole(flag: unknown, fallback: KeyRole): KeyRole {
  if (flag === undefined) return fallback;
  if (typeof flag !== "string" || !(KEY_ROLES as readonly string[]).includes(flag))
    throw new CliError(`--role must be one of ${KEY_ROLES.join(", ")} (got ${String(flag)})`);
  return flag as KeyRole;
}
