import * as z from "zod";
import { once } from "../lib/once";
import {
  addressFields,
  LIMITS,
  optionalCode,
  optionalDateOrDateTime,
  optionalEmail,
  optionalText,
  phoneFields,
} from "./common";

/** A lead (docs/api.md, "Leads"): nothing required, `{}` is a valid lead. */
export const createLeadBody = once(() =>
  z.strictObject({
    firstName: optionalText(LIMITS.name),
    lastName: optionalText(LIMITS.name),
    title: optionalText(LIMITS.name),
    companyName: optionalText(LIMITS.name),
    email: optionalEmail(),
    ...phoneFields(),
    leadSource: optionalCode(),
    accountType: optionalCode(),
    rating: optionalCode(),
    estimatedValue: z
      .number()
      .min(0)
      .nullish()
      .transform((v) => v ?? null),
    estimatedCloseDate: optionalDateOrDateTime(),
    ...addressFields(),
  }),
);

export type NewLead = z.output<ReturnType<typeof createLeadBody>>;
