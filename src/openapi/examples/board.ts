import { BOARD_EXAMPLE, type OperationExamples } from "./shared";

export const boardExamples = {
  getBoard: {
    responseExample: BOARD_EXAMPLE,
  },
} satisfies Record<string, OperationExamples>;
