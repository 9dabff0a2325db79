import * as z from "zod/v4";
import { once } from "../lib/once";
import {
  addressFields,
  addressOut,
  isoOut,
  LIMITS,
  optionalCode,
  optionalDateOrDateTime,
  optionalEmail,
  optionalText,
  phoneFields,
  textOut,
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

export const lead = once(() =>
  z
    .object({
      id: z.string().meta({ example: "lead_01m81qn5xn9pmc0kvkej63j9x0" }),
      firstName: textOut(),
      lastName: textOut(),
      title: textOut(),
      companyName: textOut(),
      email: textOut(),
      mobilePhone: textOut(),
      businessPhone: textOut(),
      leadSource: z.number().int().nullable(),
      accountType: z.number().int().nullable(),
      rating: z.number().int().nullable(),
      estimatedValue: z.number().nullable(),
      estimatedCloseDate: isoOut().nullable(),
      ...addressOut(),
      createdAt: isoOut(),
    })
    .meta({ id: "Lead" }),
);

export type Lead = z.output<ReturnType<typeof lead>>;
