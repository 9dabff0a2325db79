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
    example: {
      firstName: "Dana",
      lastName: "Ruiz",
      companyName: "Ruiz Deli",
      email: "dana@ruizdeli.example",
      leadSource: 2,
      estimatedValue: 1800,
      estimatedCloseDate: "2026-12-15",
    },
    response: lead,
    responseExample: {
      id: "lead_01m81qn5xn9pmc0kvkej63j9x0",
      firstName: "Dana",
      lastName: "Ruiz",
      title: null,
      companyName: "Ruiz Deli",
      email: "dana@ruizdeli.example",
      mobilePhone: null,
      businessPhone: null,
      leadSource: 2,
      accountType: null,
      rating: null,
      estimatedValue: 1800,
      estimatedCloseDate: "2026-12-15T00:00:00.000Z",
      buildingLocation: null,
      street1: null,
      street2: null,
      city: null,
      postalCode: null,
      state: null,
      country: null,
      createdAt: "2026-11-23T15:04:05.123Z",
    },
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
