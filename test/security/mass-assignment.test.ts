// Mass assignment (docs/api.md, "Authentication" and "Validation"): no body or
// query can set what the server owns. Every operation of the operation samples
// (test/support/operations.ts) — each POST's body, each GET's query, and each
// as an MCP tool — gets, one at a time (and a body or query then all at once),
// every field docs/api.md does not give it: ids, org ids, timestamps, key
// material, status, cancellation fields, and every column name of
// drizzle/schema.ts (both spellings). Each is refused as 422 unknown_field
// naming exactly the injected fields, and D1 shows nothing stored or changed:
// no row count of the org or of the org it names changes (its events included:
// a refused request records none), no incident or hold of either changes (the
// fixture's incident is there for cancel and reschedule to meet, its hold for
// release), and no row anywhere carries an injected id.
import { env } from "cloudflare:test";
import { getTableColumns, getTableName } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import * as schema from "../../drizzle/schema";
import { bookIncident } from "../support/incidents";
import { mcpCall, toolAnswer } from "../support/mcp";
import {
  fixture,
  OPERATIONS,
  type Operation,
  pathTemplate,
  send,
  TOOLS,
  type Transport,
  toolArguments,
} from "../support/operations";
import { expectProblem } from "../support/problem";
import { call } from "../support/request";
import { openTenant, type Tenant } from "../support/tenants";
import { slotIn } from "../support/time";

const ADDRESS = ["buildingLocation", "street1", "street2", "city", "postalCode", "state", "country"];
const PHONES = ["mobilePhone", "businessPhone"];
const PAGE = ["limit", "cursor"];

/**
 * The fields docs/api.md gives each operation, by tool: a POST's body, a GET's
 * query — written out, not read from the schemas under test. A tool takes
 * these and, for an operation on one record, its `id` (docs/api.md, "MCP").
 */
const ALLOWED: Record<string, string[]> = {
  create_lead: [
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
  create_contact: ["firstName", "lastName", "email", ...PHONES, "accountId", ...ADDRESS],
  list_contacts: [...PAGE, "accountId", "email", "phone", "updatedSince"],
  get_account: [],
  find_available_appointments: ["dateTime", "serviceId", "postalCode", "insectName", "limit"],
  check_booking_availability: ["dateTime", "serviceId", "postalCode", "insectName"],
  create_incident: ["dateTime", "clientName", "insectName", "phone", "notes", "serviceId", "postalCode", "holdId"],
  hold_slot: ["dateTime", "serviceId", "insectName", "postalCode", "holdMinutes"],
  release_hold: ["holdId"],
  find_caller: ["phone"],
  get_incident: [],
  list_incidents: [...PAGE, "from", "to", "status", "accountId", "phone", "updatedSince", "technicianId", "serviceId"],
  cancel_incident: ["reason"],
  reschedule_incident: ["dateTime"],
  close_incident: ["outcome", "note"],
  create_plan: [
    "dateTime",
    "clientName",
    "insectName",
    "phone",
    "notes",
    "serviceId",
    "postalCode",
    "holdId",
    "every",
    "visits",
  ],
  get_plan: [],
  list_plans: [...PAGE, "status", "phone", "accountId"],
  cancel_plan: ["reason", "cancelVisits"],
  list_events: [...PAGE, "type"],
  list_services: [],
  get_call_context: [],
  get_board: ["date"],
};

const allowedOf = (op: Operation) => ALLOWED[op.tool] ?? [];
const toolAllowed = (op: Operation) => [...allowedOf(op), ...(pathTemplate(op).includes("{id}") ? ["id"] : [])];
const BODIES = OPERATIONS.filter((op) => op.method === "POST");
const QUERIED = OPERATIONS.filter((op) => op.method === "GET");

const TABLES = [
  schema.orgs,
  schema.apiKeys,
  schema.accounts,
  schema.contacts,
  schema.leads,
  schema.incidents,
  schema.holds,
  schema.plans,
  schema.planVisits,
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

const COUNT_TABLES = [
  "api_keys",
  "accounts",
  "contacts",
  "leads",
  "incidents",
  "holds",
  "plans",
  "plan_visits",
  "idempotency_keys",
  "events",
];
// Besides the counts, every incident and hold of both orgs as stored: a cancel, reschedule or release changes rows, not counts.
const INCIDENTS = (n: number) =>
  `(SELECT group_concat(row, ';') FROM (SELECT id || '|' || status || '|' || starts_at || '|' || ends_at || '|' || updated_at || '|' || coalesce(cancelled_at, '') || '|' || coalesce(cancel_reason, '') || '|' || coalesce(phone, '') || '|' || coalesce(account_id, '') AS row FROM incidents WHERE org_id = ?${n} ORDER BY id))`;
const HOLDS = (n: number) =>
  `(SELECT group_concat(row, ';') FROM (SELECT id || '|' || starts_at || '|' || occupied_until || '|' || expires_at || '|' || coalesce(ended_at, '') || '|' || coalesce(incident_id, '') || '|' || coalesce(technician_id, '') AS row FROM holds WHERE org_id = ?${n} ORDER BY id))`;
const COUNTS = `SELECT (SELECT count(*) FROM orgs), ${[1, 2].flatMap((n) => [...COUNT_TABLES.map((t) => `(SELECT count(*) FROM ${t} WHERE org_id = ?${n})`), INCIDENTS(n), HOLDS(n)]).join(", ")}`;
/** The counts and incidents of the attacking org and of the victim. */
const counts = async (attacker: Tenant) => (await env.DB.prepare(COUNTS).bind(attacker.orgId, victim.orgId).raw())[0];

/**
 * No row of any table carries the marker of the injected values: the rows with
 * it in any column, counted by SQLite in one round trip (not every row of a
 * database other files share read into the test).
 */
async function expectNoInjectedRow() {
  const names = [
    "orgs",
    "api_keys",
    "accounts",
    "contacts",
    "leads",
    "incidents",
    "holds",
    "plans",
    "plan_visits",
    "idempotency_keys",
    "events",
  ];
  const found = await env.DB.batch(
    names.map((name) => {
      const table = TABLES.find((t) => getTableName(t) === name)!;
      const columns = Object.values(getTableColumns(table)).map((column) => `instr("${column.name}", ?1) > 0`);
      return env.DB.prepare(`SELECT count(*) AS n FROM ${name} WHERE ${columns.join(" OR ")}`).bind(marker);
    }),
  );
  const holding = Object.fromEntries(names.map((name, i) => [name, (found[i]!.results[0] as { n: number }).n]));
  expect(holding, "rows holding an injected value").toEqual(Object.fromEntries(names.map((name) => [name, 0])));
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
  // The victim has an incident and a live hold too: no injected org id may reach them.
  await bookIncident(victim);
  const held = await call(victim, "/api/v1/ai-agent/hold-slot", { body: { dateTime: slotIn(20), holdMinutes: 15 } });
  expect(held.status, held.text).toBe(200);
});

/** The attacker's request headers beside its credentials: an Idempotency-Key, if any. */
const headers = (key?: string): Record<string, string> => (key ? { "Idempotency-Key": key } : {});

const TOOL_FIELDS = INJECTED;
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

const bodyFields = (op: Operation) => INJECTED.filter((field) => !allowedOf(op).includes(field));
const queryFields = (op: Operation) => QUERY_FIELDS.filter((field) => !allowedOf(op).includes(field));
const toolFields = (op: Operation) => TOOL_FIELDS.filter((field) => !toolAllowed(op).includes(field));
const total = (ops: Operation[], fields: (op: Operation) => string[]) =>
  ops.reduce((sum, op) => sum + fields(op).length, 0);

/** `path` with `fields` added to its query. */
const withQuery = (path: string, fields: string[]) =>
  `${path}${path.includes("?") ? "&" : "?"}${new URLSearchParams(fields.map((field): [string, string] => [field, String(valueFor(field))]))}`;

// A test that sends a request per field (over a hundred, each beside two reads of D1) outlasts
// vitest's 5 s on a loaded machine.
const MANY = 60_000;

describe(`mass assignment: ${INJECTED.length} server-owned names (${COLUMNS.length} column names) → ${total(BODIES, bodyFields) + BODIES.length} HTTP bodies, ${total(QUERIED, queryFields) + QUERIED.length} queries, ${total(OPERATIONS, toolFields)} MCP calls`, () => {
  it("has the fields of every sampled operation (test/support/operations.ts)", () => {
    expect(Object.keys(ALLOWED).sort()).toEqual(TOOLS);
  });

  it.each((["http", "mcp"] as const).flatMap((t) => OPERATIONS.map((op) => [t, op.name, op] as const)))(
    "%s %s: the operation's sample alone is accepted (the control)",
    async (transport: Transport, _name, op) => {
      const res = await send(env.DB, transport, op, await fixture(op));
      expect(res.status, res.text).toBe(200);
      if (transport === "mcp") expect(toolAnswer(res).isError, res.text).toBe(false);
    },
  );

  it.each(BODIES.map((op) => [pathTemplate(op), bodyFields(op).length, op] as const))(
    "POST %s refuses each of %i injected body fields, storing nothing",
    async (_name, _n, op) => {
      const f = await fixture(op);
      // Each request is checked against the counts read after the one before it (nothing runs between).
      const before = await counts(f.tenant);
      for (const [i, field] of bodyFields(op).entries()) {
        // Every other request carries an Idempotency-Key: a refused request must not store that either.
        const res = await call(f.tenant, op.path(f), {
          headers: headers(i % 2 ? `mass-${marker}-${i}` : undefined),
          body: withField(op.args(f), field, valueFor(field)),
        });
        expectProblem(res, 422, "validation_failed");
        expectUnknownFields(res.body, [field], `${field}: ${res.text}`);
        expect(await counts(f.tenant), `${field} stored something`).toEqual(before);
      }
      await expectNoInjectedRow();
    },
    MANY,
  );

  it.each(BODIES.map((op) => [pathTemplate(op), op] as const))(
    "POST %s refuses all of them at once, naming every one",
    async (_name, op) => {
      const f = await fixture(op);
      const fields = bodyFields(op);
      const body = fields.reduce<object>((acc, field) => withField(acc, field, valueFor(field)), op.args(f));
      const before = await counts(f.tenant);
      const res = await call(f.tenant, op.path(f), { headers: headers(`mass-all-${marker}`), body });
      expectProblem(res, 422, "validation_failed");
      expectUnknownFields(res.body, fields, res.text);
      expect(await counts(f.tenant)).toEqual(before);
      await expectNoInjectedRow();
    },
  );

  it.each(QUERIED.map((op) => [pathTemplate(op), queryFields(op).length, op] as const))(
    "GET %s refuses each of %i query fields (a query cannot choose the org either), and all of them at once",
    async (_name, _n, op) => {
      const f = await fixture(op);
      const fields = queryFields(op);
      for (const field of fields) {
        const res = await call(f.tenant, withQuery(op.path(f), [field]));
        expectProblem(res, 422, "validation_failed");
        expectUnknownFields(res.body, [field], `${field}: ${res.text}`);
      }
      const res = await call(f.tenant, withQuery(op.path(f), fields));
      expectProblem(res, 422, "validation_failed");
      expectUnknownFields(res.body, fields, res.text);
    },
  );

  it.each(OPERATIONS.map((op) => [op.tool, toolFields(op).length, op] as const))(
    "MCP %s refuses each of %i injected fields as an isError 422, storing nothing",
    async (_tool, _n, op) => {
      const f = await fixture(op);
      const before = await counts(f.tenant);
      for (const field of toolFields(op)) {
        const args = withField(toolArguments(op, f), field, valueFor(field));
        const answer = toolAnswer(await mcpCall(f.tenant, op.tool, args));
        expect(answer.isError, field).toBe(true);
        expect(answer.status).toBe(422);
        expectUnknownFields(answer.body, [field], `${field}: ${JSON.stringify(answer.body)}`);
        expect(await counts(f.tenant), `${field} stored something`).toEqual(before);
      }
      await expectNoInjectedRow();
    },
    MANY,
  );
});
