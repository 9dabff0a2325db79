// The resources several operations' examples show, typed by the schemas that
// answer them. Only the document generator reads them (src/openapi/examples/index.ts).
import type { Account } from "../../schemas/accounts";
import type { BoardOut } from "../../schemas/board";
import type { Contact } from "../../schemas/contacts";
import type { Incident } from "../../schemas/incidents";
import type { PlanOut } from "../../schemas/plans";
import type { ServiceOut } from "../../schemas/services";

/** An operation's examples in the document: its request body (a POST's) and a real 200 body. */
export interface OperationExamples {
  /** A real request body (a POST) for the document; GET parameters carry theirs in their schemas. */
  example?: Record<string, unknown>;
  /** A real 200 body for the document (a test checks it against `response`). */
  responseExample: Record<string, unknown>;
}

export const INCIDENT_EXAMPLE: Incident = {
  id: "inc_01m81r170vt72z173z69cgy8ce",
  status: "scheduled",
  dateTime: "2026-11-24T13:00:00.000Z",
  clientName: "Jane Homeowner",
  insectName: "termites",
  accountId: "acct_demo0000000000000000000003",
  phone: "+19175550199",
  notes: "Side gate code 4412; droppings in the garage",
  serviceId: null,
  technicianId: null,
  postalCode: null,
  appointment: {
    start: "2026-11-24T13:00:00.000Z",
    end: "2026-11-24T14:00:00.000Z",
    localStart: "2026-11-24T08:00:00-05:00",
    localEnd: "2026-11-24T09:00:00-05:00",
  },
  arrivalWindow: null,
  createdAt: "2026-11-23T15:04:05.123Z",
  updatedAt: "2026-11-23T15:04:05.123Z",
  cancelledAt: null,
  cancelReason: null,
  closedAt: null,
  outcomeNote: null,
  planId: null,
};

export const ACCOUNT_EXAMPLE: Account = {
  id: "acct_demo0000000000000000000001",
  name: "Acme Apartments",
  accountType: 1,
  email: "office@acme-apartments.example",
  mobilePhone: null,
  businessPhone: "+1 212 555 0100",
  buildingLocation: null,
  street1: "12 Elm Street",
  street2: null,
  city: "New York",
  postalCode: "10001",
  state: "NY",
  country: "US",
  createdAt: "2026-11-23T15:04:05.123Z",
  updatedAt: "2026-11-23T15:04:05.123Z",
};

export const CONTACT_EXAMPLE: Contact = {
  id: "ct_01m81qn5z3krebz4psy4c264e8",
  firstName: "Jane",
  lastName: "Homeowner",
  email: "jane@example.com",
  mobilePhone: null,
  businessPhone: null,
  accountId: "acct_demo0000000000000000000003",
  buildingLocation: null,
  street1: null,
  street2: null,
  city: null,
  postalCode: null,
  state: null,
  country: null,
  createdAt: "2026-11-23T15:04:05.123Z",
  updatedAt: "2026-11-23T15:04:05.123Z",
};

export const SERVICE_EXAMPLE: ServiceOut = {
  id: "svc_demo0000000000000000000003",
  name: "Termite treatment",
  durationMinutes: 180,
  bufferMinutes: 30,
  arrivalWindowMinutes: 120,
  skills: ["termite-license"],
  keywords: ["termites", "white ants"],
  default: false,
  active: true,
};

export const PLAN_EXAMPLE: PlanOut = {
  id: "plan_01m81r170vt72z173z69cgy8ce",
  status: "active",
  every: { count: 3, unit: "month" },
  visits: null,
  serviceId: null,
  postalCode: null,
  clientName: INCIDENT_EXAMPLE.clientName,
  insectName: INCIDENT_EXAMPLE.insectName,
  phone: INCIDENT_EXAMPLE.phone,
  accountId: INCIDENT_EXAMPLE.accountId,
  notes: INCIDENT_EXAMPLE.notes,
  technicianId: null,
  localTime: "08:00",
  firstVisitDate: "2026-11-24",
  nextDueDate: "2027-02-24",
  visitsMade: 1,
  createdAt: INCIDENT_EXAMPLE.createdAt,
  updatedAt: INCIDENT_EXAMPLE.createdAt,
  cancelledAt: null,
  cancelReason: null,
};

export const BOARD_EXAMPLE: BoardOut = {
  date: "2026-11-24",
  timeZone: "America/New_York",
  rows: [
    {
      technician: { id: "tech_demo0000000000000000000001", name: "Sam Ortiz" },
      duty: [
        {
          start: "2026-11-24T13:00:00.000Z",
          end: "2026-11-24T22:00:00.000Z",
          localStart: "2026-11-24T08:00:00-05:00",
          localEnd: "2026-11-24T17:00:00-05:00",
        },
      ],
      visits: [{ ...INCIDENT_EXAMPLE, technicianId: "tech_demo0000000000000000000001" }],
      holds: [
        {
          start: "2026-11-24T15:00:00.000Z",
          end: "2026-11-24T16:00:00.000Z",
          expiresAt: "2026-11-23T15:09:05.123Z",
          serviceId: "svc_demo0000000000000000000001",
        },
      ],
    },
  ],
};
