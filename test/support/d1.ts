// A D1 binding around the real one that records every round trip a request
// makes and can fail chosen ones, the way D1 fails in production. The app runs
// unchanged on top of it.
//
// A round trip is one statement call (first, all, raw, run), one batch or one
// exec, on the binding or on any session of it (withSession). Each is recorded
// with its statements' SQL and parameters and the rows D1 says it read
// (`meta.rows_read`); the sessions the app opens are recorded by where they
// start (a constraint or a client's bookmark).
//
// Faults, with D1's own error messages: the round trips a matcher picks (the
// Nth, the first whose SQL matches a pattern, every one…) fail before reaching
// D1, so they write nothing — except in the mid-batch mode, where the batch does
// run on the real D1, its first statements execute, and a later one fails: D1
// must roll the whole batch back.

export interface Statement {
  sql: string;
  params: unknown[];
}

export class Trip {
  /** D1's `meta.rows_read`, summed over the round trip's statements. */
  rowsRead = 0;
  /** True when this round trip failed because of the fault plan. */
  failed = false;

  constructor(
    /** 1-based, counted over the binding and all its sessions. */
    readonly index: number,
    readonly statements: Statement[],
  ) {}

  get sql(): string[] {
    return this.statements.map((statement) => statement.sql);
  }
}

export type TripMatcher = (trip: Trip) => boolean;

export const nthTrip =
  (n: number): TripMatcher =>
  (trip) =>
    trip.index === n;
export const fromTrip =
  (n: number): TripMatcher =>
  (trip) =>
    trip.index >= n;
export const everyTrip: TripMatcher = () => true;
/** The first round trip any of whose statements matches `pattern`. */
export function firstMatching(pattern: RegExp): TripMatcher {
  let seen = false;
  return (trip) => {
    if (seen || !trip.sql.some((sql) => pattern.test(sql))) return false;
    seen = true;
    return true;
  };
}
/** Every round trip any of whose statements matches `pattern` (a batch holding one fails whole). */
export const everyMatching =
  (pattern: RegExp): TripMatcher =>
  (trip) =>
    trip.sql.some((sql) => pattern.test(sql));

/** D1's messages for failures worth a retry (https://developers.cloudflare.com/d1/observability/debug-d1/). */
export const D1_RETRYABLE = {
  overloaded: "D1_ERROR: D1 DB is overloaded. Too many requests queued.",
  networkLost: "D1_ERROR: Network connection lost.",
  storageReset: "D1_ERROR: D1 DB storage caused object to be reset.",
  codeUpdated: "D1_ERROR: D1 DB reset because its code was updated.",
} as const;

/** D1 throws an Error whose message starts with D1_ERROR and whose cause is the bare reason. */
export const d1Error = (message: string) => () =>
  new Error(message, { cause: new Error(message.replace(/^D1_ERROR: /, "")) });

export interface FaultPlan {
  /** Round trips that fail before reaching D1. */
  fail?: TripMatcher;
  /** The error a failing round trip rejects with (default: D1 overloaded). */
  error?: () => Error;
  /**
   * Batches (matched like `fail`) that run on the real D1 but fail after their
   * statement number `after` (1-based), or the first statement whose SQL
   * matches `after`, has executed and changed rows (the last: as the batch ends).
   */
  midBatch?: { match: TripMatcher; after: number | RegExp };
}

export interface WrappedD1 {
  db: D1Database;
  trips: Trip[];
  /** Bookmarks the app's sessions started from ("first-unconstrained", "first-primary" or a client's bookmark). */
  sessions: string[];
  /** The round trips the plan failed. */
  failed: () => Trip[];
}

/** The rows D1 read over these round trips. */
export const rowsRead = (trips: Trip[]) => trips.reduce((sum, trip) => sum + trip.rowsRead, 0);

// Fails at run time only when the statement before it changed rows, so that
// a batch fails only once a write of it has really happened inside D1.
const AFTER_A_WRITE = "SELECT CASE WHEN changes() > 0 THEN json('fault injected mid-batch') ELSE 0 END AS fault";

const REAL = Symbol("real statement");
type Wrapped = D1PreparedStatement & { [REAL]: D1PreparedStatement; statement: Statement };
type Client = Pick<D1Database, "prepare" | "batch">;

const metaRowsRead = (result: D1Result | D1Response) => result.meta.rows_read ?? 0;

export function wrapD1(real: D1Database, plan: FaultPlan = {}): WrappedD1 {
  const trips: Trip[] = [];
  const sessions: string[] = [];
  const error = plan.error ?? d1Error(D1_RETRYABLE.overloaded);
  const begin = (statements: Statement[]): Trip => {
    const trip = new Trip(trips.length + 1, statements);
    trips.push(trip);
    if (plan.fail?.(trip)) trip.failed = true;
    return trip;
  };

  const wrap = (stmt: D1PreparedStatement, statement: Statement): Wrapped => {
    // first() and raw() do not return D1's meta: for a read-only statement the
    // wrapper also runs all() to learn rows_read (not counted as a round trip).
    const readOnly = /^\s*(select|with)\b/i.test(statement.sql) && !/\b(insert|update|delete)\b/i.test(statement.sql);
    const metered = async <T>(call: () => Promise<T>) => {
      const trip = begin([statement]);
      if (trip.failed) throw error();
      if (readOnly) trip.rowsRead = metaRowsRead(await stmt.all());
      return call();
    };
    const withMeta = async (call: () => Promise<D1Result>) => {
      const trip = begin([statement]);
      if (trip.failed) throw error();
      const result = await call();
      trip.rowsRead = metaRowsRead(result);
      return result;
    };
    return {
      [REAL]: stmt,
      statement,
      bind: (...params: unknown[]) => wrap(stmt.bind(...params), { sql: statement.sql, params }),
      first: (column?: string) => metered(() => (column === undefined ? stmt.first() : stmt.first(column))),
      raw: (options?: { columnNames?: boolean }) => metered(() => stmt.raw(options as { columnNames: true })),
      run: () => withMeta(() => stmt.run()),
      all: () => withMeta(() => stmt.all()),
    } as unknown as Wrapped;
  };

  const client = (target: Client) => ({
    prepare: (sql: string) => wrap(target.prepare(sql), { sql, params: [] }),
    batch: async (statements: Wrapped[]) => {
      const trip = begin(statements.map((s) => s.statement));
      if (trip.failed) throw error();
      const real = statements.map((s) => s[REAL]);
      const mid = plan.midBatch;
      const after =
        mid?.after instanceof RegExp
          ? statements.findIndex((s) => (mid.after as RegExp).test(s.statement.sql)) + 1
          : (mid?.after ?? 0);
      let results: D1Result[];
      if (!mid?.match(trip) || after < 1 || after > statements.length) results = await target.batch(real);
      else {
        const poisoned = [...real.slice(0, after), target.prepare(AFTER_A_WRITE), ...real.slice(after)];
        try {
          results = await target.batch(poisoned);
        } catch (cause) {
          trip.failed = true;
          throw Object.assign(error(), { cause });
        }
        // The statement before the poison changed nothing, so nothing failed.
        results = [...results.slice(0, after), ...results.slice(after + 1)];
      }
      trip.rowsRead = results.reduce((sum, result) => sum + metaRowsRead(result), 0);
      return results;
    },
  });

  const db = {
    ...client(real),
    exec: async (sql: string) => {
      if (begin([{ sql, params: [] }]).failed) throw error();
      return real.exec(sql);
    },
    withSession: (start?: string) => {
      sessions.push(start ?? "first-unconstrained");
      const session = real.withSession(start);
      return { ...client(session), getBookmark: () => session.getBookmark() };
    },
    dump: () => real.dump(),
  } as unknown as D1Database;
  return { db, trips, sessions, failed: () => trips.filter((trip) => trip.failed) };
}
