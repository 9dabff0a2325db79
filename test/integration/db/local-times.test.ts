// The SQL forms of toIso and localIso (src/db/local-times.ts), on the real
// D1, against the JavaScript ones: instants around every change of offset in
// the next two years of zones with summer time, half- and quarter-hour
// offsets, a 30-minute change (Lord Howe) and none (UTC), and random ones.
import { sql } from "drizzle-orm";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isoSql, localIsoSql } from "../../../src/db/local-times";
import { toIso } from "../../../src/lib/datetime";
import { localIso, offsetsJson } from "../../../src/scheduling/zone";
import { db } from "../../support/tenants";

const DAY = 86_400_000;
const ZONES = ["America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Kathmandu", "America/St_Johns", "UTC"];
const FROM_DAY = Math.floor(Date.parse("2026-11-01T00:00:00Z") / DAY);
const UNTIL_DAY = FROM_DAY + 730;

/** Each instant's toIso and localIso in `zone`, computed by D1 in one query. */
async function inSql(instants: number[], zone: string) {
  const offsets = offsetsJson(FROM_DAY, UNTIL_DAY, zone);
  const rows = await db().all<{ iso: string; local: string }>(
    // Each instant as a sum, as the answers' ends are written (an operator's precedence must not matter).
    sql`SELECT ${isoSql(sql`x.value - 7 + 7`)} AS iso, ${localIsoSql(sql`x.value - 7 + 7`, sql`${offsets}`)} AS local
      FROM json_each(${JSON.stringify(instants)}) AS x ORDER BY x.key`,
  );
  return rows.map((row) => [row.iso, row.local]);
}

const inJs = (instants: number[], zone: string) => instants.map((at) => [toIso(at), localIso(at, zone)]);

describe("isoSql and localIsoSql", () => {
  it.each(ZONES)(
    "%s: every change of offset, to the second either side, as the JavaScript writes them",
    async (zone) => {
      const changes = (JSON.parse(offsetsJson(FROM_DAY, UNTIL_DAY, zone)) as [number, number, string][]).slice(1);
      if (zone !== "UTC") expect(changes.length).toBeGreaterThanOrEqual(zone === "Asia/Kathmandu" ? 0 : 3);
      const instants = changes.flatMap(([at]) => [at - 1000, at - 1, at, at + 1, at + 999, at + 1000]);
      instants.push(FROM_DAY * DAY, UNTIL_DAY * DAY - 1);
      expect(await inSql(instants, zone)).toEqual(inJs(instants, zone));
    },
  );

  it("random instants of the span, in every zone", async () => {
    const instants = fc.sample(fc.integer({ min: FROM_DAY * DAY, max: UNTIL_DAY * DAY - 1 }), {
      numRuns: 300,
      seed: 37,
    });
    for (const zone of ZONES) expect(await inSql(instants, zone)).toEqual(inJs(instants, zone));
  });
});
