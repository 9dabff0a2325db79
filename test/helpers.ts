// Integration-test helpers: every test makes its own org through the same code
// the admin CLI uses, and talks to the worker only over fetch.
import { env, SELF } from "cloudflare:test";
import { accounts } from "../drizzle/schema";
import { createDb } from "../src/db/client";
import { createOrg } from "../src/db/orgs";
import { newId } from "../src/lib/ids";

export { isProblem } from "./read-response";

export const db = () => createDb(env.DB);

export interface Tenant {
  orgId: string;
  apiKey: string;
  keyId: string;
}

export async function newTenant(name = "Test Org"): Promise<Tenant> {
  return createOrg(db(), { name, timeZone: "UTC" });
}

export interface CallOptions {
  method?: string;
  body?: unknown;
  rawBody?: BodyInit;
  headers?: Record<string, string>;
}

/** Calls the worker as `tenant` (or with no credentials when tenant is null). */
export async function call(tenant: Tenant | null, path: string, options: CallOptions = {}) {
  const headers: Record<string, string> = {
    ...(tenant ? { "X-API-KEY": tenant.apiKey, "X-ORG-ID": tenant.orgId } : {}),
    ...(options.body !== undefined ? { "Content-Type": "application/json" } : {}),
    ...options.headers,
  };
  const response = await SELF.fetch(`https://api.test${path}`, {
    method: options.method ?? (options.body !== undefined || options.rawBody !== undefined ? "POST" : "GET"),
    headers,
    body: options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
  });
  const text = await response.text();
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
  const json: any = text ? JSON.parse(text) : null;
  return { status: response.status, headers: response.headers, body: json };
}

/** Inserts an account the way `accounts import` stores one. */
export async function addAccount(tenant: Tenant, name: string, fields: Partial<typeof accounts.$inferInsert> = {}) {
  const now = Date.now();
  const account = {
    id: newId("acct", now),
    orgId: tenant.orgId,
    name,
    nameLower: name.toLowerCase(),
    createdAt: now,
    updatedAt: now,
    ...fields,
  };
  await db().insert(accounts).values(account);
  return account;
}
