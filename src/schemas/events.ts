import * as z from "zod";
import { EVENT_TYPES } from "../../drizzle/schema";
import { once } from "../lib/once";
import { cursorParam, queryInteger } from "./common";

export const listEventsQuery = once(() =>
  z.strictObject({
    limit: queryInteger({ min: 1, max: 200, default: 50, example: 2 }),
    cursor: cursorParam(),
    type: z.enum(EVENT_TYPES).optional().meta({ description: "Only events of this type", example: "incident.created" }),
  }),
);
