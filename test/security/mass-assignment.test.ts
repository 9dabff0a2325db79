// Mass assignment (docs/api.md, "Authentication" and "Validation"): no body or
// query can set what the server owns. Every POST operation (the creates, the
// reads with a body, find-caller, cancel and reschedule), each as an MCP tool
// too, and the queries of the three lists get, one at a time and then all at
// once, every field docs/api.md does not give them: ids, org ids, timestamps,
// key material, status, cancellation fields, and every column name of
// drizzle/schema.ts (both spellings). Each is refused as 422 unknown_field
// naming exactly the injected fields, and D1 shows nothing stored or changed:
// no row count of the org or of the org it names changes (its events included:
// a refused request records none), no incident of either changes, and no row
// anywhere carries an injected id.
import { env } from "cloudflare:test";
import { getTableColumns } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import * as schema from "../../drizzle/schema";
import { OPERATIONS as DECLARED } from "../../src/routes";
import type { ReadResponse } from "../support/http";
import { bookIncident } from "../support/incidents";
import { mcpCall, toolAnswer } from "../support/mcp";
import { expectProblem } from "../support/problem";
import { call } from "../support/request";
import { addAccount, openTenant, type Tenant } from "../support/tenants";
import { slotIn } from "../support/time";

const ADDRESS = ["buildingLocation", "street1", "street2", "city", "postalCode", "state", "country"];
const PHONES = ["mobilePhone", "businessPhone"];

/** The fields docs/api.md gives each operation — written out, not read from the schemas under test. */
const OPERATIONS: {
  name: string;
  /** The path sent (an incident's id filled in where the operation has one: another one for the control, so that the refused requests meet an incident they could change). */
  path: (control?: boolean) => string;
  tool: string;
  allowed: string[];
  body: () => Record<string, unknown>;
  /** The tool's arguments besides the body: the incident's `id` of an operation on one. */
  toolArgs?: () => Record<string, unknown>;
}[] = [
  {
    name: "POST /api/v1/leads",
    path: () => "/api/v1/leads",
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
    path: () => "/api/v1/contacts",
    tool: "create_contact",
    allowed: ["firstName", "lastName", "email", ...PHONES, "accountId", ...ADDRESS],
    body: () => ({ firstName: "Mass", accountId: accountId }),
  },
  {
    name: "POST /api/v1/ai-agent/create-incident",
    path: () => "/api/v1/ai-agent/create-incident",
    tool: "create_incident",
    allowed: ["dateTime", "clientName", "insectName", "phone", "notes"],
    body: () => ({
      dateTime: slotIn(30),
      clientName: "Mass Client",
      insectName: "Ants",
      phone: "+1 917 555 0134",
      notes: "Gate code 1",
    }),
  },
  {
    name: "POST /api/v1/ai-agent/available-appointments",
    path: () => "/api/v1/ai-agent/available-appointments",
    tool: "find_available_appointments",
    allowed: ["dateTime", "limit"],
    body: () => ({ dateTime: slotIn(30), limit: 1 }),
  },
  {
    name: "POST /api/v1/ai-agent/is-booking-available",
    path: () => "/api/v1/ai-agent/is-booking-available",
    tool: "check_booking_availability",
    allowed: ["dateTime"],
    body: () => ({ dateTime: slotIn(30) }),
  },
  {
    name: "POST /api/v1/ai-agent/find-caller",
    path: () => "/api/v1/ai-agent/find-caller",
    tool: "find_caller",
    allowed: ["phone"],
    body: () => ({ phone: "+1 917 555 0134" }),
  },
  {
    name: "POST /api/v1/incidents/{id}/cancel",
    path: (control) => `/api/v1/incidents/${control ? spareId : incidentId}/cancel`,
    tool: "cancel_incident",
    allowed: ["reason"],
    body: () => ({ reason: "Mass cancel" }),
    toolArgs: () => ({ id: incidentId }),
  },
  {
    name: "POST /api/v1/incidents/{id}/reschedule",
    path: (control) => `/api/v1/incidents/${control ? spareId : movedId}/reschedule`,
    tool: "reschedule_incident",
    allowed: ["dateTime"],
    body: () => ({ dateTime: slotIn(31) }),
    toolArgs: () => ({ id: movedId }),
  },
];

/** The list queries, with the filters docs/api.md gives them. */
const LISTS = [
  {
    path: "/api/v1/contacts",
    allowed: ["limit", "cursor", "accountId", "email", "phone", "updatedSince"],
  },
  {
    path: "/api/v1/incidents",
    allowed: ["limit", "cursor", "from", "to", "status", "accountId", "phone", "updatedSince"],
  },
  { path: "/api/v1/events", allowed: ["limit", "cursor", "type"] },
];

const TABLES = [
  schema.orgs,
  schema.apiKeys,
  schema.accounts,
  schema.contacts,
  schema.leads,
  schema.incidents,
  schema.idempotencyKeys,
  schema.events,
  schema.webhookEndpoints,
  schema.webhookSecrets,
  schema.webhookDeliveries,
  schema.webhookReplays,
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

let victim: Tenant;
// The org each test attacks from (one per operation: a single org would meet the rate limit) and its data:
// an account, the incident cancel is sent for and the one reschedule is sent for.
let attacker: Tenant;
let accountId: string;
let incidentId: string;
let movedId: string;
let spareId: string;
const attackers = new Map<
  string,
  { tenant: Tenant; accountId: string; incidentId: string; movedId: string; spareId: string }
>();

/** Attacks from the org of `name` (made on first use). */
async function attackFor(name: string) {
  let org = attackers.get(name);
  if (!org) {
    const tenant = await openTenant(`Mass assignment ${name}`, { capacity: 100 });
    org = {
      tenant,
      accountId: (await addAccount(tenant, "Mass Account")).id,
      incidentId: (await bookIncident(tenant)).id,
      movedId: (await bookIncident(tenant)).id,
      spareId: (await bookIncident(tenant)).id,
    };
    attackers.set(name, org);
  }
  ({ tenant: attacker, accountId, incidentId, movedId, spareId } = org);
}
const marker = `inj${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;

/** A plausible value for a field of that name: the victim's org id, an id of ours, a time, a key, a number or a string. */
function valueFor(field: string): unknown {
  if (/^(x-)?org(_?id|anization_?id)?$/i.test(field) || /^tenant/i.test(field)) return victim.orgId;
  if (/^id$/i.test(field)) return `lead_${marker}`;
  if (/_?id$/i.test(field)) return `acct_${marker}`;
  if (/(at|_at)$/i.test(field)) return 0;
  if (/key|hash/i.test(field)) return `fsk_${marker}${"0".repeat(12)}`;
  if (/^status$/i.test(field)) return "cancelled";
  if (/capacity|minutes|status|type|rating|source/i.test(field)) return 1000;
  if (field === "__proto__" || field === "prototype") return { orgId: victim.orgId, id: `lead_${marker}` };
  return `${marker}-${field}`;
}

const withField = (body: object, field: string, value: unknown) => {
  const out = { ...body };
  Object.defineProperty(out, field, { value, enumerable: true, configurable: true, writable: true });
  return out;
};

const COUNT_TABLES = ["api_keys", "accounts", "contacts", "leads", "incidents", "idempotency_keys", "events"];
// Besides the counts, every incident of both orgs as stored: a cancel or reschedule changes rows, not counts.
const INCIDENTS = (n: number) =>
  `(SELECT group_concat(row, ';') FROM (SELECT id || '|' || status || '|' || starts_at || '|' || ends_at || '|' || updated_at || '|' || coalesce(cancelled_at, '') || '|' || coalesce(cancel_reason, '') || '|' || coalesce(phone, '') || '|' || coalesce(account_id, '') AS row FROM incidents WHERE org_id = ?${n} ORDER BY id))`;
const COUNTS = `SELECT (SELECT count(*) FROM orgs), ${[1, 2].flatMap((n) => [...COUNT_TABLES.map((t) => `(SELECT count(*) FROM ${t} WHERE org_id = ?${n})`), INCIDENTS(n)]).join(", ")}`;
const counts = async () => (await env.DB.prepare(COUNTS).bind(attacker.orgId, victim.orgId).raw())[0];

/** No row of any table carries the marker of the injected values. */
async function expectNoInjectedRow() {
  for (const table of [
    "orgs",
    "api_keys",
    "accounts",
    "contacts",
    "leads",
    "incidents",
    "idempotency_keys",
    "events",
  ]) {
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
  victim = await openTenant("Mass assignment victim");
  // The victim has an incident too: no injected org id may reach it.
  await bookIncident(victim);
});

/** The attacker's request headers beside its credentials: an Idempotency-Key, if any. */
const headers = (key?: string): Record<string, string> => (key ? { "Idempotency-Key": key } : {});

const TOOL_FIELDS = INJECTED;
/** A tool's own arguments: its body's fields, and the `id` of an operation on one incident. */
const toolAllowed = (op: (typeof OPERATIONS)[number]) => [...op.allowed, ...Object.keys(op.toolArgs?.() ?? {})];
const QUERY_FIELDS = [
  "orgId",
  "org_id",
  "id",
  "createdAt",
  "keyHash",
  "apiKey",
  "status",
  "email_lower",
  "X-ORG-ID",
  "cancelledAt",
  "startsAt",
  "phone_e164",
  "mobileE164",
  "seq",
  "enqueuedAt",
  "after",
];
const QUERIES = LISTS.flatMap((list) =>
  QUERY_FIELDS.filter((field) => !list.allowed.includes(field)).map((field) => [list.path, field] as const),
);

const sizes = OPERATIONS.map((op) => INJECTED.filter((field) => !op.allowed.includes(field)).length);
const HTTP_CASES = sizes.reduce((a, b) => a + b, 0) + OPERATIONS.length;
const MCP_CASES = OPERATIONS.map((op) => TOOL_FIELDS.filter((field) => !toolAllowed(op).includes(field)).length).reduce(
  (a, b) => a + b,
  0,
);

describe(`mass assignment: ${INJECTED.length} server-owned names (${COLUMNS.length} column names) → ${HTTP_CASES} HTTP bodies, ${MCP_CASES} MCP calls, ${QUERIES.length} list queries`, () => {
  it("covers every declared operation with a body and every list (src/routes OPERATIONS)", () => {
    const bodies = DECLARED.filter((op) => op.body).map((op) => `POST ${op.path}`);
    expect(bodies.filter((name) => !OPERATIONS.some((op) => op.name === name))).toEqual([]);
    const lists = DECLARED.filter((op) => op.query).map((op) => op.path);
    expect(lists.filter((path) => !LISTS.some((list) => list.path === path))).toEqual([]);
    const tools = DECLARED.filter((op) => op.body).map((op) => op.tool);
    expect(tools.filter((tool) => !OPERATIONS.some((op) => op.tool === tool))).toEqual([]);
  });

  it.each(OPERATIONS.map((op) => [op.name, op] as const))(
    "%s: the valid body alone is accepted (the control)",
    async (_name, op) => {
      await attackFor(op.name);
      const res = await call(attacker, op.path(true), { body: op.body() });
      expect(res.status, res.text).toBe(200);
    },
  );

  it.each(OPERATIONS.map((op, i) => [op.name, sizes[i], op] as const))(
    "%s refuses each of %i injected fields, storing nothing",
    async (_name, _n, op) => {
      await attackFor(op.name);
      const fields = INJECTED.filter((field) => !op.allowed.includes(field));
      for (const [i, field] of fields.entries()) {
        const before = await counts();
        // Every other request carries an Idempotency-Key: a refused request must not store that either.
        const res = await call(attacker, op.path(), {
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
      await attackFor(op.name);
      const fields = INJECTED.filter((field) => !op.allowed.includes(field));
      const body = fields.reduce<object>((acc, field) => withField(acc, field, valueFor(field)), op.body());
      const before = await counts();
      const res = await call(attacker, op.path(), { headers: headers(`mass-all-${marker}`), body });
      expectProblem(res, 422, "validation_failed");
      expectUnknownFields(res.body, fields, res.text);
      expect(await counts()).toEqual(before);
      await expectNoInjectedRow();
    },
  );

  it.each(OPERATIONS.map((op) => [op.tool, op] as const))(
    "MCP %s refuses each injected field as an isError 422, storing nothing",
    async (_tool, op) => {
      await attackFor(op.tool);
      for (const field of TOOL_FIELDS.filter((f) => !toolAllowed(op).includes(f))) {
        const before = await counts();
        const args = withField({ ...op.toolArgs?.(), ...op.body() }, field, valueFor(field));
        const answer = toolAnswer(await mcpCall(attacker, op.tool, args));
        expect(answer.isError, field).toBe(true);
        expect(answer.status).toBe(422);
        expectUnknownFields(answer.body, [field], `${field}: ${JSON.stringify(answer.body)}`);
        expect(await counts(), `${field} stored something`).toEqual(before);
      }
      await expectNoInjectedRow();
    },
  );

  it.each(QUERIES)("GET %s?%s=… → 422 unknown_field (a query cannot choose the org either)", async (path, field) => {
    const res: ReadResponse = await call(
      attacker,
      `${path}?${new URLSearchParams({ [field]: String(valueFor(field)) })}`,
    );
    expectProblem(res, 422, "validation_failed");
    expectUnknownFields(res.body, [field], res.text);
  });
});
