// Response bodies, as zod schemas: they describe the OpenAPI document, and the
// integration tests check real responses against them so the two cannot drift.
import { z } from "zod";

const iso = z.string().meta({ format: "date-time", example: "2026-11-23T14:00:00.000Z" });
const text = z.string().nullable();

export const problem = z
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

export const lead = z
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

export const contact = z
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

export const contactPage = z
  .object({ data: z.array(contact), hasMore: z.boolean(), nextCursor: z.string().nullable() })
  .meta({ id: "ContactPage" });

export const account = z
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

export const slot = z
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

export const availableAppointments = z
  .object({ timeZone: z.string().meta({ example: "America/New_York" }), slots: z.array(slot) })
  .meta({ id: "AvailableAppointments" });

export const bookingCheck = z
  .object({
    dateTime: iso,
    available: z.boolean(),
    reason: reason.nullable(),
    slot: slot.nullable(),
    alternatives: z.array(slot),
  })
  .meta({ id: "BookingCheck" });

export const incident = z
  .object({
    id: z.string().meta({ example: "inc_01m81r170vt72z173z69cgy8ce" }),
    dateTime: iso,
    clientName: z.string(),
    insectName: z.string(),
    accountId: text,
    appointment: slot,
    createdAt: iso,
  })
  .meta({ id: "Incident" });

export const slotUnavailable = problem
  .extend({ reason, alternatives: z.array(slot) })
  .meta({ id: "SlotUnavailableProblem" });

export const health = z.object({ status: z.literal("ok") }).meta({ id: "Health" });
