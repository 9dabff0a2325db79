import type { OperationExamples } from "./shared";

export const leadsExamples = {
  createLead: {
    example: {
      firstName: "Dana",
      lastName: "Ruiz",
      companyName: "Ruiz Deli",
      email: "dana@ruizdeli.example",
      leadSource: 2,
      estimatedValue: 1800,
      estimatedCloseDate: "2026-12-15",
    },
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
  },
} satisfies Record<string, OperationExamples>;
