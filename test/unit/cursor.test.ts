import { describe, expect, it } from "vitest";
import { decodeCursor, encodeCursor } from "../../src/http/cursor";
import { ApiError } from "../../src/http/problem";
import { randomHex } from "../../src/lib/hash";

const position = { at: 1_763_900_000_000, id: "ct_01kaq3m2c0abcdefghjkmnpqrs" };
const scope = { secret: randomHex(32), filters: ["contacts", null, null] };

async function rejection(token: string, forScope = scope) {
  const error = await decodeCursor(token, forScope).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return (error as ApiError).extra.errors;
}

const b64url = (text: string) => btoa(text).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
const unb64url = (text: string) => atob(text.replaceAll("-", "+").replaceAll("_", "/"));

describe("cursors", () => {
  it("round-trip a position for the same scope", async () => {
    const token = await encodeCursor(position, scope);
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(await decodeCursor(token, scope)).toEqual(position);
  });

  it("are refused for another org (another key) or other filters", async () => {
    const token = await encodeCursor(position, scope);
    expect(await rejection(token, { ...scope, secret: randomHex(32) })).toEqual([
      expect.objectContaining({ path: "cursor", code: "invalid_cursor" }),
    ]);
    await rejection(token, { ...scope, filters: ["contacts", "acct_x", null] });
  });

  it.each([
    ["t", (p: Record<string, unknown>) => ({ ...p, t: (p.t as number) - 1 })],
    ["i", (p: Record<string, unknown>) => ({ ...p, i: "ct_01kaq3m2c0abcdefghjkmnpqrt" })],
    ["an added member", (p: Record<string, unknown>) => ({ ...p, s: "x" })],
  ])("refuse a cursor whose position was re-encoded with %s changed", async (_, change) => {
    const [payload, mac] = (await encodeCursor(position, scope)).split(".");
    const forged = b64url(JSON.stringify(change(JSON.parse(unb64url(payload!)))));
    await rejection(`${forged}.${mac}`);
  });

  it("refuse a cursor whose MAC was changed or cut", async () => {
    const [payload, mac] = (await encodeCursor(position, scope)).split(".");
    const flipped = (mac![0] === "A" ? "B" : "A") + mac!.slice(1);
    await rejection(`${payload}.${flipped}`);
    await rejection(`${payload}.${mac!.slice(0, 10)}`);
    await rejection(payload!);
  });

  it("refuses the MAC spelled another way (base64url's unused low bits), and a cursor over 1024 characters", async () => {
    const [payload, mac] = (await encodeCursor(position, scope)).split(".");
    const last = mac!.at(-1)!;
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    // 16 bytes are 22 characters: the last carries 2 bits, so its index's low 4 bits are spare.
    const respelled = alphabet[alphabet.indexOf(last) ^ 1]!;
    expect(atob(`${mac!.slice(0, -1)}${respelled}`.replaceAll("-", "+").replaceAll("_", "/"))).toBe(
      atob(mac!.replaceAll("-", "+").replaceAll("_", "/")),
    );
    await rejection(`${payload}.${mac!.slice(0, -1)}${respelled}`);
    await rejection(`${payload}.${mac}${"A".repeat(1024)}`);
  });

  it.each([
    "",
    "%%%",
    "bm90IGpzb24",
    "bm90IGpzb24.AAAA",
    `${btoa('{"t":-1,"i":"ct_x"}')}.AAAAAAAAAAAAAAAAAAAAAA`,
    "a.b.c",
  ])("refuses the malformed cursor %j", async (token) => {
    await rejection(token);
  });

  it("never verifies for an org without a key (a row written by raw SQL)", async () => {
    await expect(encodeCursor(position, { ...scope, secret: "" })).rejects.toThrow(/no cursor secret/);
  });
});
