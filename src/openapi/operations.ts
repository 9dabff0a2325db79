// The seven operations of the API, described once: the OpenAPI document and
// the MCP tools are both generated from this table and from the same zod
// schemas that validate requests.
import { z } from "zod";
import { availableAppointmentsBody, bookingCheckBody, createIncidentBody } from "../schemas/ai-agent";
import { createContactBody, listContactsQuery } from "../schemas/contacts";
import { createLeadBody } from "../schemas/leads";
import {
  account,
  availableAppointments,
  bookingCheck,
  contact,
  contactPage,
  incident,
  lead,
  slotUnavailable,
} from "../schemas/responses";

export interface Operation {
  operationId: string;
  /** Its name as an MCP tool. */
  tool: string;
  method: "get" | "post";
  /** OpenAPI path template. */
  path: string;
  tag: string;
  summary: string;
  description: string;
  body?: z.ZodType;
  example?: Record<string, unknown>;
  query?: z.ZodObject;
  pathParams?: z.ZodObject;
  response: z.ZodType;
  /** Error statuses besides those every operation can answer. */
  errors: number[];
  /** A 409 that is an outcome of the operation, with its own schema. */
  conflict?: z.ZodType;
}

export const accountIdParam = z.object({
  id: z.string().meta({ description: "The account's id", example: "acct_demo0000000000000000000001" }),
});

export const OPERATIONS: Operation[] = [
  {
    operationId: "findAvailableAppointments",
    tool: "find_available_appointments",
    method: "post",
    path: "/api/v1/ai-agent/available-appointments",
    tag: "ai-agent",
    summary: "Find available appointment slots",
    description:
      "The first `limit` (default 10) bookable slots starting at or after `dateTime` (earlier values are lifted to now + minimum notice), ascending, within the booking horizon. An empty list is a valid answer.",
    body: availableAppointmentsBody,
    example: { dateTime: "2026-11-24T08:00:00-05:00", limit: 3 },
    response: availableAppointments,
    errors: [],
  },
  {
    operationId: "checkBookingAvailability",
    tool: "check_booking_availability",
    method: "post",
    path: "/api/v1/ai-agent/is-booking-available",
    tag: "ai-agent",
    summary: "Check whether one slot can be booked",
    description:
      "Answers for exactly the slot that starts at `dateTime`: `available`, the `reason` when not (in_the_past, beyond_horizon, closed, not_a_slot_start, too_soon, fully_booked — the first that applies), the slot itself, and up to 3 bookable alternatives after it.",
    body: bookingCheckBody,
    example: { dateTime: "2026-11-24T13:00:00Z" },
    response: bookingCheck,
    errors: [],
  },
  {
    operationId: "createIncident",
    tool: "create_incident",
    method: "post",
    path: "/api/v1/ai-agent/create-incident",
    tag: "ai-agent",
    summary: "Log an incident and book its visit",
    description:
      "Logs a pest or service incident and books the slot that starts at `dateTime`, atomically: a slot is never booked beyond its capacity. If the slot cannot be booked nothing is stored and the answer is 409 `slot_unavailable` with `reason` and `alternatives`. `clientName` is linked to the account of that name (case-insensitive) when exactly one exists.",
    body: createIncidentBody,
    example: { dateTime: "2026-11-24T13:00:00Z", clientName: "Acme Apartments", insectName: "German cockroach" },
    response: incident,
    errors: [],
    conflict: slotUnavailable,
  },
  {
    operationId: "createLead",
    tool: "create_lead",
    method: "post",
    path: "/api/v1/leads",
    tag: "Leads",
    summary: "Create a lead",
    description: "Stores a lead in the sales pipeline. No field is required; `{}` is a valid lead.",
    body: createLeadBody,
    example: {
      firstName: "Dana",
      lastName: "Ruiz",
      companyName: "Ruiz Deli",
      email: "dana@ruizdeli.example",
      leadSource: 2,
      estimatedValue: 1800,
      estimatedCloseDate: "2026-12-15",
    },
    response: lead,
    errors: [],
  },
  {
    operationId: "createContact",
    tool: "create_contact",
    method: "post",
    path: "/api/v1/contacts",
    tag: "Contacts",
    summary: "Create a contact",
    description:
      "Stores a contact. At least one of firstName, lastName, email, mobilePhone, businessPhone is required; `accountId`, when given, must be an account of your organisation.",
    body: createContactBody,
    example: {
      firstName: "Jane",
      lastName: "Homeowner",
      email: "jane@example.com",
      accountId: "acct_demo0000000000000000000003",
    },
    response: contact,
    errors: [],
  },
  {
    operationId: "listContacts",
    tool: "list_contacts",
    method: "get",
    path: "/api/v1/contacts",
    tag: "Contacts",
    summary: "List contacts",
    description:
      "Contacts oldest first by (createdAt, id), read by keyset: pass `nextCursor` as `cursor` for the next page (null on the last). Filters: accountId, email (case-insensitive exact), updatedSince (inclusive).",
    query: listContactsQuery,
    response: contactPage,
    errors: [],
  },
  {
    operationId: "getAccount",
    tool: "get_account",
    method: "get",
    path: "/api/v1/accounts/{id}",
    tag: "Accounts",
    summary: "Get an account",
    description:
      "One account of your organisation. An unknown id, a malformed id and another organisation's id all answer 404 account_not_found.",
    pathParams: accountIdParam,
    response: account,
    errors: [404],
  },
];
