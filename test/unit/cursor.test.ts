import { describe, expect, it } from "vitest";
import { decodeCursor, encodeCursor } from "../../src/http/cursor";
import { ApiError } from "../../src/http/problem";

const position = { at: 1_763_900_000_000, id: "ct_01kaq3m2c0abcdefghjkmnpqrs" };
const scope = ["org_a", null, null, null];

async function rejection(token: string, forScope: unknown = scope) {
  const error = await decodeCursor(token, forScope).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return (error as ApiError).extra.errors;
}

describe("cursors", () => {
  it("round-trip a position for the same scope", async () => {
    const token = await encodeCursor(position, scope);
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(await decodeCursor(token, scope)).toEqual(position);
  });

  it("are refused for another org or other filters", async () => {
    const token = await encodeCursor(position, scope);
    expect(await rejection(token, ["org_b", null, null, null])).toEqual([
      expect.objectContaining({ path: "cursor", code: "invalid_cursor" }),
    ]);
    await rejection(token, ["org_a", "acct_x", null, null]);
  });

  it.each([
    "",
    "%%%",
    "bm90IGpzb24",
    btoa('{"t":-1,"i":"ct_x","s":"0"}'),
    btoa("null"),
    btoa('{"t":1,"i":"x; DROP TABLE","s":"0"}'),
  ])("refuses the malformed cursor %j", async (token) => {
    await rejection(token);
  });
});
