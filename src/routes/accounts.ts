import { z } from "zod";
import { getAccount } from "../db/accounts";
import { ApiError } from "../http/problem";
import { account } from "../schemas/responses";
import { defineOperation } from "./operation";

const accountIdParam = z.object({
  id: z.string().meta({ description: "The account's id", example: "acct_demo0000000000000000000001" }),
});

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
    errors: ["account_not_found"],
    handler: async (c, { params }) => {
      // Unknown, malformed and other orgs' ids all read as "no such account".
      const found = await getAccount(c.var.db, c.var.orgId, params.id);
      if (!found) throw new ApiError("account_not_found", "No account with this id");
      return c.json(found, 200);
    },
  }),
];
