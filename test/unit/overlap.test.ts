// unionOf (src/scheduling/overlap.ts): the ranges a scan reads in one
// statement stand for exactly the ranges asked, so a visit occupies some
// instant of the union when and only when it occupies some instant of one of
// them (a visit or hold always occupies some instant: it is at least 5
// minutes long), and no two spans of the union overlap or touch.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { overlaps, unionOf } from "../../src/scheduling/overlap";

const spanOf = (minLength: number) =>
  fc
    .tuple(fc.integer({ min: 0, max: 100 }), fc.integer({ min: minLength, max: 30 }))
    .map(([start, length]) => ({ start, end: start + length }));
const span = spanOf(0);
const occupantSpan = spanOf(1);

describe("unionOf", () => {
  it("joins spans that overlap or touch, and keeps the others apart, by start", () => {
    expect(
      unionOf([
        { start: 50, end: 60 },
        { start: 0, end: 10 },
        { start: 10, end: 20 },
        { start: 15, end: 18 },
        { start: 59, end: 70 },
        { start: 21, end: 22 },
      ]),
    ).toEqual([
      { start: 0, end: 20 },
      { start: 21, end: 22 },
      { start: 50, end: 70 },
    ]);
    expect(unionOf([])).toEqual([]);
  });

  it("is overlapped by exactly what overlaps one of the spans", () => {
    fc.assert(
      fc.property(fc.array(span, { maxLength: 6 }), occupantSpan, (spans, occupant) => {
        const union = unionOf(spans);
        const occupied = { startsAt: occupant.start, endsAt: occupant.end };
        expect(union.some((u) => overlaps(occupied, u))).toBe(spans.some((s) => overlaps(occupied, s)));
        for (let i = 1; i < union.length; i++) expect(union[i]!.start).toBeGreaterThan(union[i - 1]!.end);
      }),
      { seed: 37, numRuns: 500 },
    );
  });

  it("leaves the spans it was given as they were", () => {
    const spans = [
      { start: 0, end: 10 },
      { start: 5, end: 20 },
    ];
    unionOf(spans);
    expect(spans).toEqual([
      { start: 0, end: 10 },
      { start: 5, end: 20 },
    ]);
  });
});
