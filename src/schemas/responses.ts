// Response bodies, as zod schemas: they describe the OpenAPI document and the
// MCP tools' output, and the integration tests check real responses against
// them so the two cannot drift. No request needs them, so they are built
// together on first use (the document, the tool list or a test), never at startup.
import * as z from "zod";
import { once } from "../lib/once";

const build = once(() => {
  const iso = z.string().meta({ format: "date-time", example: "2026-11-23T14:00:00.000Z" });
  const text = z.string().nullable();

  const problem = z
    .object({
      type: z.string().meta({ example: "/problems/validation_failed" }),
      title: z.string(),
      status: z.number().int(),
      code: z.string().meta({ example: "validation_failed" }),
      detail: z.string().optional(),
      requestId: z.string(),
      errors: z.array(z.object({ path: z.string(), code: z.string(), message: z.string() })).optional(),
    })
    .meta({ id: "Problem", description: "RFC 9457 problem details" });

  const address = {
    buildingLocation: text,
    street1: text,
    street2: text,
    city: text,
    postalCode: text,
    state: text,
    country: text,
  };

  const lead = z
    .object({
      id: z.string().meta({ example: "lead_01m81qn5xn9pmc0kvkej63j9x0" }),
      firstName: text,
      lastName: text,
      title: text,
      companyName: text,
      email: text,
      mobilePhone: text,
      businessPhone: text,
      leadSource: z.number().int().nullable(),
      accountType: z.number().int().nullable(),
      rating: z.number().int().nullable(),
      estimatedValue: z.number().nullable(),
      estimatedCloseDate: iso.nullable(),
      ...address,
      createdAt: iso,
    })
    .meta({ id: "Lead" });

  const contact = z
    .object({
      id: z.string().meta({ example: "ct_01m81qn5z3krebz4psy4c264e8" }),
      firstName: text,
      lastName: text,
      email: text,
      mobilePhone: text,
      businessPhone: text,
      accountId: text,
      ...address,
      createdAt: iso,
      updatedAt: iso,
    })
    .meta({ id: "Contact" });

  const contactPage = z
    .object({ data: z.array(contact), hasMore: z.boolean(), nextCursor: z.string().nullable() })
    .meta({ id: "ContactPage" });

  const account = z
    .object({
      id: z.string().meta({ example: "acct_demo0000000000000000000001" }),
      name: z.string(),
      accountType: z.number().int().nullable(),
      email: text,
      mobilePhone: text,
      businessPhone: text,
      ...address,
      createdAt: iso,
      updatedAt: iso,
    })
    .meta({ id: "Account" });

  const slot = z
    .object({
      start: iso,
      end: iso,
      localStart: z
        .string()
        .meta({ example: "2026-11-23T09:00:00-05:00", description: "Org wall-clock time with its offset" }),
      localEnd: z.string().meta({ example: "2026-11-23T10:00:00-05:00" }),
      remaining: z.number().int().meta({ description: "Places left: capacity minus bookings holding the slot" }),
    })
    .meta({ id: "Slot" });

  const reason = z
    .enum(["in_the_past", "beyond_horizon", "closed", "not_a_slot_start", "too_soon", "fully_booked"])
    .meta({ id: "UnavailableReason" });

  const availableAppointments = z
    .object({ timeZone: z.string().meta({ example: "America/New_York" }), slots: z.array(slot) })
    .meta({ id: "AvailableAppointments" });

  const bookingCheck = z
    .object({
      dateTime: iso,
      available: z.boolean(),
      reason: reason.nullable(),
      slot: slot.nullable(),
      alternatives: z.array(slot),
    })
    .meta({ id: "BookingCheck" });

  const { remaining: _, ...appointmentTimes } = slot.shape;
  const incidentFields = {
    id: z.string().meta({ example: "inc_01m81r170vt72z173z69cgy8ce" }),
    status: z.enum(["scheduled", "cancelled"]).meta({ description: "A cancelled incident holds no slot" }),
    dateTime: iso.meta({ description: "Equals appointment.start" }),
    clientName: z.string(),
    insectName: z.string(),
    accountId: text,
    phone: text.meta({ description: "The caller's number, E.164", example: "+19175550134" }),
    notes: text,
    appointment: z.object(appointmentTimes).meta({ id: "Appointment" }),
    createdAt: iso,
    updatedAt: iso,
    cancelledAt: iso.nullable(),
    cancelReason: text,
  };

  /** An incident as a resource (docs/api.md, "Incidents"). */
  const incident = z.object(incidentFields).meta({ id: "Incident" });

  /** create-incident's answer: the incident, its appointment with the places left. */
  const bookedIncident = z
    .object({ ...incidentFields, appointment: slot })
    .meta({ id: "BookedIncident", description: "The incident; its appointment also carries `remaining`" });

  const incidentPage = z
    .object({ data: z.array(incident), hasMore: z.boolean(), nextCursor: z.string().nullable() })
    .meta({ id: "IncidentPage" });

  const eventFields = {
    id: z
      .string()
      .meta({ example: "evt_01m81r170vt72z173z69cgy8ce", description: "Also the webhook-id of its deliveries" }),
    timestamp: iso.meta({ description: "When the change was made" }),
  };

  /** An event (docs/webhooks.md, "Events"): the resource as it was right after the change. */
  const event = z
    .discriminatedUnion("type", [
      z.object({ ...eventFields, type: z.literal("lead.created"), data: lead }),
      z.object({ ...eventFields, type: z.literal("contact.created"), data: contact }),
      z.object({ ...eventFields, type: z.enum(["incident.created", "incident.cancelled"]), data: incident }),
      z.object({
        ...eventFields,
        type: z.literal("incident.rescheduled"),
        data: incident,
        previous: z
          .object({ dateTime: iso, appointment: incidentFields.appointment })
          .meta({ description: "The appointment before the move" }),
      }),
    ])
    .meta({ id: "Event" });

  const eventPage = z
    .object({
      data: z.array(event),
      hasMore: z.boolean(),
      nextCursor: z.string().meta({ description: "Never null: call again with it later for the events after these" }),
    })
    .meta({ id: "EventPage" });

  const caller = z
    .object({
      phone: z.string().meta({ example: "+19175550134" }),
      contacts: z.array(contact),
      accounts: z.array(account),
      upcomingIncidents: z.array(incident),
    })
    .meta({ id: "Caller" });

  const incidentNotChangeable = problem
    .extend({ reason: z.enum(["cancelled", "in_the_past"]) })
    .meta({ id: "IncidentNotChangeableProblem" });

  const slotUnavailable = problem
    .extend({ reason, alternatives: z.array(slot) })
    .meta({ id: "SlotUnavailableProblem" });

  const health = z.object({ status: z.literal("ok") }).meta({ id: "Health" });

  return {
    problem,
    lead,
    contact,
    contactPage,
    account,
    slot,
    availableAppointments,
    bookingCheck,
    incident,
    bookedIncident,
    incidentPage,
    event,
    eventPage,
    caller,
    incidentNotChangeable,
    slotUnavailable,
    health,
  };
});

export const problem = () => build().problem;
export const lead = () => build().lead;
export const contact = () => build().contact;
export const contactPage = () => build().contactPage;
export const account = () => build().account;
export const slot = () => build().slot;
export const availableAppointments = () => build().availableAppointments;
export const bookingCheck = () => build().bookingCheck;
export const incident = () => build().incident;
export const bookedIncident = () => build().bookedIncident;
export const incidentPage = () => build().incidentPage;
export const event = () => build().event;
export const eventPage = () => build().eventPage;
export const caller = () => build().caller;
export const incidentNotChangeable = () => build().incidentNotChangeable;
export const slotUnavailable = () => build().slotUnavailable;
export const health = () => build().health;
