// Service plans (docs/api.md, "Plans"): create-plan's body (create-incident's
// and how often), the plan as a resource, its list's query, cancel's body.
import * as z from "zod/v4";
import { PLAN_STATUSES, PLAN_UNITS } from "../../drizzle/schema";
import { once } from "../lib/once";
import { createIncidentBody } from "./ai-agent";
import { cursorParam, idParam, isoOut, LIMITS, optionalText, pageOf, queryInteger, queryText, textOut } from "./common";
import { bookedIncident } from "./incidents";

export const planIdParam = once(() => idParam("The plan's id", "plan_01m81r170vt72z173z69cgy8ce"));

const every = () =>
  z
    .strictObject({
      count: z.number().int().min(1).max(12).meta({ example: 3 }),
      unit: z.enum(PLAN_UNITS).meta({ example: "month" }),
    })
    .meta({ description: "How often: every `count` weeks or months (1–12)" });

export const createPlanBody = once(() =>
  createIncidentBody().extend({
    every: every(),
    visits: z
      .number()
      .int()
      .min(2)
      .max(52)
      .nullish()
      .transform((v) => v ?? null)
      .meta({ description: "The plan's visits in all, the first included (2–52); absent: until cancelled" }),
  }),
);

export const listPlansQuery = once(() =>
  z.strictObject({
    limit: queryInteger({ min: 1, max: 200, default: 50, example: 2 }),
    cursor: cursorParam(),
    status: z.enum(PLAN_STATUSES).optional().meta({ example: "active" }),
    phone: queryText(LIMITS.phone).meta({
      description: "The caller's number (any spelling; without + it is read in your country)",
      example: "+19175550134",
    }),
    accountId: queryText(LIMITS.name).meta({ example: "acct_demo0000000000000000000003" }),
  }),
);

export const cancelPlanBody = once(() =>
  z.strictObject({
    reason: optionalText(LIMITS.reason).meta({ description: "Why, for the back office", example: "Moved away" }),
    cancelVisits: z
      .boolean()
      .nullish()
      .transform((v) => v ?? true)
      .meta({ description: "Also cancel its scheduled visits not started yet (default true)" }),
  }),
);

/** A plan as a resource (docs/api.md, "Plans"). */
export const plan = once(() =>
  z
    .object({
      id: z.string().meta({ example: "plan_01m81r170vt72z173z69cgy8ce" }),
      status: z.enum(PLAN_STATUSES).meta({
        description: "active; completed once every one of `visits` is decided; cancelled",
      }),
      every: z.object({ count: z.number().int(), unit: z.enum(PLAN_UNITS) }),
      visits: z.number().int().nullable().meta({ description: "Visits in all; null: until cancelled" }),
      serviceId: textOut(),
      postalCode: textOut(),
      clientName: z.string(),
      insectName: z.string(),
      phone: textOut().meta({ description: "The caller's number, E.164" }),
      accountId: textOut(),
      notes: textOut(),
      technicianId: textOut().meta({ description: "The first visit's technician: the next visits prefer them" }),
      localTime: z.string().meta({ description: "The first visit's local start time (HH:MM)", example: "09:00" }),
      firstVisitDate: z.string().meta({ description: "The first visit's local date", example: "2026-12-01" }),
      nextDueDate: textOut().meta({
        description: "The local date the next undecided visit is due; null unless active",
        example: "2027-03-01",
      }),
      visitsMade: z
        .number()
        .int()
        .meta({ description: "Visits decided so far (booked or unplaced), the first included" }),
      createdAt: isoOut(),
      updatedAt: isoOut(),
      cancelledAt: isoOut().nullable(),
      cancelReason: textOut(),
    })
    .meta({ id: "Plan" }),
);

export type PlanOut = z.output<ReturnType<typeof plan>>;

/** create-plan's answer: the plan after its first visit, and that visit as create-incident answers it. */
export const createdPlan = once(() =>
  z
    .object({
      plan: plan(),
      incident: bookedIncident().omit({ holdExpired: true }),
      holdExpired: z.boolean().optional().meta({
        description: "With a holdId only: true when the hold had lapsed and the first visit was booked without it",
      }),
    })
    .meta({ id: "CreatedPlan" }),
);

export const planPage = once(() => pageOf(plan(), "PlanPage"));
