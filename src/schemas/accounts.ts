import * as z from "zod";
import { once } from "../lib/once";
import { addressFields, LIMITS, optionalCode, optionalEmail, phoneFields, requiredText } from "./common";

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
