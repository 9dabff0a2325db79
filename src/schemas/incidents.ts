import * as z from "zod";
import { INCIDENT_STATUSES } from "../../drizzle/schema";
import { once } from "../lib/once";
import { cursorParam, dateTime, idParam, LIMITS, optionalText, queryDateTime, queryInteger, queryText } from "./common";

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

export const rescheduleIncidentBody = once(() =>
  z.strictObject({
    dateTime: dateTime().meta({ description: "The start of the new slot" }),
  }),
);
