import { ACCOUNT_EXAMPLE, type OperationExamples } from "./shared";

export const accountsExamples = {
  getAccount: {
    responseExample: ACCOUNT_EXAMPLE,
  },
} satisfies Record<string, OperationExamples>;
