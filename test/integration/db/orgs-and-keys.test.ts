// src/db functions for organisations, schedules, keys and the demo seed, called
// directly as the admin CLI calls them (the CLI only turns a null into its error).
import { describe, expect, it } from "vitest";
import { createKey, findActiveKey, listKeys, revokeKey, touchKey } from "../../../src/db/api-keys";
import { DEMO, seedDemo } from "../../../src/db/demo";
import { createOrg, getSchedule, orgExists, setCountry, storeSchedule } from "../../../src/db/orgs";
import { hashApiKey } from "../../../src/lib/api-keys";
import { DEFAULT_SCHEDULE } from "../../../src/scheduling/schedule";
import { db, newTenant } from "../../support/tenants";

describe("orgs", () => {
  it("createOrg stores the org and a first key that authenticates it, with the default schedule", async () => {
    const { orgId, keyId, apiKey } = await createOrg(db(), { name: "Db Org", timeZone: "Europe/Paris" });
    expect(await orgExists(db(), orgId)).toBe(true);
    const key = await findActiveKey(db(), await hashApiKey(apiKey));
    expect(key).toMatchObject({ id: keyId, orgId, timeZone: "Europe/Paris", schedule: null, maxSlotMinutes: 60 });
    expect(await getSchedule(db(), orgId)).toEqual({ timeZone: "Europe/Paris", ...DEFAULT_SCHEDULE });
  });

  it("storeSchedule fills defaults, keeps the zone unless given, only grows maxSlotMinutes; null for an unknown org", async () => {
    const t = await newTenant();
    const stored = await storeSchedule(db(), t.orgId, { slotMinutes: 90, capacity: 3 });
    expect(stored).toEqual({ ...DEFAULT_SCHEDULE, timeZone: "UTC", slotMinutes: 90, capacity: 3 });
    await storeSchedule(db(), t.orgId, { timeZone: "Asia/Kolkata", slotMinutes: 30 });
    expect(await getSchedule(db(), t.orgId)).toMatchObject({ timeZone: "Asia/Kolkata", slotMinutes: 30, capacity: 1 });
    expect((await findActiveKey(db(), await hashApiKey(t.apiKey)))?.maxSlotMinutes).toBe(90);
    expect(await storeSchedule(db(), "org_missing", { capacity: 2 })).toBeNull();
    expect(await getSchedule(db(), "org_missing")).toBeNull();
    expect(await orgExists(db(), "org_missing")).toBe(false);
  });

  it("an org's country is US unless given, and setCountry changes it; null for an unknown org", async () => {
    const us = await createOrg(db(), { name: "Default", timeZone: "UTC" });
    expect((await findActiveKey(db(), await hashApiKey(us.apiKey)))?.country).toBe("US");
    const gb = await createOrg(db(), { name: "British", timeZone: "Europe/London", country: "GB" });
    expect((await findActiveKey(db(), await hashApiKey(gb.apiKey)))?.country).toBe("GB");
    expect(await setCountry(db(), gb.orgId, "FR")).toEqual({ orgId: gb.orgId, country: "FR" });
    expect((await findActiveKey(db(), await hashApiKey(gb.apiKey)))?.country).toBe("FR");
    expect(await setCountry(db(), "org_missing", "FR")).toBeNull();
  });

  it("seedDemo is idempotent: the demo org, its public key and three accounts, once", async () => {
    const first = await seedDemo(db());
    const again = await seedDemo(db());
    expect(first).toEqual({ orgId: DEMO.orgId, apiKey: DEMO.apiKey, accounts: 3 });
    expect(again).toEqual(first);
    expect((await listKeys(db(), DEMO.orgId))?.keys).toHaveLength(1);
  });
});

describe("keys", () => {
  it("createKey adds a working key; null and nothing written for an unknown org", async () => {
    const t = await newTenant();
    const second = await createKey(db(), t.orgId);
    expect(second).not.toBeNull();
    expect((await findActiveKey(db(), await hashApiKey(second!.apiKey)))?.orgId).toBe(t.orgId);
    expect(await createKey(db(), "org_missing")).toBeNull();
    expect(await listKeys(db(), "org_missing")).toBeNull();
  });

  it("revokeKey stops a key at once, is repeatable, and cannot reach another org's key", async () => {
    const a = await newTenant("A");
    const b = await newTenant("B");
    expect(await revokeKey(db(), b.orgId, a.keyId)).toBeNull();
    expect(await findActiveKey(db(), await hashApiKey(a.apiKey))).toBeDefined();
    expect(await revokeKey(db(), a.orgId, a.keyId)).toEqual({ keyId: a.keyId, revoked: true });
    expect(await revokeKey(db(), a.orgId, a.keyId)).toEqual({ keyId: a.keyId, revoked: true });
    expect(await findActiveKey(db(), await hashApiKey(a.apiKey))).toBeUndefined();
  });

  it("listKeys lists the org's keys oldest first, never a hash; touchKey writes at most once per resolution", async () => {
    const t = await newTenant();
    const second = (await createKey(db(), t.orgId, "read", Date.now() + 1))!;
    await touchKey(db(), t.keyId, 1_000_000, 60_000);
    await touchKey(db(), t.keyId, 1_030_000, 60_000);
    const { keys } = (await listKeys(db(), t.orgId))!;
    expect(keys.map((k) => k.keyId)).toEqual([t.keyId, second.keyId]);
    expect(keys.map((k) => k.role)).toEqual(["office", "read"]);
    expect(keys[0]).toEqual({
      keyId: t.keyId,
      role: "office",
      createdAt: expect.any(String),
      revokedAt: null,
      lastUsedAt: new Date(1_000_000).toISOString(),
    });
    expect(JSON.stringify(keys)).not.toContain(await hashApiKey(t.apiKey));
  });
});
