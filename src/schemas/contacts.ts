import * as z from "zod/v4";
import { once } from "../lib/once";
import {
  addressFields,
  addressOut,
  cursorParam,
  isoOut,
  LIMITS,
  optionalEmail,
  optionalText,
  pageOf,
  phoneFields,
  queryDateTime,
  queryInteger,
  queryText,
  textOut,
} from "./common";

const REACHABLE_BY = ["firstName", "lastName", "email", "mobilePhone", "businessPhone"] as const;

/** A contact (docs/api.md, "Contacts"); a contact must carry a name or a way to reach it. */
export const createContactBody = once(() =>
  z
    .strictObject({
      firstName: optionalText(LIMITS.name),
      lastName: optionalText(LIMITS.name),
      email: optionalEmail(),
      ...phoneFields(),
      accountId: optionalText(LIMITS.name),
      ...addressFields(),
    })
    .superRefine((contact, ctx) => {
      if (REACHABLE_BY.every((field) => !contact[field])) {
        ctx.addIssue({
          code: "custom",
          path: [],
          message: `at least one of ${REACHABLE_BY.join(", ")} is required`,
          params: { code: "required_one_of" },
        });
      }
    }),
);

export type NewContact = z.output<ReturnType<typeof createContactBody>>;

export const listContactsQuery = once(() =>
  z.strictObject({
    limit: queryInteger({ min: 1, max: 200, default: 50, example: 2 }),
    cursor: cursorParam(),
    accountId: queryText(LIMITS.name).meta({ example: "acct_demo0000000000000000000003" }),
    email: queryText(LIMITS.email).meta({ example: "jane@example.com" }),
    phone: queryText(LIMITS.phone).meta({
      description:
        "Contacts whose mobilePhone or businessPhone is this number (any spelling; without + it is read in your country)",
      example: "+19175550199",
    }),
    updatedSince: queryDateTime(),
  }),
);

export type ContactFilters = Partial<
  Pick<z.output<ReturnType<typeof listContactsQuery>>, "accountId" | "email" | "updatedSince">
> & {
  /** E.164. */
  phone?: string;
};

export const contact = once(() =>
  z
    .object({
      id: z.string().meta({ example: "ct_01m81qn5z3krebz4psy4c264e8" }),
      firstName: textOut(),
      lastName: textOut(),
      email: textOut(),
      mobilePhone: textOut(),
      businessPhone: textOut(),
      accountId: textOut(),
      ...addressOut(),
      createdAt: isoOut(),
      updatedAt: isoOut(),
    })
    .meta({ id: "Contact" }),
);

export type Contact = z.output<ReturnType<typeof contact>>;

export const contactPage = once(() => pageOf(contact(), "ContactPage"));
