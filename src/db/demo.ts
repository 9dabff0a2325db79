// The demo organisation (docs/operations.md, "Running locally"), seeded
// idempotently by `npm run dev`. Its credentials are public, so it exists only
// in local state (the CLI refuses to seed it with --remote).
import { count, eq } from "drizzle-orm";
import { accounts, apiKeys, orgs } from "../../drizzle/schema";
import { hashApiKey } from "../lib/api-keys";
import { randomHex } from "../lib/hash";
import { phoneColumnsOf } from "../lib/phones";
import type { Db } from "./client";

export const DEMO = {
  orgId: "org_demo",
  keyId: "key_demo0000000000000000000000",
  apiKey: "fsk_demo0000000000000000000000000000",
  timeZone: "America/New_York",
} as const;

const DEMO_ACCOUNTS = [
  {
    id: "acct_demo0000000000000000000001",
    name: "Acme Apartments",
    accountType: 1,
    email: "office@acme-apartments.example",
    businessPhone: "+1 212 555 0100",
    street1: "12 Elm Street",
    city: "New York",
    state: "NY",
    postalCode: "10001",
    country: "US",
  },
  {
    id: "acct_demo0000000000000000000002",
    name: "Blue Bakery",
    accountType: 2,
    email: "hello@bluebakery.example",
    businessPhone: "+1 718 555 0142",
    street1: "400 Atlantic Ave",
    city: "Brooklyn",
    state: "NY",
    postalCode: "11217",
    country: "US",
  },
  {
    id: "acct_demo0000000000000000000003",
    name: "Jane Homeowner",
    accountType: 0,
    email: "jane@example.com",
    mobilePhone: "+1 917 555 0199",
    street1: "7 Maple Lane",
    city: "Yonkers",
    state: "NY",
    postalCode: "10701",
    country: "US",
  },
];

export async function seedDemo(db: Db, now = Date.now()) {
  const keyHash = await hashApiKey(DEMO.apiKey);
  const [, , , [seeded]] = await db.batch([
    db
      .insert(orgs)
      .values({
        id: DEMO.orgId,
        name: "Demo Pest Control",
        timeZone: DEMO.timeZone,
        cursorSecret: randomHex(32),
        createdAt: now,
      })
      .onConflictDoNothing(),
    db.insert(apiKeys).values({ id: DEMO.keyId, orgId: DEMO.orgId, keyHash, createdAt: now }).onConflictDoNothing(),
    db
      .insert(accounts)
      .values(
        DEMO_ACCOUNTS.map((a) => ({
          ...a,
          ...phoneColumnsOf(a, "US"),
          orgId: DEMO.orgId,
          nameLower: a.name.toLowerCase(),
          createdAt: now,
          updatedAt: now,
        })),
      )
      .onConflictDoNothing(),
    db.select({ n: count() }).from(accounts).where(eq(accounts.orgId, DEMO.orgId)),
  ]);
  return { orgId: DEMO.orgId, apiKey: DEMO.apiKey, accounts: seeded?.n ?? 0 };
}
