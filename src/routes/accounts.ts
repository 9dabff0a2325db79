import { getAccount } from "../db/accounts";
import { defineOperation } from "../http/operation";
import { ApiError } from "../http/problem";
import { once } from "../lib/once";
import { idParam } from "../schemas/common";
import { account } from "../schemas/responses";

const accountIdParam = once(() => idParam("The account's id", "acct_demo0000000000000000000001"));

export const ACCOUNT_EXAMPLE = {
  id: "acct_demo0000000000000000000001",
  name: "Acme Apartments",
  accountType: 1,
  email: "office@acme-apartments.example",
  mobilePhone: null,
  businessPhone: "+1 212 555 0100",
  buildingLocation: null,
  street1: "12 Elm Street",
  street2: null,
  city: "New York",
  postalCode: "10001",
  state: "NY",
  country: "US",
  createdAt: "2026-11-23T15:04:05.123Z",
  updatedAt: "2026-11-23T15:04:05.123Z",
};

export const accountOperations = [
  defineOperation({
    operationId: "getAccount",
    tool: "get_account",
    method: "get",
    path: "/api/v1/accounts/{id}",
    tag: "Accounts",
    effect: "read",
    summary: "Get an account",
    description:
      "One account of your organisation. An unknown id, a malformed id and another organisation's id all answer 404 account_not_found.",
    params: accountIdParam,
    response: account,
    responseExample: ACCOUNT_EXAMPLE,
    errors: ["account_not_found"],
    handler: async (c, { params }) => {
      // Unknown, malformed and other orgs' ids all read as "no such account".
      const found = await getAccount(c.var.db, c.var.orgId, params.id);
      if (!found) throw new ApiError("account_not_found", "No account with this id");
      return c.json(found, 200);
    },
  }),
];
