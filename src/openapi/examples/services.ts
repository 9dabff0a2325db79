import { type OperationExamples, SERVICE_EXAMPLE } from "./shared";

export const servicesExamples = {
  listServices: {
    responseExample: { services: [SERVICE_EXAMPLE] },
  },
} satisfies Record<string, OperationExamples>;
