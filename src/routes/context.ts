// The call context (docs/api.md, "Call context"): an agent's first turn in
// one D1 round trip (the next bookable slot); the rest comes from what
// authentication read with the key.

import { scanBookable } from "../availability/scan";
import { defineOperation } from "../http/operation";
import { requestOrFail } from "../http/validate";
import { toIso } from "../lib/datetime";
import { WEEKDAYS } from "../scheduling/schedule";
import { slotView } from "../scheduling/slots";
import { dateString, localDateOf, localIso, weekday } from "../scheduling/zone";
import { callContext, WEEKDAY_NAMES } from "../schemas/context";

const DAYS_SHOWN = 7;

export const contextOperations = [
  defineOperation({
    operationId: "getCallContext",
    tool: "get_call_context",
    method: "get",
    path: "/api/v1/ai-agent/context",
    tag: "ai-agent",
    effect: "read",
    roles: ["office", "agent", "read"],
    summary: "What an agent needs at the start of a call",
    description:
      "Call it first: the organisation, its time zone, now (UTC and local, with the weekday), the opening hours of the next 7 local dates (closed dates with no intervals), the services an agent may book, and the next bookable slot of the default visit (null when none).",
    response: callContext,
    handler: async (c) => {
      const { db, org } = c.var;
      const { timeZone, weeklyHours, closedDates } = org.schedule;
      const now = Date.now();
      const today = localDateOf(now, timeZone);
      const dayOf = (date: number) => {
        const day = weekday(date) - 1;
        const text = dateString(date);
        return {
          date: text,
          weekday: WEEKDAY_NAMES[day]!,
          intervals: closedDates.includes(text) ? [] : weeklyHours[WEEKDAYS[day]!],
        };
      };
      const request = requestOrFail(org, {});
      const { slots } = await scanBookable(db, { org, request, now, from: now, limit: 1 });
      const [next] = slots;
      return c.json(
        {
          organization: { id: org.id, name: org.name },
          timeZone,
          now: toIso(now),
          localNow: localIso(now, timeZone),
          localDate: dateString(today),
          weekday: WEEKDAY_NAMES[weekday(today) - 1]!,
          openingHours: Array.from({ length: DAYS_SHOWN }, (_, i) => dayOf(today + i)),
          services: org.catalogue.services
            .filter((s) => s.active)
            .map(({ id, name, durationMinutes, arrivalWindowMinutes, keywords }) => ({
              id,
              name,
              durationMinutes,
              arrivalWindowMinutes,
              keywords,
            })),
          nextAvailable: next ? slotView(next, timeZone, request.visit) : null,
        },
        200,
      );
    },
  }),
];
