import * as z from "zod/v4";
import { once } from "../lib/once";
import { account } from "./accounts";
import { callersPhone, dateTime, isoOut, LIMITS, optionalText, requiredText } from "./common";
import { contact } from "./contacts";
import { holdIdField } from "./holds";
import { incident } from "./incidents";
import { plan } from "./plans";
import { visitFields } from "./services";
import { reason, slot } from "./slots";

/** What a caller may say the visit is for: it chooses the service when serviceId is absent. */
const insectName = () =>
  optionalText(LIMITS.name).meta({
    description: "What the caller said (e.g. termites): chooses the service by its keywords",
    example: "termites",
  });

export const availableAppointmentsBody = once(() =>
  z.strictObject({
    dateTime: dateTime(),
    ...visitFields(),
    insectName: insectName(),
    limit: z
      .number()
      .int()
      .min(1)
      .max(100)
      .nullish()
      .transform((v) => v ?? 10),
  }),
);

export const bookingCheckBody = once(() =>
  z.strictObject({ dateTime: dateTime(), ...visitFields(), insectName: insectName() }),
);

export const createIncidentBody = once(() =>
  z.strictObject({
    dateTime: dateTime(),
    clientName: requiredText(LIMITS.name),
    insectName: requiredText(LIMITS.name),
    phone: optionalText(LIMITS.phone).meta({
      description: "The caller's number, so that find-caller finds the booking; stored as E.164",
      example: "+1 917 555 0134",
    }),
    notes: optionalText(LIMITS.notes).meta({ description: "Address, gate code, what the caller saw" }),
    ...visitFields(),
    holdId: holdIdField(),
  }),
);

export const findCallerBody = once(() =>
  z.strictObject({
    phone: callersPhone(
      "The caller's number (caller ID); without + it is read in your organisation's country. Required, except with an agent key: it is then the call's caller",
    ),
  }),
);

export const availableAppointments = once(() =>
  z
    .object({ timeZone: z.string().meta({ example: "America/New_York" }), slots: z.array(slot()) })
    .meta({ id: "AvailableAppointments" }),
);

export const bookingCheck = once(() =>
  z
    .object({
      dateTime: isoOut(),
      available: z.boolean(),
      reason: reason().nullable(),
      slot: slot().nullable(),
      alternatives: z.array(slot()),
    })
    .meta({ id: "BookingCheck" }),
);

export const caller = once(() =>
  z
    .object({
      phone: z.string().meta({ example: "+19175550134" }),
      contacts: z.array(contact()),
      accounts: z.array(account()),
      upcomingIncidents: z.array(incident()),
      plans: z.array(plan()).meta({ description: "The caller's active plans, newest first, at most 10" }),
    })
    .meta({ id: "Caller" }),
);
