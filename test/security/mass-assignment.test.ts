// Mass assignment (issue 6, contract 2 and 3): no body or query can set what
// the server owns. Every POST operation, every create tool of /mcp and the
// contact list's query get, one at a time and then all at once, every field
// the contract does not give them: ids, org ids, timestamps, key material,
// status, and every column name of drizzle/schema.ts (both spellings). Each
// is refused as 422 unknown_field naming exactly the injected fields, and D1
// shows nothing stored: no row count of the org or of the org it names
// changes, and no row anywhere carries an injected id.
import { env } from "cloudflare:test";
import { getTableColumns } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import * as schema from "../../drizzle/schema";
import type { ReadResponse } from "../support/http";
import { mcpCall, toolAnswer } from "../support/mcp";
import { expectProblem } from "../support/problem";
import { call } from "../support/request";
import { addAccount, newTenant, openTenant, type Tenant } from "../support/tenants";
import { slotIn } from "../support/time";

const ADDRESS = ["buildingLocation", "street1", "street2", "city", "postalCode", "state", "country"];
const PHONES = ["mobilePhone", "businessPhone"];

/** The fields the contract gives each operation (spec 2.1, 2.2; contract 4 and 5) — written out, not read from the schemas under test. */
const OPERATIONS = [
  {
    name: "POST /api/v1/leads",
    path: "/api/v1/leads",
    tool: "create_lead",
    allowed: [
      "firstName",
      "lastName",
      "title",
      "companyName",
      "email",
      ...PHONES,
      "leadSource",
      "accountType",
      "rating",
      "estimatedValue",
      "estimatedCloseDate",
      ...ADDRESS,
    ],
    body: () => ({ firstName: "Mass", lastName: "Assignment" }),
  },
  {
    name: "POST /api/v1/contacts",
    path: "/api/v1/contacts",
    tool: "create_contact",
    allowed: ["firstName", "lastName", "email", ...PHONES, "accountId", ...ADDRESS],
    body: () => ({ firstName: "Mass", accountId: accountId }),
  },
  {
    name: "POST /api/v1/ai-agent/create-incident",
    path: "/api/v1/ai-agent/create-incident",
    tool: "create_incident",
    allowed: ["dateTime", "clientName", "insectName"],
    body: () => ({ dateTime: slotIn(30), clientName: "Mass Client", insectName: "Ants" }),
  },
  {
    name: "POST /api/v1/ai-agent/available-appointments",
    path: "/api/v1/ai-agent/available-appointments",
    tool: "find_available_appointments",
    allowed: ["dateTime", "limit"],
    body: () => ({ dateTime: slotIn(30), limit: 1 }),
  },
  {
    name: "POST /api/v1/ai-agent/is-booking-available",
    path: "/api/v1/ai-agent/is-booking-available",
    tool: "check_booking_availability",
    allowed: ["dateTime"],
    body: () => ({ dateTime: slotIn(30) }),
  },
];

const TABLES = [
  schema.orgs,
  schema.apiKeys,
  schema.accounts,
  schema.contacts,
  schema.leads,
  schema.incidents,
  schema.idempotencyKeys,
];
/** Every column of the schema, as its TypeScript key and as its SQL name. */
const COLUMNS = [
  ...new Set(
    TABLES.flatMap((table) => Object.entries(getTableColumns(table)).flatMap(([key, column]) => [key, column.name])),
  ),
];
const SERVER_OWNED = [
  "id",
  "orgId",
  "org_id",
  "organizationId",
  "tenantId",
  "OrgId",
  "ORG_ID",
  "X-ORG-ID",
  "createdAt",
  "updatedAt",
  "created_at",
  "updated_at",
  "keyHash",
  "key_hash",
  "apiKey",
  "api_key",
  "X-API-KEY",
  "accountId",
  "status",
  "revokedAt",
  "schedule",
  "timeZone",
  "capacity",
  "role",
  "isAdmin",
  "__proto__",
  "constructor",
  "prototype",
];
const INJECTED = [...new Set([...SERVER_OWNED, ...COLUMNS])];

let attacker: Tenant;
let victim: Tenant;
let accountId: string;
const marker = `inj${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;

/** A plausible value for a field of that name: the victim's org id, an id of ours, a time, a key, a number or a string. */
function valueFor(field: string): unknown {
  if (/^(x-)?org(_?id|anization_?id)?$/i.test(field) || /^tenant/i.test(field)) return victim.orgId;
  if (/^id$/i.test(field)) return `lead_${marker}`;
  if (/_?id$/i.test(field)) return `acct_${marker}`;
  if (/(at|_at)$/i.test(field)) return 0;
  if (/key|hash/i.test(field)) return `fsk_${marker}${"0".repeat(12)}`;
  if (/capacity|minutes|status|type|rating|source/i.test(field)) return 1000;
  if (field === "__proto__" || field === "prototype") return { orgId: victim.orgId, id: `lead_${marker}` };
  return `${marker}-${field}`;
}

const withField = (body: object, field: string, value: unknown) => {
  const out = { ...body };
  Object.defineProperty(out, field, { value, enumerable: true, configurable: true, writable: true });
  return out;
};

const COUNT_TABLES = ["api_keys", "accounts", "contacts", "leads", "incidents", "idempotency_keys"];
const COUNTS = `SELECT (SELECT count(*) FROM orgs), ${[1, 2].flatMap((n) => COUNT_TABLES.map((t) => `(SELECT count(*) FROM ${t} WHERE org_id = ?${n})`)).join(", ")}`;
const counts = async () => (await env.DB.prepare(COUNTS).bind(attacker.orgId, victim.orgId).raw())[0];

/** No row of any table carries the marker of the injected values. */
async function expectNoInjectedRow() {
  for (const table of ["orgs", "api_keys", "accounts", "contacts", "leads", "incidents", "idempotency_keys"]) {
    const { results } = await env.DB.prepare(`SELECT * FROM ${table}`).all();
    expect(JSON.stringify(results).includes(marker), `${table} holds an injected value`).toBe(false);
  }
}

const expectUnknownFields = (
  body: { code?: string; errors?: { path: string; code: string }[] },
  fields: string[],
  text: string,
) => {
  expect(body.code, text).toBe("validation_failed");
  expect(
    [...(body.errors ?? [])].map(({ path, code }) => ({ path, code })).sort((x, y) => x.path.localeCompare(y.path)),
    text,
  ).toEqual(fields.map((path) => ({ path, code: "unknown_field" })).sort((x, y) => x.path.localeCompare(y.path)));
};

beforeAll(async () => {
  attacker = await openTenant("Mass assignment", { capacity: 100 });
  victim = await newTenant("Mass assignment victim");
  accountId = (await addAccount(attacker, "Mass Account")).id;
});

/** The attacker's request headers beside its credentials: an Idempotency-Key, if any. */
const headers = (key?: string): Record<string, string> => (key ? { "Idempotency-Key": key } : {});

const TOOL_FIELDS = INJECTED;
const QUERY_FIELDS = ["orgId", "org_id", "id", "createdAt", "keyHash", "apiKey", "status", "email_lower", "X-ORG-ID"];

const sizes = OPERATIONS.map((op) => INJECTED.filter((field) => !op.allowed.includes(field)).length);
const HTTP_CASES = sizes.reduce((a, b) => a + b, 0) + OPERATIONS.length;
const MCP_CASES = OPERATIONS.map((op) => TOOL_FIELDS.filter((field) => !op.allowed.includes(field)).length).reduce(
  (a, b) => a + b,
  0,
);

describe(`mass assignment: ${INJECTED.length} server-owned names (${COLUMNS.length} column names) → ${HTTP_CASES} HTTP bodies, ${MCP_CASES} MCP calls, ${QUERY_FIELDS.length} list queries`, () => {
  it.each(OPERATIONS.map((op) => [op.name, op] as const))(
    "%s: the valid body alone is accepted (the control)",
    async (_name, op) => {
      const res = await call(attacker, op.path, { body: op.body() });
      expect(res.status, res.text).toBe(200);
    },
  );

  it.each(OPERATIONS.map((op, i) => [op.name, sizes[i], op] as const))(
    "%s refuses each of %i injected fields, storing nothing",
    async (_name, _n, op) => {
      const fields = INJECTED.filter((field) => !op.allowed.includes(field));
      for (const [i, field] of fields.entries()) {
        const before = await counts();
        // Every other request carries an Idempotency-Key: a refused request must not store that either.
        const res = await call(attacker, op.path, {
          headers: headers(i % 2 ? `mass-${marker}-${i}` : undefined),
          body: withField(op.body(), field, valueFor(field)),
        });
        expectProblem(res, 422, "validation_failed");
        expectUnknownFields(res.body, [field], `${field}: ${res.text}`);
        expect(await counts(), `${field} stored something`).toEqual(before);
      }
      await expectNoInjectedRow();
    },
  );

  it.each(OPERATIONS.map((op) => [op.name, op] as const))(
    "%s refuses all of them at once, naming every one",
    async (_name, op) => {
      const fields = INJECTED.filter((field) => !op.allowed.includes(field));
      const body = fields.reduce<object>((acc, field) => withField(acc, field, valueFor(field)), op.body());
      const before = await counts();
      const res = await call(attacker, op.path, { headers: headers(`mass-all-${marker}`), body });
      expectProblem(res, 422, "validation_failed");
      expectUnknownFields(res.body, fields, res.text);
      expect(await counts()).toEqual(before);
      await expectNoInjectedRow();
    },
  );

  it.each(OPERATIONS.map((op) => [op.tool, op] as const))(
    "MCP %s refuses each injected field as an isError 422, storing nothing",
    async (_tool, op) => {
      for (const field of TOOL_FIELDS.filter((f) => !op.allowed.includes(f))) {
        const before = await counts();
        const answer = toolAnswer(await mcpCall(attacker, op.tool, withField(op.body(), field, valueFor(field))));
        expect(answer.isError, field).toBe(true);
        expect(answer.status).toBe(422);
        expectUnknownFields(answer.body, [field], `${field}: ${JSON.stringify(answer.body)}`);
        expect(await counts(), `${field} stored something`).toEqual(before);
      }
      await expectNoInjectedRow();
    },
  );

  it.each(QUERY_FIELDS)(
    "GET /api/v1/contacts?%s=… → 422 unknown_field (a query cannot choose the org either)",
    async (field) => {
      const res: ReadResponse = await call(
        attacker,
        `/api/v1/contacts?${new URLSearchParams({ [field]: String(valueFor(field)) })}`,
      );
      expectProblem(res, 422, "validation_failed");
      expectUnknownFields(res.body, [field], res.text);
    },
  );
});
