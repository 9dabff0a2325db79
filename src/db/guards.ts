// Guards: a check a batch makes at its end, where the condition of one
// statement cannot see what the others of the batch did (every conditional
// update of a run applied; no overlap they made; a limit a racing write went
// past). Inserting into `guards` (migration 0011) raises "guard failed:
// <name>", which aborts the batch, and a D1 batch is one transaction: nothing
// it wrote stays, and no row of `guards` is ever kept.
import type { SQL } from "drizzle-orm";
import { guards } from "../../drizzle/schema";
import { type Db, errorText, insertWhere } from "./client";

/** The guards, each named for the write it stops: adding a service past the limit, changing a technician, cancelling a plan. */
export type GuardName = "service-limit" | "technician-update" | "plan-cancel";

/** The statement that makes its batch fail whole, with guard `name`'s message, when `condition` holds. */
export const guard = (db: Db, name: GuardName, condition: SQL) => insertWhere(db, guards, { name }, condition);

/** Whether `error` is that of a batch guard `name` stopped. */
export const stoppedBy = (error: unknown, name: GuardName): boolean =>
  errorText(error).includes(`guard failed: ${name}`);
