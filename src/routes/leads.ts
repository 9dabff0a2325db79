import { createLead } from "../db/leads";
import { defineOperation } from "../http/operation";
import { writtenResponse } from "../http/written";
import { createLeadBody, lead } from "../schemas/leads";

export const leadOperations = [
  defineOperation({
    operationId: "createLead",
    tool: "create_lead",
    method: "post",
    path: "/api/v1/leads",
    tag: "Leads",
    effect: "create",
    roles: ["office", "agent"],
    summary: "Create a lead",
    description: "Stores a lead in the sales pipeline. No field is required; `{}` is a valid lead.",
    body: createLeadBody,
    response: lead,
    handler: async (c, { body }) => {
      const written = await createLead(c.get("db"), {
        orgId: c.get("orgId"),
        country: c.get("org").country,
        lead: body,
        now: Date.now(),
        idempotencyKey: c.get("idempotencyKey"),
        actor: c.get("actor"),
      });
      return writtenResponse(c, written);
    },
  }),
];
