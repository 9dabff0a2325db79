import { describe, expect, it } from "vitest";
import { toFieldErrors } from "../../src/http/validate";
import { createContactBody } from "../../src/schemas/contacts";
import { createLeadBody } from "../../src/schemas/leads";

const errorsOf = (schema: typeof createLeadBody | typeof createContactBody, input: Record<string, unknown>) => {
  const result = schema().safeParse(input);
  if (result.success) return [];
  return toFieldErrors(result.error.issues, input, Object.keys(createLeadBody().shape)).map(({ path, code }) => ({
    path,
    code,
  }));
};

describe("lead validation", () => {
  it.each([
    [{ firstName: 3 }, [{ path: "firstName", code: "invalid_type" }]],
    [{ firstName: "x".repeat(201) }, [{ path: "firstName", code: "too_long" }]],
    [{ firstName: "\ud800" }, [{ path: "firstName", code: "invalid_string" }]],
    [{ firstName: "a\u0000b" }, [{ path: "firstName", code: "invalid_string" }]],
    [{ email: "no-at-sign" }, [{ path: "email", code: "invalid_format" }]],
    [{ leadSource: 1.5 }, [{ path: "leadSource", code: "invalid_type" }]],
    [{ rating: -1 }, [{ path: "rating", code: "out_of_range" }]],
    [{ accountType: 2147483648 }, [{ path: "accountType", code: "out_of_range" }]],
    [{ estimatedValue: -0.01 }, [{ path: "estimatedValue", code: "out_of_range" }]],
    [{ estimatedCloseDate: "2026-11-23T14:00:00" }, [{ path: "estimatedCloseDate", code: "invalid_format" }]],
    [{ firstname: "x" }, [{ path: "firstname", code: "unknown_field" }]],
    [
      { email: "bad", FIRSTNAME: "x", zzz: 1 },
      [
        { path: "email", code: "invalid_format" },
        { path: "FIRSTNAME", code: "unknown_field" },
        { path: "zzz", code: "unknown_field" },
      ],
    ],
  ])("%j → %j", (input, expected) => {
    expect(errorsOf(createLeadBody, input)).toEqual(expected);
  });

  it.each([
    ["companyname", "companyName"],
    ["company_name", "companyName"],
    ["Company-Name", "companyName"],
    ["first_name", "firstName"],
    ["ESTIMATED_CLOSE_DATE", "estimatedCloseDate"],
  ])("hints at the field an unknown one resembles, ignoring case, _ and - (%s → %s)", (sent, known) => {
    const result = createLeadBody().safeParse({ [sent]: "x" });
    expect(result.success).toBe(false);
    const [error] = toFieldErrors(result.error!.issues, {}, Object.keys(createLeadBody().shape));
    expect(error?.message).toBe(`unknown field; did you mean '${known}'?`);
  });

  it.each(["company__", "compname", "first.name"])("gives no hint for a name that is not one (%s)", (sent) => {
    const result = createLeadBody().safeParse({ [sent]: "x" });
    const [error] = toFieldErrors(result.error!.issues, {}, Object.keys(createLeadBody().shape));
    expect(error).toEqual({ path: sent, code: "unknown_field", message: "unknown field" });
  });

  it("trims strings and reads empty strings and null as absent", () => {
    const lead = createLeadBody().parse({ firstName: "  Ann  ", lastName: "   ", title: null });
    expect(lead).toMatchObject({ firstName: "Ann", lastName: null, title: null, email: null });
  });
});

describe("contact validation", () => {
  it.each([
    [{}, [{ path: "", code: "required_one_of" }]],
    [{ city: "Boston", firstName: "  " }, [{ path: "", code: "required_one_of" }]],
    [{ mobilePhone: "+1 555 0100" }, []],
    [{ mobilePhone: "1".repeat(41) }, [{ path: "mobilePhone", code: "too_long" }]],
  ])("%j → %j", (input, expected) => {
    expect(errorsOf(createContactBody, input)).toEqual(expected);
  });
});
