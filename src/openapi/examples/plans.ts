import { CREATE_INCIDENT_EXAMPLE } from "./ai-agent";
import { INCIDENT_EXAMPLE, type OperationExamples, PLAN_EXAMPLE } from "./shared";

export const plansExamples = {
  createPlan: {
    example: { ...CREATE_INCIDENT_EXAMPLE, every: { count: 3, unit: "month" } },
    responseExample: {
      plan: PLAN_EXAMPLE,
      incident: {
        ...INCIDENT_EXAMPLE,
        planId: PLAN_EXAMPLE.id,
        appointment: { ...INCIDENT_EXAMPLE.appointment, remaining: 0 },
      },
    },
  },
  getPlan: {
    responseExample: PLAN_EXAMPLE,
  },
  listPlans: {
    responseExample: { data: [PLAN_EXAMPLE], hasMore: false, nextCursor: null },
  },
  cancelPlan: {
    example: { reason: "Moved away" },
    responseExample: {
      ...PLAN_EXAMPLE,
      status: "cancelled",
      nextDueDate: null,
      updatedAt: "2026-11-23T16:30:00.000Z",
      cancelledAt: "2026-11-23T16:30:00.000Z",
      cancelReason: "Moved away",
    },
  },
} satisfies Record<string, OperationExamples>;
