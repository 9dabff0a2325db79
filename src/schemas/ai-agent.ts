import * as z from "zod";
import { once } from "../lib/once";
import { dateTime, LIMITS, optionalText, requiredText } from "./common";

export const availableAppointmentsBody = once(() =>
  z.strictObject({
    dateTime: dateTime(),
    limit: z
      .number()
      .int()
      .min(1)
      .max(100)
      .nullish()
      .transform((v) => v ?? 10),
  }),
);

export const bookingCheckBody = once(() => z.strictObject({ dateTime: dateTime() }));

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
  }),
);

export const findCallerBody = once(() =>
  z.strictObject({
    phone: requiredText(LIMITS.phone).meta({
      description: "The caller's number (caller ID); without + it is read in your organisation's country",
      example: "+19175550134",
    }),
  }),
);
