// A D1 binding that records what a request sends: one entry per round trip
// (a single statement or a batch), with each statement's SQL and parameters
// and the rows D1 says it read. Sessions (withSession) are recorded alike.
// The app runs unchanged on top of it (see budget.test.ts).
export interface Statement {
  sql: string;
  params: unknown[];
}

export interface RoundTrip {
  statements: Statement[];
  /** D1's `meta.rows_read`, summed over the round trip's statements. */
  rowsRead: number;
}

export interface Recorder {
  db: D1Database;
  roundTrips: RoundTrip[];
  /** Bookmarks the app's sessions started from (a constraint or a client's bookmark). */
  sessions: string[];
}

const REAL = Symbol("real statement");
type Recorded = D1PreparedStatement & { [REAL]: D1PreparedStatement; statement: Statement };
type Client = Pick<D1Database, "prepare" | "batch">;

const rowsRead = (result: D1Result | D1Response) => result.meta.rows_read ?? 0;

export function recordingD1(real: D1Database): Recorder {
  const roundTrips: RoundTrip[] = [];
  const sessions: string[] = [];
  const wrap = (stmt: D1PreparedStatement, statement: Statement): Recorded => {
    const trip = (): RoundTrip => {
      const entry = { statements: [statement], rowsRead: 0 };
      roundTrips.push(entry);
      return entry;
    };
    // first() and raw() do not return D1's meta: for a read-only statement the
    // recorder also runs all() to learn rows_read (not counted as a trip).
    const readOnly = /^\s*(select|with)\b/i.test(statement.sql) && !/\b(insert|update|delete)\b/i.test(statement.sql);
    const metered = async <T>(call: () => Promise<T>) => {
      const entry = trip();
      if (readOnly) entry.rowsRead = rowsRead(await stmt.all());
      return call();
    };
    return {
      [REAL]: stmt,
      statement,
      bind: (...params: unknown[]) => wrap(stmt.bind(...params), { sql: statement.sql, params }),
      first: (column?: string) => metered(() => (column === undefined ? stmt.first() : stmt.first(column))),
      run: async () => {
        const entry = trip();
        const result = await stmt.run();
        entry.rowsRead = rowsRead(result);
        return result;
      },
      all: async () => {
        const entry = trip();
        const result = await stmt.all();
        entry.rowsRead = rowsRead(result);
        return result;
      },
      raw: (options?: { columnNames?: boolean }) => metered(() => stmt.raw(options as { columnNames: true })),
    } as unknown as Recorded;
  };
  const client = (target: Client) => ({
    prepare: (sql: string) => wrap(target.prepare(sql), { sql, params: [] }),
    batch: async (statements: Recorded[]) => {
      const entry: RoundTrip = { statements: statements.map((s) => s.statement), rowsRead: 0 };
      roundTrips.push(entry);
      const results = await target.batch(statements.map((s) => s[REAL]));
      entry.rowsRead = results.reduce((sum, result) => sum + rowsRead(result), 0);
      return results;
    },
  });
  const db = {
    ...client(real),
    exec: (sql: string) => {
      roundTrips.push({ statements: [{ sql, params: [] }], rowsRead: 0 });
      return real.exec(sql);
    },
    withSession: (start?: string) => {
      sessions.push(start ?? "first-unconstrained");
      const session = real.withSession(start);
      return { ...client(session), getBookmark: () => session.getBookmark() };
    },
    dump: () => real.dump(),
  } as unknown as D1Database;
  return { db, roundTrips, sessions };
}
