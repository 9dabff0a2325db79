// Plans under fuzzing (docs/api.md, "Plans"): the query strings of GET
// /api/v1/plans and the arguments of list_plans (limit, status, phone,
// accountId, a cursor that is never one of this list's, unknown and repeated
// parameters), the ids of GET /api/v1/plans/{id} and get_plan, and what each
// must answer against the fixture's plans as the answers so far left them.
import fc from "fast-check";
import { expect } from "vitest";
import { PLAN_STATUSES } from "../../../drizzle/schema";
import type { Answer, Fixture, PlanView } from "./harness";
import { type BodyVerdict, e164, type Named, textCode, type Verdict } from "./oracle";
import { junkPhone, junkString, junkValue, Sym, validPhone } from "./values";

export const PLAN_QUERY_FIELDS = ["limit", "cursor", "status", "phone", "accountId"];

const planValue = fc.oneof(
  { arbitrary: fc.constantFrom("active", "cancelled", "completed"), weight: 3 },
  { arbitrary: fc.constantFrom("ACTIVE", "canceled", "scheduled", "", " ", "active,cancelled"), weight: 1 },
);
const pair = fc.oneof(
  {
    arbitrary: fc.tuple(
      fc.constant("limit"),
      fc.oneof(fc.integer({ min: -2, max: 210 }).map(String), fc.constantFrom("", "1.5", "x", "007")),
    ),
    weight: 3,
  },
  { arbitrary: fc.tuple(fc.constant("status"), planValue), weight: 3 },
  {
    arbitrary: fc.tuple(
      fc.constant("phone"),
      fc.oneof(
        { arbitrary: fc.nat().map((n) => new Sym("ownPhone", n)), weight: 4 },
        { arbitrary: fc.nat().map((n) => new Sym("foreignPhone", n)), weight: 1 },
        { arbitrary: validPhone, weight: 1 },
        { arbitrary: fc.oneof(junkPhone, junkString), weight: 2 },
      ),
    ),
    weight: 3,
  },
  {
    arbitrary: fc.tuple(
      fc.constant("accountId"),
      fc.oneof(fc.constantFrom(new Sym("ownAccountId", 0), new Sym("foreignAccountId")), junkString),
    ),
    weight: 2,
  },
  {
    arbitrary: fc.tuple(fc.constant("cursor"), fc.oneof(fc.constant<unknown>(new Sym("incidentCursor")), junkString)),
    weight: 1,
  },
  { arbitrary: fc.tuple(fc.constantFrom("Status", "page", "orgId", "id", "__proto__", "x"), junkString), weight: 1 },
);

/** Query parameters of GET /api/v1/plans. */
export const planListCases = fc.array(pair, { maxLength: 4 });

/** list_plans tool arguments: the same pairs, some with values of other JSON types. */
export const planListArgCases = fc.array(
  fc.oneof(
    { arbitrary: pair, weight: 4 },
    { arbitrary: fc.tuple(fc.constantFrom(...PLAN_QUERY_FIELDS), junkValue), weight: 1 },
  ),
  { maxLength: 4 },
);

/** The verdict of one parameter's value, and the code a 422 must give it where the docs name one. */
function valueCheck(name: string, value: string): { verdict: Verdict; code?: string } {
  if (value.trim() === "")
    return ["cursor", "phone", "accountId"].includes(name)
      ? { verdict: "invalid", code: "empty_value" }
      : { verdict: "invalid" };
  switch (name) {
    case "limit":
      if (/^[1-9]\d*$/.test(value)) return { verdict: Number(value) <= 200 ? "valid" : "invalid" };
      return { verdict: /^\d+$/.test(value) && Number(value) >= 1 && Number(value) <= 200 ? "unknown" : "invalid" };
    case "status":
      if ((PLAN_STATUSES as readonly string[]).includes(value)) return { verdict: "valid" };
      return { verdict: value.trim() !== value ? "unknown" : "invalid" };
    case "phone": {
      const code = textCode(value, 40);
      if (code || value.trim().length > 40) return { verdict: "invalid", ...(code ? { code } : {}) };
      return e164(value) === null ? { verdict: "invalid", code: "invalid_phone" } : { verdict: "valid" };
    }
    case "accountId": {
      const code = textCode(value, 200);
      return code || value.trim().length > 200
        ? { verdict: "invalid", ...(code ? { code } : {}) }
        : { verdict: "valid" };
    }
    default:
      // No cursor sent here is one of this list's: invalid_cursor, once the rest is valid.
      return { verdict: value.trim() !== value ? "unknown" : "valid" };
  }
}

/** The verdict on a query of the plan list, and the filters it asks for when valid. */
export function planListVerdict(pairs: [string, string][]): BodyVerdict & { filters: Map<string, string> } {
  const byName = new Map<string, string[]>();
  for (const [name, value] of pairs) byName.set(name, [...(byName.get(name) ?? []), value]);
  const must: Named[] = [];
  let invalid = false;
  let unknown = false;
  for (const [name, values] of byName) {
    if (name === "") unknown = true;
    else if (!PLAN_QUERY_FIELDS.includes(name)) {
      must.push({ path: name, code: "unknown_field" });
      invalid = true;
    } else if (values.length > 1) {
      must.push({ path: name });
      invalid = true;
    } else {
      const check = valueCheck(name, values[0]!);
      if (check.verdict === "invalid") must.push(check.code ? { path: name, code: check.code } : { path: name });
      invalid ||= check.verdict === "invalid";
      unknown ||= check.verdict === "unknown";
    }
  }
  if (!invalid && !unknown && byName.has("cursor")) {
    must.push({ path: "cursor", code: "invalid_cursor" });
    invalid = true;
  }
  const filters = new Map([...byName].map(([name, values]) => [name, values[0]!.trim()]));
  return { verdict: invalid ? "invalid" : unknown ? "unknown" : "valid", must, may: new Set(byName.keys()), filters };
}

const newestFirst = (a: PlanView, b: PlanView) =>
  Date.parse(b.createdAt) - Date.parse(a.createdAt) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/** A page of the plan list: the fixture's plans under the filters, newest first, `limit` of them (default 50). */
export function expectPlanPage(answer: Answer, filters: Map<string, string>, fx: Fixture) {
  expect(answer.status, answer.text).toBe(200);
  const phone = filters.has("phone") ? e164(filters.get("phone")!) : undefined;
  const matching = [...fx.plans.values()]
    .filter(
      (plan) =>
        (!filters.has("status") || plan.status === filters.get("status")) &&
        (phone === undefined || plan.phone === phone) &&
        (!filters.has("accountId") || plan.accountId === filters.get("accountId")),
    )
    .sort(newestFirst);
  const limit = filters.has("limit") ? Number(filters.get("limit")) : 50;
  expect(answer.body.data).toEqual(matching.slice(0, limit));
  expect(answer.body.hasMore).toBe(matching.length > limit);
  expect(typeof answer.body.nextCursor === "string").toBe(matching.length > limit);
}

/** GET /api/v1/plans/{id} segments: the org's plans (maybe spoiled), another org's, unknown and junk ids. */
export const planCases = fc.record({
  segment: fc.oneof(
    { arbitrary: fc.nat().map((n) => new Sym("ownPlanId", n)), weight: 4 },
    { arbitrary: fc.nat().map((n) => new Sym("foreignPlanId", n)), weight: 1 },
    {
      arbitrary: fc.oneof(
        fc.constantFrom("plan_00000000000000000000000000", "cancel"),
        junkString.filter(
          (s) => !["", ".", ".."].includes(s) && !s.includes("/") && !s.includes("?") && !s.includes("#"),
        ),
      ),
      weight: 2,
    },
  ),
  variant: fc.constantFrom<"none" | "upper" | "space" | "suffix" | "truncate" | "prefix">(
    "none",
    "none",
    "none",
    "upper",
    "suffix",
    "truncate",
  ),
});

/** get_plan tool arguments: an id (own, foreign, junk of any type). */
export const planArgCases = fc.oneof(
  fc.nat().map((n) => new Sym("ownPlanId", n)),
  fc.nat().map((n) => new Sym("foreignPlanId", n)),
  junkValue.filter((v) => !["", ".", ".."].includes(v as string)),
);

/** 200 with exactly this plan as it is now for one of the org's own ids; any other id is a 404. */
export function expectPlanAnswer(answer: Answer, sentId: string | null, fx: Fixture) {
  const own = sentId === null ? undefined : fx.plans.get(sentId);
  if (!own) {
    expect(answer.status, answer.text).toBe(404);
    expect(["plan_not_found", "not_found", "validation_failed"]).toContain(answer.body.code);
    return;
  }
  expect(answer.status, answer.text).toBe(200);
  expect(answer.body).toEqual(own);
}
