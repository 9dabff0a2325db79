import { INCIDENT_EXAMPLE, type OperationExamples } from "./shared";

export const incidentsExamples = {
  getIncident: {
    responseExample: INCIDENT_EXAMPLE,
  },
  listIncidents: {
    responseExample: {
      data: [INCIDENT_EXAMPLE],
      hasMore: false,
      nextCursor: null,
    },
  },
  cancelIncident: {
    example: { reason: "Customer sold the house" },
    responseExample: {
      ...INCIDENT_EXAMPLE,
      status: "cancelled",
      updatedAt: "2026-11-23T16:30:00.000Z",
      cancelledAt: "2026-11-23T16:30:00.000Z",
      cancelReason: "Customer sold the house",
    },
  },
  rescheduleIncident: {
    example: { dateTime: "2026-11-25T15:00:00Z" },
    responseExample: {
      ...INCIDENT_EXAMPLE,
      dateTime: "2026-11-25T15:00:00.000Z",
      appointment: {
        start: "2026-11-25T15:00:00.000Z",
        end: "2026-11-25T16:00:00.000Z",
        localStart: "2026-11-25T10:00:00-05:00",
        localEnd: "2026-11-25T11:00:00-05:00",
      },
      updatedAt: "2026-11-23T16:30:00.000Z",
    },
  },
  closeIncident: {
    example: { outcome: "completed", note: "Treated the garage and the side gate" },
    responseExample: {
      ...INCIDENT_EXAMPLE,
      status: "completed",
      updatedAt: "2026-11-24T14:05:00.000Z",
      closedAt: "2026-11-24T14:05:00.000Z",
      outcomeNote: "Treated the garage and the side gate",
    },
  },
} satisfies Record<string, OperationExamples>;
