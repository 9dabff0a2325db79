import { describe, expect, it } from "vitest";
import { API_KEY_PATTERN, constantTimeEqual, generateApiKey, hashApiKey } from "../../src/lib/api-keys";
import { newId } from "../../src/lib/ids";

describe("generateApiKey", () => {
  it("makes fsk_ keys of 40 base62 characters, all different", () => {
    const keys = Array.from({ length: 200 }, generateApiKey);
    for (const key of keys) expect(key).toMatch(/^fsk_[A-Za-z0-9]{40}$/);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys.every((key) => API_KEY_PATTERN.test(key))).toBe(true);
  });

  it("uses the whole alphabet", () => {
    const seen = new Set(Array.from({ length: 100 }, generateApiKey).join("").slice(4));
    expect(seen.size).toBeGreaterThanOrEqual(62);
  });
});

describe("hashApiKey", () => {
  it("is the hex SHA-256 of the key", async () => {
    // sha256("abc"), FIPS 180-2 test vector
    expect(await hashApiKey("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
});

describe("constantTimeEqual", () => {
  it.each([
    ["abc", "abc", true],
    ["abc", "abd", false],
    ["abc", "ab", false],
    ["", "", true],
    ["é", "e", false],
    ["ab", "abc", false],
    // One past the end reads as 0: the lengths still tell these apart.
    ["a\u0000", "a", false],
    ["😀", "😁", false],
  ])("%j vs %j → %s", (a, b, expected) => {
    expect(constantTimeEqual(a, b)).toBe(expected);
  });
});

describe("newId", () => {
  it("sorts by creation time and carries its prefix", () => {
    const early = newId("ct", 1_700_000_000_000);
    const late = newId("ct", 1_700_000_000_001);
    expect(early).toMatch(/^ct_[0-9a-z]{26}$/);
    expect(early < late).toBe(true);
  });
});
