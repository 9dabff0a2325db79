import * as z from "zod/v4";
import { CHANNELS, EVENT_TYPES, KEY_ROLES } from "../../drizzle/schema";
import { once } from "../lib/once";
import { cursorParam, isoOut, queryInteger } from "./common";
import { contact } from "./contacts";
import { incident } from "./incidents";
import { lead } from "./leads";
import { plan } from "./plans";
import { appointment } from "./slots";

export const listEventsQuery = once(() =>
  z.strictObject({
    limit: queryInteger({ min: 1, max: 200, default: 50, example: 2 }),
    cursor: cursorParam(),
    type: z.enum(EVENT_TYPES).optional().meta({ description: "Only events of this type", example: "incident.created" }),
  }),
);

/** Who made a change (docs/api.md, "Who made each change"). */
const actor = () =>
  z
    .object({
      keyId: z
        .string()
        .nullable()
        .meta({ description: "The API key's id; null for the admin CLI, the cron and plans" }),
      role: z.enum(KEY_ROLES).nullable().meta({ description: "The key's role; null without a key" }),
      channel: z.enum(CHANNELS).meta({ description: "How the change reached the API (ElevenLabs calls are http)" }),
      callId: z.string().nullable().meta({ description: "The voice platform's call id (or X-Call-Id), else null" }),
      callerPhone: z
        .string()
        .nullable()
        .meta({ description: "The caller's number (E.164) the platform reported, else null" }),
    })
    .meta({ description: "Who made the change: link a booking to the call, and its recording, that made it" });

/** An event (docs/webhooks.md, "Events"): the resource as it was right after the change. */
export const event = once(() => {
  const fields = {
    id: z
      .string()
      .meta({ example: "evt_01m81r170vt72z173z69cgy8ce", description: "Also the webhook-id of its deliveries" }),
    timestamp: isoOut().meta({ description: "When the change was made" }),
    actor: actor(),
  };
  return z
    .discriminatedUnion("type", [
      z.object({ ...fields, type: z.literal("lead.created"), data: lead() }),
      z.object({ ...fields, type: z.literal("contact.created"), data: contact() }),
      z.object({
        ...fields,
        type: z.enum(["incident.created", "incident.cancelled", "incident.completed", "incident.no_show"]),
        data: incident(),
      }),
      z.object({ ...fields, type: z.enum(["plan.created", "plan.cancelled"]), data: plan() }),
      z.object({
        ...fields,
        type: z.literal("plan.visit_unplaced"),
        data: plan()
          .extend({ dueDate: z.string().meta({ description: "The local date the unplaced visit was due" }) })
          .meta({ description: "The plan after the decision, and the due date of the visit nothing could take" }),
      }),
      z.object({
        ...fields,
        type: z.literal("incident.rescheduled"),
        data: incident(),
        previous: z
          .object({
            dateTime: isoOut(),
            appointment: appointment(),
            technicianId: z
              .string()
              .optional()
              .meta({ description: "The technician before the move, when the move changed it" }),
          })
          .meta({ description: "The appointment before the move" }),
      }),
      z.object({
        ...fields,
        type: z.literal("incident.reassigned"),
        data: incident(),
        previous: z
          .object({ technicianId: z.string().nullable() })
          .meta({ description: "The technician an operator moved the visit from" }),
      }),
    ])
    .meta({ id: "Event" });
});

export const eventPage = once(() =>
  z
    .object({
      data: z.array(event()),
      hasMore: z.boolean(),
      nextCursor: z.string().meta({ description: "Never null: call again with it later for the events after these" }),
    })
    .meta({ id: "EventPage" }),
);
