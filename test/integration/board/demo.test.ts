// The demo's day (docs/api.md, "The dispatch board"): `npm run dev`'s seed
// puts visits and a live hold on the next working day, once, so that the
// board is not empty on a fresh clone.
import { describe, expect, it } from "vitest";
import { DEMO, seedDemo } from "../../../src/db/demo";
import { call } from "../../support/request";
import { db } from "../../support/tenants";

const demo = { orgId: DEMO.orgId, apiKey: DEMO.apiKey };
/** The first Monday to Friday after today in New York, as YYYY-MM-DD. */
function nextWorkingDay(now: number): string {
  const format = new Intl.DateTimeFormat("en-CA", { timeZone: DEMO.timeZone });
  for (let t = Date.parse(`${format.format(now)}T12:00:00Z`) + 86_400_000; ; t += 86_400_000) {
    const day = new Date(t).getUTCDay();
    if (day !== 0 && day !== 6) return new Date(t).toISOString().slice(0, 10);
  }
}

describe("the demo seed's day", () => {
  it("six visits and a live hold on the next working day, by technician; seeding again adds nothing", async () => {
    const now = Date.now();
    await seedDemo(db(), now);
    const day = nextWorkingDay(now);
    const first = await call(demo, `/api/v1/board?date=${day}`);
    expect(first.status, first.text).toBe(200);
    const rows = first.body.rows as {
      technician: { name: string };
      visits: { appointment: { localStart: string }; status: string }[];
      holds: { expiresAt: string }[];
    }[];
    expect(rows.map((r) => r.technician.name)).toEqual(["Dana Kim", "Marcus Lee", "Priya Shah", "Sam Ortiz"]);
    expect(rows.map((r) => r.visits.map((v) => v.appointment.localStart.slice(11, 16)))).toEqual([
      ["11:00", "16:00"],
      ["10:00"],
      ["09:00", "14:00"],
      ["13:00"],
    ]);
    expect(rows.map((r) => r.holds.length)).toEqual([0, 1, 0, 0]);
    expect(Date.parse(rows[1]!.holds[0]!.expiresAt)).toBeGreaterThan(now + 14 * 60_000);

    await seedDemo(db(), now + 1000);
    expect((await call(demo, `/api/v1/board?date=${day}`)).body).toEqual(first.body);
  });
});
