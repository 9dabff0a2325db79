// Every operation of the API, in the order the OpenAPI document and the MCP
// tool list present them. A new operation is declared in its resource's file
// and listed there; nothing else changes.

import type { Operation } from "../http/operation";
import { accountOperations } from "./accounts";
import { aiAgentOperations } from "./ai-agent";
import { boardOperations } from "./board";
import { contactOperations } from "./contacts";
import { contextOperations } from "./context";
import { eventOperations } from "./events";
import { incidentOperations } from "./incidents";
import { leadOperations } from "./leads";
import { planOperations } from "./plans";
import { serviceOperations } from "./services";

export const OPERATIONS: readonly Operation[] = [
  ...contextOperations,
  ...aiAgentOperations,
  ...serviceOperations,
  ...leadOperations,
  ...contactOperations,
  ...accountOperations,
  ...incidentOperations,
  ...planOperations,
  ...eventOperations,
  ...boardOperations,
];
