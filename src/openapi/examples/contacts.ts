import { CONTACT_EXAMPLE, type OperationExamples } from "./shared";

export const contactsExamples = {
  createContact: {
    example: {
      firstName: "Jane",
      lastName: "Homeowner",
      email: "jane@example.com",
      accountId: "acct_demo0000000000000000000003",
    },
    responseExample: CONTACT_EXAMPLE,
  },
  listContacts: {
    responseExample: {
      data: [CONTACT_EXAMPLE],
      hasMore: true,
      nextCursor: "eyJ0IjoxNzk1NDU0MjQ1MTIzLCJpIjoiY3RfMDFtODFxbjV6M2tyZWJ6NHBzeTRjMjY0ZTgifQ.ypeBEsobvcr6wjGzmiPcTQ",
    },
  },
} satisfies Record<string, OperationExamples>;
