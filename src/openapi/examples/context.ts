import type { OperationExamples } from "./shared";

export const contextExamples = {
  getCallContext: {
    responseExample: {
      organization: { id: "org_demo", name: "Demo Pest Control" },
      timeZone: "America/New_York",
      now: "2026-11-25T14:03:00.000Z",
      localNow: "2026-11-25T09:03:00-05:00",
      localDate: "2026-11-25",
      weekday: "wednesday",
      openingHours: [{ date: "2026-11-25", weekday: "wednesday", intervals: [["08:00", "17:00"]] }],
      services: [
        {
          id: "svc_demo0000000000000000000001",
          name: "General pest control",
          durationMinutes: 60,
          arrivalWindowMinutes: 0,
          keywords: ["ants"],
        },
      ],
      nextAvailable: {
        start: "2026-11-25T17:00:00.000Z",
        end: "2026-11-25T18:00:00.000Z",
        localStart: "2026-11-25T12:00:00-05:00",
        localEnd: "2026-11-25T13:00:00-05:00",
        remaining: 1,
        serviceId: "svc_demo0000000000000000000001",
        arrivalWindow: null,
      },
    },
  },
} satisfies Record<string, OperationExamples>;
