// The consistency of scheduling (docs/api.md, "Book") on the pure engine,
// over random schedules, bookings and instants: a slot start is listed ⇔ it
// is available; and the engine's two views of "a slot starts here" (scan and
// point check) agree.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Schedule } from "../../src/scheduling/schedule";
import { assessSlot, candidateSlots, slotAt } from "../../src/scheduling/slots";
import { findBookable, placesCounter } from "../../src/scheduling/visits";
import { slotRequest, weeklyHours, ZONES } from "../support/schedules";
import { MINUTE } from "../support/time";

// Instants near DST changes of those zones, so that random `now`s meet them often.
const ANCHORS = [
  "2026-03-08T07:00:00Z",
  "2026-03-29T01:00:00Z",
  "2026-04-04T15:00:00Z",
  "2026-09-06T04:00:00Z",
  "2026-10-03T15:30:00Z",
  "2026-11-01T06:00:00Z",
  "2026-11-23T12:00:00Z",
].map(Date.parse);

const scenario = fc.record({
  schedule: fc.record({
    timeZone: fc.constantFrom(...ZONES),
    slotMinutes: fc.constantFrom(15, 30, 45, 60, 90, 120),
    capacity: fc.integer({ min: 1, max: 3 }),
    minNoticeMinutes: fc.integer({ min: 0, max: 1440 }),
    horizonDays: fc.integer({ min: 1, max: 6 }),
    weeklyHours,
    closedDays: fc.uniqueArray(fc.integer({ min: 0, max: 7 }), { maxLength: 3 }),
  }),
  // Sometimes on a minute, so that now + notice falls exactly on slot starts.
  now: fc
    .tuple(fc.constantFrom(...ANCHORS), fc.integer({ min: -3 * 1440, max: 3 * 1440 }), fc.constantFrom(0, 1, 12_345))
    .map(([anchor, minutes, ms]) => anchor + minutes * MINUTE + ms),
  // Optionally move `now` so that one of its edges (now, now + notice, now +
  // horizon) lies `delta` ms after a slot start: the off-by-one cases.
  align: fc.option(
    fc.record({
      edge: fc.constantFrom("now", "notice", "horizon"),
      delta: fc.constantFrom(-1, 0, 1, 30_000),
      pick: fc.nat(),
    }),
  ),
  bookingPicks: fc.array(fc.nat(), { maxLength: 12 }),
  instantPicks: fc.array(
    fc.oneof(
      fc.record({ candidate: fc.nat() }),
      fc.record({ minutes: fc.integer({ min: -600, max: 8 * 1440 }) }),
      // Near the edges: now, now + notice, now + horizon.
      fc.record({ edge: fc.constantFrom("now", "notice", "horizon"), minutes: fc.integer({ min: -2, max: 2 }) }),
      fc.record({ edge: fc.constantFrom("now", "notice", "horizon"), slotsAway: fc.integer({ min: -1, max: 1 }) }),
    ),
    { minLength: 1, maxLength: 12 },
  ),
});

function aligned(
  schedule: Schedule,
  now: number,
  { edge, delta, pick }: { edge: "now" | "notice" | "horizon"; delta: number; pick: number },
): number {
  const offset = { now: 0, notice: schedule.minNoticeMinutes * MINUTE, horizon: schedule.horizonDays * 1440 * MINUTE }[
    edge
  ];
  const near = [...candidateSlots(schedule, now + offset - 1440 * MINUTE, now + offset + 1440 * MINUTE)];
  const slot = near[pick % Math.max(1, near.length)];
  return slot ? slot.start + delta - offset : now;
}

type Edge = "now" | "notice" | "horizon";
type Pick = { candidate: number } | { minutes: number; edge?: Edge } | { edge: Edge; slotsAway: number };

function instantOf(
  pick: Pick,
  { schedule, now, candidates }: { schedule: Schedule; now: number; candidates: { start: number }[] },
): number {
  if ("candidate" in pick) return candidates[pick.candidate % Math.max(1, candidates.length)]?.start ?? now;
  const edge = {
    now,
    notice: now + schedule.minNoticeMinutes * MINUTE,
    horizon: now + schedule.horizonDays * 1440 * MINUTE,
  }[pick.edge ?? "now"];
  if ("slotsAway" in pick) {
    // The slot start at or after the edge, or one slot either side of it.
    const near = [...candidateSlots(schedule, edge - 1440 * MINUTE, edge + 1440 * MINUTE)];
    const at = near.findIndex((c) => c.start >= edge);
    return near[at + pick.slotsAway]?.start ?? edge;
  }
  return Math.floor(edge / MINUTE) * MINUTE + pick.minutes * MINUTE;
}

describe("slot engine consistency (property)", () => {
  it("listed ⇔ available, over random schedules, bookings and instants", () => {
    fc.assert(
      fc.property(scenario, ({ schedule: s, now: randomNow, align, bookingPicks, instantPicks }) => {
        const closedDates = s.closedDays.map((d) => new Date(randomNow + d * 1440 * MINUTE).toISOString().slice(0, 10));
        const schedule: Schedule = { ...s, closedDates } as Schedule;
        const now = align ? aligned(schedule, randomNow, align) : randomNow;
        const maxBookingMs = schedule.slotMinutes * MINUTE;
        const candidates = [
          ...candidateSlots(schedule, now - 1440 * MINUTE, now + (schedule.horizonDays + 1) * 1440 * MINUTE),
        ];
        for (let i = 1; i < candidates.length; i++)
          expect(candidates[i]!.start).toBeGreaterThanOrEqual(candidates[i - 1]!.end);
        const bookings =
          candidates.length === 0
            ? []
            : bookingPicks
                .map((p) => candidates[p % candidates.length]!)
                .map((c) => ({ startsAt: c.start, endsAt: c.end }));
        bookings.sort((a, b) => a.startsAt - b.startsAt);
        for (const pick of instantPicks) {
          const t = instantOf(pick, { schedule, now, candidates });
          const request = slotRequest(schedule);
          const listed = findBookable({ request, bookings, maxBookingMs, now, from: t, limit: 1 })[0]?.start === t;
          const { slot } = slotAt(schedule, t);
          const remaining = slot ? placesCounter(request, bookings, maxBookingMs)(slot.start) : 0;
          const { reason, slot: assessed } = assessSlot(schedule, now, t);
          expect(assessed).toEqual(slot);
          expect(listed).toBe(reason === null && remaining > 0);
          // The point check and the scan agree on what is a slot start.
          const around = candidateSlots(schedule, t - 1440 * MINUTE, t + 1440 * MINUTE);
          expect(slot !== null).toBe([...around].some((c) => c.start === t));
          if (reason === "closed" || reason === "not_a_slot_start") expect(slot).toBeNull();
        }
      }),
      { seed: 20261122, numRuns: 400 },
    );
  });
});
