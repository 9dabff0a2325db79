// The board's cost (docs/performance.md's budgets): 2 round trips cold (the
// key with the catalogue, then the day), 1 warm, with technicians or crews;
// the day's visits read in order from the (org, start, id) index, its holds
// from holds_org_starts, no statement scanning a tenant table.
import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { apiKeys } from "../../../drizzle/schema";
import { createKey } from "../../../src/db/api-keys";
import { storeSchedule } from "../../../src/db/orgs";
import { storeHold, storeVisit } from "../../support/board";
import { addTechnician } from "../../support/catalogue";
import { type Statement, wrapD1 } from "../../support/d1";
import { call } from "../../support/request";
import { db, newTenant, type Tenant } from "../../support/tenants";

const DAY = "2031-03-04";

async function plan({ sql, params }: Statement): Promise<string> {
  const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .bind(...params)
    .all<{ detail: string }>();
  return results.map((row) => row.detail).join("\n");
}

async function orgWith(technicians: number): Promise<Tenant> {
  const t = await newTenant();
  await storeSchedule(db(), t.orgId, { timeZone: "America/New_York" });
  const ids: (string | null)[] = [null];
  for (let i = 0; i < technicians; i++) ids.push((await addTechnician(t, { name: `Tech ${i}` })).id);
  for (const [i, technicianId] of ids.entries()) {
    await storeVisit(t, { start: `${DAY}T${14 + i}:00:00Z`, technicianId });
    await storeHold(t, { start: `${DAY}T${15 + i}:30:00Z`, technicianId });
  }
  return t;
}

describe("GET /api/v1/board: D1 budget", () => {
  it.each([
    ["technicians", 3],
    ["crews", 0],
  ])("with %s: 2 round trips cold, 1 warm (one batch), every statement on an index", async (_name, technicians) => {
    const t = await orgWith(technicians);
    const { apiKey, keyId } = (await createKey(db(), t.orgId, "read"))!;
    // Used within the minute: the key's last-use hint is not due, so no write runs beside the request.
    await db().update(apiKeys).set({ lastUsedAt: Date.now() }).where(eq(apiKeys.id, keyId));
    const send = (recorder = wrapD1(env.DB)) =>
      call({ orgId: t.orgId, apiKey }, `/api/v1/board?date=${DAY}`, { bindings: { DB: recorder.db } }).then((res) => ({
        res,
        recorder,
      }));

    const cold = await send();
    expect(cold.res.status, cold.res.text).toBe(200);
    expect(cold.recorder.trips.length, JSON.stringify(cold.recorder.trips)).toBe(2);
    const warm = await send();
    expect(warm.res.body).toEqual(cold.res.body);
    expect(warm.recorder.trips.length, JSON.stringify(warm.recorder.trips)).toBe(1);
    expect(warm.recorder.trips[0]!.sql).toEqual(cold.recorder.trips[1]!.sql);
    const visits = cold.res.body.rows.flatMap((r: { visits: unknown[] }) => r.visits);
    expect(visits).toHaveLength(technicians + 1);

    for (const statement of cold.recorder.trips.flatMap((trip) => trip.statements)) {
      expect(await plan(statement), statement.sql).not.toMatch(
        /^SCAN (incidents|holds|technicians|services|orgs|api_keys)\b/m,
      );
    }
    const [day, holds] = warm.recorder.trips[0]!.statements;
    const dayPlan = await plan(day!);
    expect(dayPlan).toMatch(
      /SEARCH incidents USING INDEX incidents_org_starts \(org_id=\? AND starts_at>\? AND starts_at<\?\)/,
    );
    expect(dayPlan).not.toMatch(/TEMP B-TREE/);
    expect(await plan(holds!)).toMatch(/SEARCH holds USING (COVERING )?INDEX holds_org_starts/);
  });
});
