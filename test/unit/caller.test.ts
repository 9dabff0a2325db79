import { describe, expect, it } from "vitest";
import { callerNumber } from "../../src/http/caller";

describe("callerNumber", () => {
  const london = { id: "org_london", country: "GB" };
  const newYork = { id: "org_newyork", country: "US" };

  it("reads a number as normalizePhone does, the same when read again, in each org's own country", () => {
    for (let round = 0; round < 2; round++) {
      expect(callerNumber(london, "020 7946 0958")).toBe("+442079460958");
      expect(callerNumber(newYork, "020 7946 0958")).toBeNull();
      expect(callerNumber(newYork, "(917) 555-0134")).toBe("+19175550134");
      expect(callerNumber(london, "anonymous")).toBeNull();
    }
  });

  it("still reads right after more numbers than it keeps", () => {
    for (let i = 0; i < 2500; i++) callerNumber(newYork, `(917) 555-${String(i).padStart(4, "0")}`);
    expect(callerNumber(newYork, "(917) 555-0134")).toBe("+19175550134");
    expect(callerNumber(london, "020 7946 0958")).toBe("+442079460958");
  });
});
