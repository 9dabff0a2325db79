import { INCIDENT_EXAMPLE, type OperationExamples } from "./shared";

export const eventsExamples = {
  listEvents: {
    responseExample: {
      data: [
        {
          id: "evt_01m81r170vt72z173z69cgy8cf",
          type: "incident.created",
          timestamp: "2026-11-23T15:04:05.123Z",
          actor: {
            keyId: "key_01m81r170vt72z173z69cgy8cg",
            role: "agent",
            channel: "vapi",
            callId: "3f1c2a9e-7b4d-4c41-9a0e-5d2b8f6e1a07",
            callerPhone: "+19175550199",
          },
          data: INCIDENT_EXAMPLE,
        },
      ],
      hasMore: false,
      nextCursor: "eyJ0IjoxMjMsImkiOiJldnRfMDFtODFyMTcwdnQ3MnoxNzN6NjljZ3k4Y2YifQ.PiPoFgA5WUoziU9lZOGxNA",
    },
  },
} satisfies Record<string, OperationExamples>;
