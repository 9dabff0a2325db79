// The call context (docs/api.md, "Call context") over HTTP and MCP: the org,
// its clock in UTC and local time, 7 local dates of opening hours (closed
// dates empty), its active services, and the next bookable slot of the
// default visit, in one round trip once the key is verified.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { addService } from "../../support/catalogue";
import { wrapD1 } from "../../support/d1";
import { mcpCall, toolAnswer } from "../../support/mcp";
import { call } from "../../support/request";
import { OPEN_ALWAYS } from "../../support/schedules";
import { openTenant } from "../../support/tenants";

const CONTEXT = "/api/v1/ai-agent/context";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("GET /api/v1/ai-agent/context and get_call_context", () => {
  it("answers the org, now in UTC and local time, 7 local dates of hours with closed ones empty, services and the next slot", async () => {
    // Wednesday 2026-11-25 09:03:07.250 in New York (14:03 UTC): open 08:00–17:00 on weekdays, hourly slots.
    const now = Date.parse("2026-11-25T14:03:07.250Z");
    vi.spyOn(Date, "now").mockReturnValue(now);
    const office: [string, string][] = [["08:00", "17:00"]];
    const split: [string, string][] = [
      ["08:00", "12:00"],
      ["13:00", "17:00"],
    ];
    const weekdays = { mon: office, tue: office, wed: split, thu: office, fri: office, sat: [], sun: [] };
    const t = await openTenant("Context Pest Control", {
      timeZone: "America/New_York",
      weeklyHours: weekdays,
      closedDates: ["2026-11-26"],
      minNoticeMinutes: 60,
      capacity: 1,
    });
    const general = await addService(t, {
      name: "General pest control",
      durationMinutes: 60,
      keywords: ["ants"],
      isDefault: true,
    });
    await addService(t, { name: "Old service", durationMinutes: 30, active: false });
    const res = await call(t, CONTEXT);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      organization: { id: t.orgId, name: "Context Pest Control" },
      timeZone: "America/New_York",
      now: "2026-11-25T14:03:07.250Z",
      localNow: "2026-11-25T09:03:07-05:00",
      localDate: "2026-11-25",
      weekday: "wednesday",
      openingHours: [
        {
          date: "2026-11-25",
          weekday: "wednesday",
          intervals: [
            ["08:00", "12:00"],
            ["13:00", "17:00"],
          ],
        },
        { date: "2026-11-26", weekday: "thursday", intervals: [] },
        { date: "2026-11-27", weekday: "friday", intervals: [["08:00", "17:00"]] },
        { date: "2026-11-28", weekday: "saturday", intervals: [] },
        { date: "2026-11-29", weekday: "sunday", intervals: [] },
        { date: "2026-11-30", weekday: "monday", intervals: [["08:00", "17:00"]] },
        { date: "2026-12-01", weekday: "tuesday", intervals: [["08:00", "17:00"]] },
      ],
      services: [
        {
          id: general.id,
          name: "General pest control",
          durationMinutes: 60,
          arrivalWindowMinutes: 0,
          keywords: ["ants"],
        },
      ],
      // 09:03 + 60 minutes' notice: the 11:00 slot is the first start at or after 10:03.
      nextAvailable: {
        start: "2026-11-25T16:00:00.000Z",
        end: "2026-11-25T17:00:00.000Z",
        localStart: "2026-11-25T11:00:00-05:00",
        localEnd: "2026-11-25T12:00:00-05:00",
        remaining: 1,
        serviceId: general.id,
        arrivalWindow: null,
      },
    });
    // The same over MCP, and the same slot available-appointments lists first.
    expect(toolAnswer(await mcpCall(t, "get_call_context", {})).body).toEqual(res.body);
    const listed = await call(t, "/api/v1/ai-agent/available-appointments", {
      body: { dateTime: "2026-11-25T14:03:07Z", limit: 1 },
    });
    expect(listed.body.slots[0]).toEqual(res.body.nextAvailable);
  });

  it("an org without services lists none; a fully booked or closed horizon has no next slot; query parameters are refused", async () => {
    const t = await openTenant(undefined, { weeklyHours: OPEN_ALWAYS, horizonDays: 1, closedDates: [] });
    const open = await call(t, CONTEXT);
    expect(open.body.services).toEqual([]);
    expect(open.body.nextAvailable).not.toBeNull();
    expect(open.body.openingHours).toHaveLength(7);
    expect(open.body.openingHours.every((d: { intervals: unknown[] }) => d.intervals.length === 1)).toBe(true);
    // Closed every day: nothing to offer.
    const closed = await openTenant(undefined, {
      weeklyHours: { mon: [], tue: [], wed: [], thu: [], fri: [], sat: [], sun: [] },
    });
    const none = await call(closed, CONTEXT);
    expect(none.status).toBe(200);
    expect(none.body.nextAvailable).toBeNull();
    expect(none.body.openingHours.map((d: { intervals: unknown[] }) => d.intervals)).toEqual(Array(7).fill([]));
    const refused = await call(t, `${CONTEXT}?limit=3`);
    expect(refused.status).toBe(422);
  });

  it("costs one round trip once the key is verified (the next slot); the rest rides with the key", async () => {
    const t = await openTenant();
    await call(t, CONTEXT);
    const warm = wrapD1(env.DB);
    expect((await call(t, CONTEXT, { bindings: { DB: warm.db } })).status).toBe(200);
    expect(warm.trips.length, JSON.stringify(warm.trips)).toBe(1);
  });
});
