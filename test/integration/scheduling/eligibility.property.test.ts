// Technician eligibility's two forms (src/scheduling/eligibility.ts) held
// equal: on random technicians, stored as the CLI stores them (JSON columns),
// and random needs of a visit, each JavaScript rule (qualified, covers,
// offOn) answers what its SQL form answers when D1 runs it on the rows, as
// the booking statement does (src/db/placement.ts, assignee). Seeded.

import { inArray, type SQL, sql } from "drizzle-orm";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { technicians } from "../../../drizzle/schema";
import { newId } from "../../../src/lib/ids";
import { covers, coversSql, offOn, offOnSql, qualified, qualifiedSql } from "../../../src/scheduling/eligibility";
import type { Technician } from "../../../src/scheduling/visits";
import { db, newTenant } from "../../support/tenants";

const RUNS = 300;

// Near misses: case, prefixes of one another, an empty text, a space, a letter beyond ASCII.
const SKILLS = ["rodent", "Rodent", "rodents", "termite-license", "", "a b", "é"];
const CODE_CHARACTERS = ["1", "0", "2", "S", "W", "s", " ", "É"];
const DATES = ["2026-03-08", "2026-03-09", "2026-03-10", "2026-3-9"];

const text = (maxLength: number) =>
  fc.array(fc.constantFrom(...CODE_CHARACTERS), { maxLength }).map((chars) => chars.join(""));

const technician = fc.record({
  skills: fc.uniqueArray(fc.constantFrom(...SKILLS), { maxLength: 3 }),
  postalCodes: fc.uniqueArray(text(3), { maxLength: 3 }),
  daysOff: fc.uniqueArray(fc.constantFrom(...DATES), { maxLength: 2 }),
});

const needs = fc.record({
  skills: fc.uniqueArray(fc.constantFrom(...SKILLS), { maxLength: 3 }),
  postalCode: fc.option(text(6), { freq: 4 }),
  date: fc.constantFrom(...DATES),
});

let orgId: string;
beforeAll(async () => {
  orgId = (await newTenant("Eligibility")).orgId;
});

describe("eligibility: each JavaScript rule and its SQL form agree", () => {
  it(`on ${RUNS} random technicians and visits`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(technician, { minLength: 1, maxLength: 4 }), needs, async (fields, visit) => {
        const now = Date.now();
        const stored: Technician[] = fields.map((f, i) => ({
          ...f,
          id: newId("tech", now + i),
          name: "T",
          weeklyHours: null,
          active: true,
        }));
        await db()
          .insert(technicians)
          .values(stored.map((t) => ({ ...t, orgId, createdAt: now, updatedAt: now })));
        const asFlag = (condition: SQL | undefined) => sql<number>`${condition ?? sql`1`} != 0`;
        const rows = await db()
          .select({
            id: technicians.id,
            qualified: asFlag(qualifiedSql(technicians, JSON.stringify(visit.skills))),
            covers: asFlag(coversSql(technicians, visit.postalCode)),
            offOn: asFlag(offOnSql(technicians, visit.date)),
          })
          .from(technicians)
          .where(
            inArray(
              technicians.id,
              stored.map((t) => t.id),
            ),
          );
        const bySql = Object.fromEntries(
          rows.map((r) => [r.id, { qualified: !!r.qualified, covers: !!r.covers, offOn: !!r.offOn }]),
        );
        const byJs = Object.fromEntries(
          stored.map((t) => [
            t.id,
            {
              qualified: qualified(t, visit.skills),
              covers: covers(t, visit.postalCode),
              offOn: offOn(t, visit.date),
            },
          ]),
        );
        expect(bySql).toEqual(byJs);
      }),
      { numRuns: RUNS, seed: 34 },
    );
  }, 120_000);

  it.each<[string, string[], string | null, boolean]>([
    ["no prefixes: everywhere", [], "20500", true],
    ["no code given: anywhere", ["10"], null, true],
    ["a prefix of the code", ["20", "10"], "10001", true],
    ["the whole code", ["10001"], "10001", true],
    ["longer than the code", ["100011"], "10001", false],
    ["an empty prefix covers every code", [""], "10001", true],
    ["case counts (codes are normalised before)", ["sw1"], "SW1A1AA", false],
  ])("covers, both forms: %s", async (_, postalCodes, postalCode, expected) => {
    const t = { skills: [], postalCodes, daysOff: [] };
    expect(covers(t, postalCode)).toBe(expected);
    const condition = coversSql(
      { skills: sql`'[]'`, postalCodes: sql`${JSON.stringify(postalCodes)}`, daysOff: sql`'[]'` },
      postalCode,
    );
    const [row] = await db().all<{ v: number }>(sql`SELECT ${condition ?? sql`1`} != 0 AS v`);
    expect(!!row!.v).toBe(expected);
  });
});
