import { describe, expect, it } from "vitest";
import { parseCsv } from "../../src/lib/csv";

describe("parseCsv", () => {
  it.each([
    [
      "a,b\n1,2\n",
      [
        ["a", "b"],
        ["1", "2"],
      ],
    ],
    [
      "a,b\r\n1,2",
      [
        ["a", "b"],
        ["1", "2"],
      ],
    ],
    ['name\n"Smith, Jones"\n', [["name"], ["Smith, Jones"]]],
    ['name\n"say ""hi"""\n', [["name"], ['say "hi"']]],
    [
      'a,b\n"line 1\nline 2",x\n',
      [
        ["a", "b"],
        ["line 1\nline 2", "x"],
      ],
    ],
    [
      "\uFEFFa,b\n,\n",
      [
        ["a", "b"],
        ["", ""],
      ],
    ],
    ["a\n\n", [["a"], [""]]],
  ])("%j", (input, expected) => {
    expect(parseCsv(input)).toEqual(expected);
  });

  it("refuses an unterminated quote", () => {
    expect(() => parseCsv('a\n"open')).toThrow(/unterminated/);
  });
});
