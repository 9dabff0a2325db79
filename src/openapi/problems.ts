// The schemas of what only the OpenAPI document describes: the problem
// documents (rendered by src/http/problem.ts from the catalogue in
// src/http/errors.ts) and /health. The generator and the tests read them; the
// worker, which serves the generated document, never builds them.
import * as z from "zod/v4";
import { once } from "../lib/once";
import { reason, slot } from "../schemas/slots";

export const problem = once(() =>
  z
    .object({
      type: z.string().meta({ example: "/problems/validation_failed" }),
      title: z.string(),
      status: z.number().int(),
      code: z.string().meta({ example: "validation_failed" }),
      detail: z.string().optional(),
      requestId: z.string(),
      errors: z.array(z.object({ path: z.string(), code: z.string(), message: z.string() })).optional(),
    })
    .meta({ id: "Problem", description: "RFC 9457 problem details" }),
);

export const health = once(() => z.object({ status: z.literal("ok") }).meta({ id: "Health" }));

export const slotUnavailable = once(() =>
  problem()
    .extend({
      reason: reason(),
      alternatives: z.array(slot()),
      holdExpired: z.literal(true).optional().meta({ description: "Present when the holdId sent had lapsed" }),
    })
    .meta({ id: "SlotUnavailableProblem" }),
);

export const incidentNotChangeable = once(() =>
  problem()
    .extend({ reason: z.enum(["cancelled", "in_the_past", "not_started", "closed"]) })
    .meta({ id: "IncidentNotChangeableProblem" }),
);
