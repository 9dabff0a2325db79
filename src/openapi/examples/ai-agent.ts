import { ACCOUNT_EXAMPLE, INCIDENT_EXAMPLE, type OperationExamples } from "./shared";

/** The example incident's slot, as a slot object: `remaining` places left. */
const slotWith = (remaining: number) => ({
  ...INCIDENT_EXAMPLE.appointment,
  remaining,
  serviceId: null,
  arrivalWindow: null,
});

/** The example incident's request, which a plan's request extends. */
export const CREATE_INCIDENT_EXAMPLE = {
  dateTime: "2026-11-24T13:00:00Z",
  clientName: "Jane Homeowner",
  insectName: "termites",
  phone: "(917) 555-0199",
  notes: "Side gate code 4412; droppings in the garage",
};

export const aiAgentExamples = {
  findAvailableAppointments: {
    example: { dateTime: "2026-11-24T08:00:00-05:00", limit: 3 },
    responseExample: {
      timeZone: "America/New_York",
      slots: [slotWith(1)],
    },
  },
  checkBookingAvailability: {
    example: { dateTime: "2026-11-24T13:00:00Z" },
    responseExample: {
      dateTime: "2026-11-24T13:00:00.000Z",
      available: true,
      reason: null,
      slot: slotWith(1),
      alternatives: [
        {
          start: "2026-11-24T14:00:00.000Z",
          end: "2026-11-24T15:00:00.000Z",
          localStart: "2026-11-24T09:00:00-05:00",
          localEnd: "2026-11-24T10:00:00-05:00",
          remaining: 1,
          serviceId: null,
          arrivalWindow: null,
        },
      ],
    },
  },
  createIncident: {
    example: CREATE_INCIDENT_EXAMPLE,
    responseExample: { ...INCIDENT_EXAMPLE, appointment: { ...INCIDENT_EXAMPLE.appointment, remaining: 0 } },
  },
  holdSlot: {
    example: { dateTime: "2026-11-24T13:00:00Z", insectName: "termites", postalCode: "11201" },
    responseExample: {
      holdId: "hold_01m81r170vt72z173z69cgy8ce",
      expiresAt: "2026-11-23T14:05:00.000Z",
      slot: slotWith(0),
      technicianId: null,
    },
  },
  releaseHold: {
    example: { holdId: "hold_01m81r170vt72z173z69cgy8ce" },
    responseExample: { holdId: "hold_01m81r170vt72z173z69cgy8ce", released: true },
  },
  findCaller: {
    example: { phone: "+1 917 555 0199" },
    responseExample: {
      phone: "+19175550199",
      contacts: [],
      accounts: [ACCOUNT_EXAMPLE],
      upcomingIncidents: [INCIDENT_EXAMPLE],
      plans: [],
    },
  },
} satisfies Record<string, OperationExamples>;
