import * as z from "zod/v4";
import { once } from "../lib/once";
import {
  addressFields,
  addressOut,
  isoOut,
  LIMITS,
  optionalCode,
  optionalEmail,
  phoneFields,
  requiredText,
  textOut,
} from "./common";

/** One account of an `accounts import` file (accounts are created by operators only). */
export const importAccount = once(() =>
  z.strictObject({
    name: requiredText(LIMITS.name),
    accountType: optionalCode(),
    email: optionalEmail(),
    ...phoneFields(),
    ...addressFields(),
  }),
);

export type NewAccount = z.output<ReturnType<typeof importAccount>>;

export const account = once(() =>
  z
    .object({
      id: z.string().meta({ example: "acct_demo0000000000000000000001" }),
      name: z.string(),
      accountType: z.number().int().nullable(),
      email: textOut(),
      mobilePhone: textOut(),
      businessPhone: textOut(),
      ...addressOut(),
      createdAt: isoOut(),
      updatedAt: isoOut(),
    })
    .meta({ id: "Account" }),
);

export type Account = z.output<ReturnType<typeof account>>;
