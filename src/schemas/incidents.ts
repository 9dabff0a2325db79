import * as z from "zod/v4";
import { INCIDENT_STATUSES } from "../../drizzle/schema";
import { once } from "../lib/once";
import {
  cursorParam,
  dateTime,
  idParam,
  isoOut,
  LIMITS,
  optionalText,
  pageOf,
  queryDateTime,
  queryInteger,
  queryText,
  textOut,
} from "./common";
import { appointment, arrivalWindow, slot } from "./slots";

export const incidentIdParam = once(() => idParam("The incident's id", "inc_01m81r170vt72z173z69cgy8ce"));

export const listIncidentsQuery = once(() =>
  z.strictObject({
    limit: queryInteger({ min: 1, max: 200, default: 50, example: 2 }),
    cursor: cursorParam(),
    from: queryDateTime().meta({ description: "Appointments starting at or after this" }),
    to: queryDateTime().meta({ description: "Appointments starting before this" }),
    status: z.enum(INCIDENT_STATUSES).optional().meta({ example: "scheduled" }),
    accountId: queryText(LIMITS.name).meta({ example: "acct_demo0000000000000000000003" }),
    phone: queryText(LIMITS.phone).meta({
      description: "The caller's number (any spelling; without + it is read in your country)",
      example: "+19175550134",
    }),
    updatedSince: queryDateTime().meta({ description: "Incidents changed at or after this" }),
    technicianId: queryText(64).meta({
      description: "Visits assigned to this technician",
      example: "tech_demo0000000000000000000001",
    }),
    serviceId: queryText(64).meta({ description: "Visits of this service", example: "svc_demo0000000000000000000003" }),
  }),
);

export type IncidentQuery = z.output<ReturnType<typeof listIncidentsQuery>>;

export const cancelIncidentBody = once(() =>
  z.strictObject({
    reason: optionalText(LIMITS.reason).meta({
      description: "Why, for the back office",
      example: "Customer sold the house",
    }),
  }),
);

export const closeIncidentBody = once(() =>
  z.strictObject({
    outcome: z.enum(["completed", "no_show"]).meta({
      description: "completed: the visit was done; no_show: nobody was there to let the technician in",
    }),
    note: optionalText(LIMITS.notes).meta({ description: "For the back office", example: "Treated the garage" }),
  }),
);

export const rescheduleIncidentBody = once(() =>
  z.strictObject({
    dateTime: dateTime().meta({ description: "The start of the new slot" }),
  }),
);

const incidentFields = () => ({
  id: z.string().meta({ example: "inc_01m81r170vt72z173z69cgy8ce" }),
  status: z.enum(INCIDENT_STATUSES).meta({
    description: "A cancelled incident holds no slot; a closed one (completed, no_show) keeps its span",
  }),
  dateTime: isoOut().meta({ description: "Equals appointment.start" }),
  clientName: z.string(),
  insectName: z.string(),
  accountId: textOut(),
  phone: textOut().meta({ description: "The caller's number, E.164", example: "+19175550134" }),
  notes: textOut(),
  serviceId: textOut().meta({ description: "The service of the visit; null when none applied" }),
  technicianId: textOut().meta({ description: "The technician assigned; null in crew mode" }),
  postalCode: textOut().meta({ description: "Where the visit is, as given" }),
  appointment: appointment(),
  arrivalWindow: arrivalWindow(),
  createdAt: isoOut(),
  updatedAt: isoOut(),
  cancelledAt: isoOut().nullable(),
  cancelReason: textOut(),
  closedAt: isoOut().nullable().meta({ description: "When the office closed it (completed or no_show)" }),
  outcomeNote: textOut().meta({ description: "The office's note on closing it" }),
  planId: textOut().meta({ description: "The plan that booked it; null when not from a plan" }),
});

/** An incident as a resource (docs/api.md, "Incidents"). */
export const incident = once(() => z.object(incidentFields()).meta({ id: "Incident" }));

export type Incident = z.output<ReturnType<typeof incident>>;

/** create-incident's answer: the incident, its appointment with the places left. */
export const bookedIncident = once(() =>
  z
    .object({
      ...incidentFields(),
      appointment: appointment().extend({ remaining: slot().shape.remaining }),
      holdExpired: z.boolean().optional().meta({
        description: "With a holdId only: true when the hold had lapsed and the visit was booked without it",
      }),
    })
    .meta({ id: "BookedIncident", description: "The incident; its appointment also carries `remaining`" }),
);

export const incidentPage = once(() => pageOf(incident(), "IncidentPage"));
