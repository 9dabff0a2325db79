import { getAccount } from "../db/accounts";
import { defineOperation } from "../http/operation";
import { ApiError } from "../http/problem";
import { once } from "../lib/once";
import { account } from "../schemas/accounts";
import { idParam } from "../schemas/common";

const accountIdParam = once(() => idParam("The account's id", "acct_demo0000000000000000000001"));

export const accountOperations = [
  defineOperation({
    operationId: "getAccount",
    tool: "get_account",
    method: "get",
    path: "/api/v1/accounts/{id}",
    tag: "Accounts",
    effect: "read",
    roles: ["office", "read"],
    summary: "Get an account",
    description:
      "One account of your organisation. An unknown id, a malformed id and another organisation's id all answer 404 account_not_found.",
    params: accountIdParam,
    response: account,
    errors: ["account_not_found"],
    handler: async (c, { params }) => {
      // Unknown, malformed and other orgs' ids all read as "no such account".
      const found = await getAccount(c.get("db"), c.get("orgId"), params.id);
      if (!found) throw new ApiError("account_not_found", "No account with this id");
      return c.json(found, 200);
    },
  }),
];
