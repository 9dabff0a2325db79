// The fuzz suites' side of the wire: orgs to fuzz (each with accounts,
// contacts and real cursors), requests through the worker's own fetch handler,
// and the checks every answer must pass whatever was sent.
import { env } from "cloudflare:test";
import fc from "fast-check";
import { expect } from "vitest";
import type { ReadResponse } from "../../support/http";
import { mcpCall, toolAnswer } from "../../support/mcp";
import { isProblem } from "../../support/problem";
import { type CallOptions, call } from "../../support/request";
import { addAccount, openTenant, type Tenant } from "../../support/tenants";
import { slotIn } from "../../support/time";
import { Sym } from "./values";

/** The seed of every fuzz property: a failure reproduces exactly. */
export const FUZZ_SEED = 20_261_122;
export const RUNS = 1000;
// wrangler.toml allows 1,200 requests per org per 60 s. A fixture serves at
// most this many, then a fresh org takes over (only shrinking after a failure
// goes that far), so a 429 can never stand in for the answer under test.
const REQUESTS_PER_ORG = 1100;

export interface Fixture {
  tenant: Tenant;
  accounts: { id: string; name: string }[];
  /** Every contact of the org, by id. */
  contacts: Map<string, { email: string | null; accountId: string | null }>;
  leads: Set<string>;
  incidents: Set<string>;
  /** Cursors issued to this org: without filters, and for `accountId` = its first account. */
  cursors: { plain: string; account: string };
  /** Stored Idempotency-Key outcomes: the request each key was first used for and its answer. */
  keys: Map<string, { request: string; status: number; text: string }>;
  requests: number;
  /** The org's row counts when last read. */
  counts?: Counts;
}

export interface Counts {
  leads: number;
  contacts: number;
  incidents: number;
  accounts: number;
  keys: number;
}

/** The other organisation, whose ids and cursors the fuzz throws at the org under test. */
export interface Foreign {
  tenant: Tenant;
  accountId: string;
  accountName: string;
  contactId: string;
  cursor: string;
}

/** A request as the fixture's org with the real bindings (D1, rate limiter), counted against its budget. */
export function send(fx: Fixture, path: string, options: CallOptions = {}): Promise<ReadResponse> {
  fx.requests++;
  return call(fx.tenant, path, options);
}

async function seedContacts(fx: Fixture, bodies: object[]) {
  for (const body of bodies) {
    const res = await send(fx, "/api/v1/contacts", { body });
    expect(res.status, res.text).toBe(200);
    fx.contacts.set(res.body.id, { email: res.body.email, accountId: res.body.accountId });
  }
}

async function nextCursor(fx: Fixture, query: string): Promise<string> {
  const res = await send(fx, `/api/v1/contacts?limit=1${query}`);
  expect(res.body?.nextCursor, res.text).toEqual(expect.any(String));
  return res.body.nextCursor;
}

/** A fresh org, open around the clock (capacity 2, no notice), with two accounts and three contacts. */
export async function newFixture(): Promise<Fixture> {
  const tenant = await openTenant("Fuzz Org", { capacity: 2, horizonDays: 30 });
  const tag = tenant.orgId.slice(-6);
  const accounts = [await addAccount(tenant, `Fuzz Account ${tag}`), await addAccount(tenant, `Ünïque Ñame ${tag}`)];
  const fx: Fixture = {
    tenant,
    accounts: accounts.map(({ id, name }) => ({ id, name })),
    contacts: new Map(),
    leads: new Set(),
    incidents: new Set(),
    cursors: { plain: "", account: "" },
    keys: new Map(),
    requests: 0,
  };
  const accountId = fx.accounts[0]!.id;
  await seedContacts(fx, [
    { firstName: "Seed", accountId },
    { lastName: "Seed", accountId },
    { email: `seed-${tag}@fuzz.example` },
  ]);
  fx.cursors = { plain: await nextCursor(fx, ""), account: await nextCursor(fx, `&accountId=${accountId}`) };
  return fx;
}

export async function newForeign(): Promise<Foreign> {
  const fx = await newFixture();
  return {
    tenant: fx.tenant,
    accountId: fx.accounts[0]!.id,
    accountName: fx.accounts[0]!.name,
    contactId: [...fx.contacts.keys()][0]!,
    cursor: fx.cursors.plain,
  };
}

/** Fixtures for one property: the current one until its request budget is spent. */
export class Pool {
  readonly fixtures: Fixture[] = [];

  async current(): Promise<Fixture> {
    const last = this.fixtures.at(-1);
    if (last && last.requests < REQUESTS_PER_ORG) return last;
    const fx = await newFixture();
    this.fixtures.push(fx);
    return fx;
  }
}

const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** One character of the cursor replaced by another base64url character. */
function flip(cursor: string, n: number): string {
  const at = n % cursor.length;
  const next = BASE64URL[(BASE64URL.indexOf(cursor[at]!) + 1 + (Math.floor(n / 1024) % 63)) % 64]!;
  return cursor.slice(0, at) + next + cursor.slice(at + 1);
}

/** The concrete value of a generated value: symbols become this fixture's ids, cursors and slot times. */
export function resolve(value: unknown, fx: Fixture, foreign: Foreign, now: number): unknown {
  if (!(value instanceof Sym)) return value;
  const account = fx.accounts[value.n % fx.accounts.length]!;
  switch (value.kind) {
    case "ownAccountId":
      return account.id;
    case "ownAccountName":
      return value.n % 3 === 2 ? ` ${account.name.toUpperCase()} ` : account.name;
    case "foreignAccountId":
      return foreign.accountId;
    case "foreignAccountName":
      return foreign.accountName;
    case "foreignContactId":
      return foreign.contactId;
    case "plainCursor":
      return fx.cursors.plain;
    case "accountCursor":
      return fx.cursors.account;
    case "foreignCursor":
      return foreign.cursor;
    case "flippedCursor":
      return flip(fx.cursors.plain, value.n);
    case "slot":
      return slotIn(value.n, now);
  }
}

export function resolveObject(
  body: Record<string, unknown>,
  fx: Fixture,
  foreign: Foreign,
  now: number,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // defineProperty, so that a generated "__proto__" key stays an own key as it would in JSON.parse.
  for (const [key, value] of Object.entries(body))
    Object.defineProperty(out, key, {
      value: resolve(value, fx, foreign, now),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return out;
}

/** The answer of one operation, through HTTP or as an MCP tool result. */
export interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: fuzz answers are arbitrary JSON
  body: any;
  text: string;
  /** The id every problem document must carry (the response's X-Request-Id). */
  requestId: string | null;
}

export const answerOf = (res: ReadResponse): Answer => ({
  status: res.status,
  body: res.body,
  text: res.text,
  requestId: res.headers.get("X-Request-Id"),
});

/**
 * What every answer must be, whatever was sent: never a 5xx, never a 429
 * (the fuzz would then test the limiter), and every error a problem document
 * with the request's id; a validation failure lists well-formed field errors.
 * A replayed Idempotency-Key answer carries its first request's id.
 */
export function expectSane(answer: Answer, replay = false) {
  expect(answer.status, answer.text).toBeLessThan(500);
  expect(answer.status, `rate limited: the fuzz is testing the limiter, not the input (${answer.text})`).not.toBe(429);
  if (answer.status < 400) return;
  expect(isProblem(answer.body ?? {}), answer.text).toBe(true);
  expect(answer.body.status).toBe(answer.status);
  expect(answer.body).not.toHaveProperty("stack");
  if (!replay) expect(answer.body.requestId).toBe(answer.requestId);
  if (answer.body.code === "validation_failed") {
    expect(answer.status).toBe(422);
    expect(answer.body.errors, answer.text).toEqual(expect.arrayContaining([expect.anything()]));
    for (const error of answer.body.errors)
      expect(error).toEqual({
        path: expect.any(String),
        code: expect.stringMatching(/^[a-z_]+$/),
        message: expect.any(String),
      });
  }
}

/** An HTTP answer: sane, JSON or problem+json, with the request id header. */
export function expectSaneHttp(res: ReadResponse, replay = false) {
  expectSane(answerOf(res), replay);
  expect(res.headers.get("X-Request-Id")).toBeTruthy();
  expect(res.headers.get("Content-Type")).toBe(res.status >= 400 ? "application/problem+json" : "application/json");
}

/**
 * One MCP tools/call as the fixture's org (JSON-RPC over the Streamable HTTP
 * transport, JSON response). The transport must answer 200 with a result, never
 * a protocol error; a failed call is an isError result holding the problem
 * document (contract 7). Returns the operation's answer inside it.
 */
export async function callTool(fx: Fixture, tool: string, args: unknown, idempotencyKey?: string): Promise<Answer> {
  fx.requests++;
  const res = await mcpCall(fx.tenant, tool, args, {
    headers: idempotencyKey === undefined ? {} : { "Idempotency-Key": idempotencyKey },
  });
  expect(res.status, res.text).toBe(200);
  expect(res.body?.error, res.text).toBeUndefined();
  const { isError, body, text } = toolAnswer(res);
  const requestId = res.headers.get("X-Request-Id");
  if (isError) {
    expect(body.status, text).toBeGreaterThanOrEqual(400);
    return { status: body.status as number, body, text, requestId };
  }
  expect(res.body.result.structuredContent).toEqual(body);
  return { status: 200, body, text, requestId };
}

const counts = (org: string) =>
  ["leads", "contacts", "incidents", "accounts", "idempotency_keys"].map(
    (table) => `(SELECT count(*) FROM ${table} WHERE org_id = ${org})`,
  );
const COUNTS = `SELECT ${counts("?1").join(", ")}`;
// The org under test and the other org in one round trip.
const BOTH_COUNTS = `SELECT ${[...counts("?1"), ...counts("?2")].join(", ")}`;
const asCounts = ([leads, contacts, incidents, accounts, keys]: number[]): Counts => ({
  leads: leads!,
  contacts: contacts!,
  incidents: incidents!,
  accounts: accounts!,
  keys: keys!,
});

export const countRows = async (orgId: string) =>
  asCounts((await env.DB.prepare(COUNTS).bind(orgId).raw<number[]>())[0]!);

async function countBoth(orgId: string, otherOrgId: string): Promise<[Counts, Counts]> {
  const row = (await env.DB.prepare(BOTH_COUNTS).bind(orgId, otherOrgId).raw<number[]>())[0]!;
  return [asCounts(row.slice(0, 5)), asCounts(row.slice(5))];
}

const known = (fx: Fixture): Counts => ({
  leads: fx.leads.size,
  contacts: fx.contacts.size,
  incidents: fx.incidents.size,
  accounts: fx.accounts.length,
  keys: fx.keys.size,
});

/**
 * Runs one fuzz request and checks that it stored exactly what its answer
 * announced: the org's row counts grow by the creations and stored keys the
 * check recorded, and no more; the other org's do not change. Relative to the
 * previous count, so that after a failure every shrunk case is judged alone.
 */
export async function expectStoredOnly(
  fx: Fixture,
  foreign: Foreign,
  foreignCounts: Counts,
  request: () => Promise<void>,
) {
  fx.counts ??= await countRows(fx.tenant.orgId);
  const before = known(fx);
  let failure: unknown;
  try {
    await request();
  } catch (error) {
    failure = error;
  }
  const after = known(fx);
  const expected = Object.fromEntries(
    Object.entries(fx.counts).map(([table, n]) => [
      table,
      n + after[table as keyof Counts] - before[table as keyof Counts],
    ]),
  );
  const [actual, other] = await countBoth(fx.tenant.orgId, foreign.tenant.orgId);
  fx.counts = actual;
  if (failure) throw failure;
  expect(actual, "rows stored beyond what the answer announced").toEqual(expected);
  expect(other, "rows stored in the other org").toEqual(foreignCounts);
}

const ids = async (table: string, orgId: string) =>
  new Set(
    (await env.DB.prepare(`SELECT id FROM ${table} WHERE org_id = ?`).bind(orgId).all<{ id: string }>()).results.map(
      (r) => r.id,
    ),
  );

/** After a property: the org's rows are exactly the ones its 2xx answers announced. */
export async function expectExactRows(fx: Fixture) {
  expect(await ids("leads", fx.tenant.orgId)).toEqual(fx.leads);
  expect(await ids("contacts", fx.tenant.orgId)).toEqual(new Set(fx.contacts.keys()));
  expect(await ids("incidents", fx.tenant.orgId)).toEqual(fx.incidents);
  const keys = await env.DB.prepare("SELECT key FROM idempotency_keys WHERE org_id = ?")
    .bind(fx.tenant.orgId)
    .all<{ key: string }>();
  expect(new Set(keys.results.map((r) => r.key))).toEqual(new Set(fx.keys.keys()));
}

/**
 * Runs `check` RUNS times over `cases` (fixed seed), each against the current
 * fixture of a fresh pool and inside expectStoredOnly, then checks the
 * fixtures' rows; returns how often each status answered, so that a generator
 * that stopped reaching the operation shows.
 */
export async function runFuzz<T>(
  cases: fc.Arbitrary<T>,
  check: (fx: Fixture, c: T) => Promise<Answer>,
  foreign: Foreign,
  foreignCounts: Counts,
) {
  const pool = new Pool();
  const statuses = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(cases, async (c) => {
      const fx = await pool.current();
      await expectStoredOnly(fx, foreign, foreignCounts, async () => {
        const { status } = await check(fx, c);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      });
    }),
    { seed: FUZZ_SEED, numRuns: RUNS },
  );
  expect([...statuses.values()].reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(RUNS);
  for (const fx of pool.fixtures) await expectExactRows(fx);
  return statuses;
}

/** At least `share` of RUNS answers had this status. */
export const expectShare = (statuses: Map<number, number>, status: number, share: number) =>
  expect(
    statuses.get(status) ?? 0,
    `${status} in ${JSON.stringify(Object.fromEntries(statuses))}`,
  ).toBeGreaterThanOrEqual(share * RUNS);

/** The other org's identifiers and data: none may appear in an answer unless the request itself carried it. */
export function expectNothingOf(foreign: Foreign, answer: Answer, sent: string) {
  for (const secret of [
    foreign.tenant.orgId,
    foreign.tenant.apiKey,
    foreign.accountId,
    foreign.accountName,
    foreign.contactId,
    foreign.cursor,
  ]) {
    if (!sent.includes(secret)) expect(answer.text.includes(secret), `${answer.text} holds ${secret}`).toBe(false);
  }
}
