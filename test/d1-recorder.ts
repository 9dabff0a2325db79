// A D1 binding that records what a request sends: one entry per round trip
// (a single statement or a batch), with each statement's SQL and parameters.
// The app runs unchanged on top of it (see budget.test.ts).
export interface Statement {
  sql: string;
  params: unknown[];
}

export interface Recorder {
  db: D1Database;
  roundTrips: Statement[][];
}

const REAL = Symbol("real statement");
type Recorded = D1PreparedStatement & { [REAL]: D1PreparedStatement; statement: Statement };

export function recordingD1(real: D1Database): Recorder {
  const roundTrips: Statement[][] = [];
  const wrap = (stmt: D1PreparedStatement, statement: Statement): Recorded => {
    const once =
      <T>(call: () => Promise<T>) =>
      () => {
        roundTrips.push([statement]);
        return call();
      };
    return {
      [REAL]: stmt,
      statement,
      bind: (...params: unknown[]) => wrap(stmt.bind(...params), { sql: statement.sql, params }),
      first: (column?: string) => once(() => (column === undefined ? stmt.first() : stmt.first(column)))(),
      run: once(() => stmt.run()),
      all: once(() => stmt.all()),
      raw: (options?: { columnNames?: boolean }) => once(() => stmt.raw(options as { columnNames: true }))(),
    } as unknown as Recorded;
  };
  const db = {
    prepare: (sql: string) => wrap(real.prepare(sql), { sql, params: [] }),
    batch: (statements: Recorded[]) => {
      roundTrips.push(statements.map((s) => s.statement));
      return real.batch(statements.map((s) => s[REAL]));
    },
    exec: (sql: string) => {
      roundTrips.push([{ sql, params: [] }]);
      return real.exec(sql);
    },
    withSession: () => {
      throw new Error("not recorded");
    },
    dump: () => real.dump(),
  } as unknown as D1Database;
  return { db, roundTrips };
}
