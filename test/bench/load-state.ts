// The load run's local D1 state, reached the way the admin CLI reaches it
// (src/db/connect.ts: wrangler's platform proxy on the `--persist-to` folder
// that `wrangler dev` serves): orgs provisioned with the CLI's own functions
// in one process (a CLI process per command costs ~4 s here), and, after the
// run, the rows themselves, read straight from D1 rather than through the API.

import { connect } from "../../src/cli/connect";
import { insertAccounts } from "../../src/db/accounts";
import { createDb } from "../../src/db/client";
import { createOrg, storeSchedule } from "../../src/db/orgs";
import { scheduleDocument } from "../../src/scheduling/schedule";
import { importAccount } from "../../src/schemas/accounts";

/** The platform proxy runs in this process: keep wrangler's telemetry and Request.cf fetch off here too. */
function local(stateDir: string) {
  process.env.WRANGLER_SEND_METRICS ??= "false";
  process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
  return connect({ remote: false, persistTo: stateDir });
}

export interface LoadOrg {
  orgId: string;
  apiKey: string;
  capacity: number;
  accounts: { id: string; name: string }[];
}

/** A few slots: two hours a day, bookable for the next 3 days, no notice. */
const scheduleOf = (capacity: number) => ({
  timeZone: "UTC",
  slotMinutes: 60,
  capacity,
  minNoticeMinutes: 0,
  horizonDays: 3,
  weeklyHours: Object.fromEntries(
    ["mon", "tue", "wed", "thu", "fri", "sat", "sun"].map((day) => [day, [["10:00", "12:00"]]]),
  ),
  closedDates: [],
});

/** `count` orgs with capacities 1, 2, 3, 1, …, each with three accounts. */
export async function provisionOrgs(stateDir: string, count: number): Promise<LoadOrg[]> {
  const { d1, dispose } = await local(stateDir);
  try {
    const db = createDb(d1);
    const orgs: LoadOrg[] = [];
    for (let i = 0; i < count; i++) {
      const capacity = 1 + (i % 3);
      const { orgId, apiKey } = await createOrg(db, { name: `Load ${i}`, timeZone: "UTC" });
      await storeSchedule(db, orgId, scheduleDocument().parse(scheduleOf(capacity)));
      const rows = [0, 1, 2].map((n) =>
        importAccount().parse({ name: `Load Customer ${i}-${n}`, city: "Springfield" }),
      );
      const { accounts } = (await insertAccounts(db, orgId, rows))!;
      orgs.push({ orgId, apiKey, capacity, accounts });
    }
    return orgs;
  } finally {
    await dispose();
  }
}

export interface StoredRows {
  leads: { id: string; org_id: string }[];
  contacts: { id: string; org_id: string }[];
  /** Only a `scheduled` incident holds its slot (docs/api.md, "Incidents"); `updated_at` moves with every change. */
  incidents: { id: string; org_id: string; status: string; starts_at: number; updated_at: number }[];
}

/** Every lead, contact and incident of these orgs, as D1 holds them (incidents with their status, slot and last change). */
export async function readRows(stateDir: string, orgIds: string[]): Promise<StoredRows> {
  const { d1, dispose } = await local(stateDir);
  try {
    const inOrgs = `org_id IN (${orgIds.map((_, i) => `?${i + 1}`).join(", ")})`;
    const read = async <T>(sql: string) =>
      (
        await d1
          .prepare(`${sql} WHERE ${inOrgs}`)
          .bind(...orgIds)
          .all<T>()
      ).results;
    return {
      leads: await read("SELECT id, org_id FROM leads"),
      contacts: await read("SELECT id, org_id FROM contacts"),
      incidents: await read("SELECT id, org_id, status, starts_at, updated_at FROM incidents"),
    };
  } finally {
    await dispose();
  }
}
