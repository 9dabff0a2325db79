import { describe, expect, it } from "vitest";
import { isPhoneCountry, normalizePhone } from "../../src/lib/phones";

describe("normalizePhone", () => {
  it.each([
    ["+19175550134", "US", "+19175550134"],
    ["(917) 555-0134", "US", "+19175550134"],
    ["917.555.0134", "US", "+19175550134"],
    ["+1 212 555 0100", "GB", "+12125550100"],
    ["020 7946 0958", "GB", "+442079460958"],
    ["+44 20 7946 0958", "US", "+442079460958"],
    ["06 12 34 56 78", "FR", "+33612345678"],
    ["0049 30 1234567", "DE", "+49301234567"],
  ])("%s read in %s → %s", (text, country, e164) => {
    expect(normalizePhone(text, country)).toBe(e164);
  });

  it.each([
    ["12345", "US"],
    ["+1 123 456 7890", "US"],
    ["+999 1234", "US"],
    ["not a phone", "US"],
    ["", "US"],
    ["917 555 0134", "XX"],
    ["917 555 0134", "us"],
  ])("%j in %s is not a valid number", (text, country) => {
    expect(normalizePhone(text, country)).toBeNull();
  });
});

describe("isPhoneCountry", () => {
  it.each([
    ["US", true],
    ["GB", true],
    ["FR", true],
    ["us", false],
    ["USA", false],
    ["XX", false],
    ["", false],
  ])("%j → %s", (code, supported) => {
    expect(isPhoneCountry(code)).toBe(supported);
  });
});
