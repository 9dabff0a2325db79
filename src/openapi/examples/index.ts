// The operations' examples in the OpenAPI document, keyed by operationId. They
// live apart from the declarations (src/routes/) because only the document
// shows them: the worker serves the document generated ahead of time
// (`npm run openapi`), so none of this is in its bundle.
import { accountsExamples } from "./accounts";
import { aiAgentExamples } from "./ai-agent";
import { boardExamples } from "./board";
import { contactsExamples } from "./contacts";
import { contextExamples } from "./context";
import { eventsExamples } from "./events";
import { incidentsExamples } from "./incidents";
import { leadsExamples } from "./leads";
import { plansExamples } from "./plans";
import { servicesExamples } from "./services";
import type { OperationExamples } from "./shared";

export type { OperationExamples } from "./shared";

export const EXAMPLES: Readonly<Record<string, OperationExamples>> = {
  ...contextExamples,
  ...aiAgentExamples,
  ...servicesExamples,
  ...leadsExamples,
  ...contactsExamples,
  ...accountsExamples,
  ...incidentsExamples,
  ...plansExamples,
  ...eventsExamples,
  ...boardExamples,
};

/** The examples of an operation; every operation has a 200 example (test/integration/openapi/document.node.test.ts). */
export function examplesOf(operationId: string): OperationExamples {
  const examples = EXAMPLES[operationId];
  if (!examples) throw new Error(`no examples for operation ${operationId} (src/openapi/examples/)`);
  return examples;
}
