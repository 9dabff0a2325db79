// The admin CLI's own checks of operator input (Node: the CLI reads files).
// `org create --time-zone` uses the same IANA check as `schedule set`.
import { describe, expect, it } from "vitest";
import { checkCountry, checkTimeZone } from "../../src/cli/commands";
import { CliError } from "../../src/cli/errors";
import { scheduleDocument } from "../../src/scheduling/schedule";

describe("time zones", () => {
  it.each(["UTC", "America/New_York", "Asia/Kolkata"])("%s is accepted", (zone) => {
    expect(checkTimeZone(zone)).toBe(zone);
    expect(scheduleDocument().safeParse({ timeZone: zone }).success).toBe(true);
  });

  it.each(["+05:00", "-0800", "Mars/Olympus", "", "America/New York"])(
    "%j is refused by org create and by schedule set alike",
    (zone) => {
      expect(() => checkTimeZone(zone)).toThrow(CliError);
      expect(scheduleDocument().safeParse({ timeZone: zone }).success).toBe(false);
    },
  );
});

describe("countries", () => {
  it.each([
    ["US", "US"],
    ["gb", "GB"],
    [" fr ", "FR"],
  ])("%j → %s", (code, country) => {
    expect(checkCountry(code)).toBe(country);
  });

  it.each(["XX", "USA", "", "U1"])("%j is refused", (code) => {
    expect(() => checkCountry(code)).toThrow(/unknown or unsupported country/);
  });
});
