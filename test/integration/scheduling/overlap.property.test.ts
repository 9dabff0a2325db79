// The overlap's two forms (src/scheduling/overlap.ts) held equal: on random
// visits (scheduled or cancelled) and holds (live or lapsed) of one org, and
// a random span, the rows overlapping() finds in SQL — the one condition every
// count of places and the reassignment's read use (src/db/occupancy.ts) —
// are exactly those that occupy a place at `now` (a visit not cancelled, a
// hold not expired) and overlap the span by `overlaps` in JavaScript: with
// the org's longest span cached or read in the statement, and with an
// incident left out. No span is longer than the org's longest, as none is
// in the service (the index bound of overlapping relies on it). Seeded.
import { eq } from "drizzle-orm";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { holds, incidents, orgs } from "../../../drizzle/schema";
import { type OccupancyCensus, overlapping } from "../../../src/db/occupancy";
import { MINUTE } from "../../../src/lib/datetime";
import { newId } from "../../../src/lib/ids";
import { overlaps } from "../../../src/scheduling/overlap";
import { db, newTenant } from "../../support/tenants";

const RUNS = 200;
const LONGEST_MINUTES = 300;
// Each run's rows lie in a week of their own, far from every other run's.
const WEEK = 7 * 1440 * MINUTE;
const BASE = Date.parse("2031-01-06T00:00:00Z");

/** An instant of the run: whole minutes, or a millisecond off one (a span's end meeting a start). */
const instant = fc
  .tuple(fc.integer({ min: 0, max: 1440 }), fc.constantFrom(0, 0, 0, 1, -1))
  .map(([minutes, ms]) => minutes * MINUTE + ms);

const occupant = fc.record({
  start: instant,
  spanMinutes: fc.integer({ min: 0, max: LONGEST_MINUTES }),
  bufferMinutes: fc.constantFrom(0, 0, 15),
  lapsed: fc.boolean(),
});

type Occupant = typeof occupant extends fc.Arbitrary<infer T> ? T : never;

const scenario = fc.record({
  visits: fc.array(occupant, { maxLength: 6 }),
  holds: fc.array(occupant, { maxLength: 4 }),
  span: fc.tuple(instant, fc.integer({ min: 0, max: 240 })),
  now: instant,
  fresh: fc.boolean(),
  except: fc.option(fc.nat({ max: 5 }), { freq: 3 }),
});

let orgId: string;
beforeAll(async () => {
  orgId = (await newTenant("Overlap")).orgId;
  await db().update(orgs).set({ maxSlotMinutes: LONGEST_MINUTES }).where(eq(orgs.id, orgId));
});

describe("overlap: overlapping() in SQL finds what overlaps() and the occupancy rule find in JavaScript", () => {
  it(`on ${RUNS} random sets of visits and holds`, async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const base = BASE + run++ * WEEK;
        const now = base + s.now;
        // The buffer is part of the span the org's longest bounds.
        const spanOf = (o: Occupant) => {
          const startsAt = base + o.start;
          return {
            startsAt,
            endsAt: startsAt + o.spanMinutes * MINUTE,
            occupiedUntil: startsAt + Math.min(o.spanMinutes + o.bufferMinutes, LONGEST_MINUTES) * MINUTE,
          };
        };
        const visitRows = s.visits.map((v) => ({
          ...spanOf(v),
          id: newId("inc", now),
          orgId,
          status: v.lapsed ? ("cancelled" as const) : ("scheduled" as const),
          clientName: "C",
          insectName: "ants",
          createdAt: now,
          updatedAt: now,
        }));
        // A lapsed hold expired at now or before, as release and use leave it (expiresAt 0) or time does.
        const holdRows = s.holds.map((h, i) => ({
          ...spanOf(h),
          id: newId("hold", now),
          orgId,
          expiresAt: h.lapsed ? (i % 2 === 0 ? 0 : now) : now + 1,
          createdAt: now,
        }));
        if (visitRows.length > 0) await db().insert(incidents).values(visitRows);
        if (holdRows.length > 0) await db().insert(holds).values(holdRows);

        const range = { start: base + s.span[0], end: base + s.span[0] + s.span[1] * MINUTE };
        const except = s.except === null ? undefined : visitRows[s.except]?.id;
        const census: OccupancyCensus = {
          org: { id: orgId, maxBookingMs: LONGEST_MINUTES * MINUTE },
          now,
          fresh: s.fresh,
          except,
        };
        const [foundVisits, foundHolds] = await db().batch([
          db()
            .select({ id: incidents.id })
            .from(incidents)
            .where(overlapping(incidents, census, range)),
          db()
            .select({ id: holds.id })
            .from(holds)
            .where(overlapping(holds, census, range)),
        ]);

        const occupies = (r: { startsAt: number; occupiedUntil: number }) =>
          overlaps({ startsAt: r.startsAt, endsAt: r.occupiedUntil }, range);
        const expectedVisits = visitRows.filter((r) => r.status !== "cancelled" && r.id !== except && occupies(r));
        const expectedHolds = holdRows.filter((r) => r.expiresAt > now && occupies(r));
        expect(foundVisits.map((r) => r.id).sort()).toEqual(expectedVisits.map((r) => r.id).sort());
        expect(foundHolds.map((r) => r.id).sort()).toEqual(expectedHolds.map((r) => r.id).sort());
      }),
      { numRuns: RUNS, seed: 34 },
    );
  }, 120_000);
});
