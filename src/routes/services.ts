// Services (docs/api.md, "Services and technicians"): what an agent may book.
import { serviceView } from "../db/catalogue";
import { defineOperation } from "../http/operation";
import { serviceList } from "../schemas/services";

export const serviceOperations = [
  defineOperation({
    operationId: "listServices",
    tool: "list_services",
    method: "get",
    path: "/api/v1/services",
    tag: "Services",
    effect: "read",
    roles: ["office", "agent", "read"],
    summary: "List the services an agent may book",
    description:
      "The organisation's active services (job types), ordered by name: how long each visit takes, its arrival window, and the keywords that map what a caller says to it. Pass a service's id as `serviceId` to the ai-agent operations; without one, `insectName` picks the service by keyword, else the default service applies.",
    response: serviceList,
    handler: (c) =>
      c.json(
        {
          services: c
            .get("org")
            .catalogue.services.filter((s) => s.active)
            .map(serviceView),
        },
        200,
      ),
  }),
];
