import { z } from "zod";
import { dateTime, LIMITS, requiredText } from "./common";

export const availableAppointmentsBody = z.strictObject({
  dateTime,
  limit: z
    .number()
    .int()
    .min(1)
    .max(100)
    .nullish()
    .transform((v) => v ?? 10),
});

export const bookingCheckBody = z.strictObject({ dateTime });

export const createIncidentBody = z.strictObject({
  dateTime,
  clientName: requiredText(LIMITS.name),
  insectName: requiredText(LIMITS.name),
});
