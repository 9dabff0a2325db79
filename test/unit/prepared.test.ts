import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { accounts } from "../../drizzle/schema";
import { createDb, param, prepared, preparedPer } from "../../src/db/client";

// A D1 stand-in that only records what it is asked to prepare.
function recordingDb() {
  const prepares: string[] = [];
  const db = createDb({
    prepare: (query: string) => {
      prepares.push(query);
      return {} as D1PreparedStatement;
    },
    batch: async () => [],
  });
  return { db, prepares };
}

describe("preparedPer", () => {
  it("builds one statement per template, on its first use, and binds each request's values", () => {
    const built: unknown[] = [];
    const readOf = preparedPer((template, table: typeof accounts) => {
      built.push(template);
      return prepared((db) =>
        db
          .select({ value: sql`${template}` })
          .from(table)
          .where(sql`${table.orgId} = ${param("orgId")}`),
      );
    });
    const one = sql`json_set(${param("view")}, '$.a', 1)`;
    const two = sql`json_set(${param("view")}, '$.b', 2)`;
    expect(built).toEqual([]);
    expect(readOf(one, accounts)).toBe(readOf(one, accounts));
    expect(readOf(two, accounts)).not.toBe(readOf(one, accounts));
    expect(built).toEqual([one, two]);

    const { db, prepares } = recordingDb();
    const first = readOf(one, accounts)(db, { view: "{}", orgId: "org_a" }) as unknown as {
      query: { sql: string; params: unknown[] };
    };
    const second = readOf(one, accounts)(db, { view: "[]", orgId: "org_b" }) as unknown as typeof first;
    expect(first.query.sql).toBe(second.query.sql);
    expect(first.query.sql).toContain("'$.a'");
    expect(first.query.params).toEqual(["{}", "org_a"]);
    expect(second.query.params).toEqual(["[]", "org_b"]);
    // Each request's statement is prepared on its own session, with the one SQL text.
    expect(prepares).toEqual([first.query.sql, first.query.sql]);
  });

  it("refuses a request that leaves one of the template's placeholders without a value", () => {
    const readOf = preparedPer((template) =>
      prepared((db) =>
        db
          .select({ value: sql`${template}` })
          .from(accounts)
          .limit(1),
      ),
    );
    const { db } = recordingDb();
    expect(() => readOf(sql`${param("view")}`)(db, {})).toThrow(/view/);
  });
});
