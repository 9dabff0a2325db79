// A D1 binding that fails chosen round trips, the way D1 fails in production:
// the Nth round trip, the ones whose SQL matches a pattern, or every one, with
// D1's own error messages. A round trip is one statement call (first, all,
// raw, run) or one batch, on the binding or on any session of it
// (withSession); the app runs unchanged on top of it, like d1-recorder.ts.
// A failed round trip never reaches D1, so it writes nothing — except in the
// mid-batch mode, where the batch does run on the real D1, its first
// statements execute, and a later one fails: D1 must roll the whole batch back.

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

export interface Trip {
  /** 1-based, counted over the binding and all its sessions. */
  index: number;
  sql: string[];
  /** True when this round trip failed because of the plan. */
  failed: boolean;
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

export interface FaultPlan {
  /** Round trips that fail before reaching D1. */
  fail?: TripMatcher;
  /** The error a failing round trip rejects with (default: D1 overloaded). */
  error?: () => Error;
  /**
   * Batches (matched like `fail`) that run on the real D1 but fail after their
   * statement number `after` (1-based) has executed and changed rows.
   */
  midBatch?: { match: TripMatcher; after: number };
}

export interface FaultyD1 {
  db: D1Database;
  trips: Trip[];
  /** The round trips the plan failed. */
  failed: () => Trip[];
}

// Fails at run time only when the statement before it changed rows, so that
// a batch fails only once a write of it has really happened inside D1.
const AFTER_A_WRITE = "SELECT CASE WHEN changes() > 0 THEN json('fault injected mid-batch') ELSE 0 END AS fault";

const REAL = Symbol("real statement");
type Wrapped = D1PreparedStatement & { [REAL]: D1PreparedStatement; sql: string };
type Client = Pick<D1Database, "prepare" | "batch">;

export function faultyD1(real: D1Database, plan: FaultPlan = {}): FaultyD1 {
  const trips: Trip[] = [];
  const error = plan.error ?? d1Error(D1_RETRYABLE.overloaded);
  const begin = (sql: string[]): Trip => {
    const trip: Trip = { index: trips.length + 1, sql, failed: false };
    trips.push(trip);
    if (plan.fail?.(trip)) trip.failed = true;
    return trip;
  };
  const through = <T>(sql: string, call: () => Promise<T>): Promise<T> =>
    begin([sql]).failed ? Promise.reject(error()) : call();

  const wrap = (stmt: D1PreparedStatement, sql: string): Wrapped =>
    ({
      [REAL]: stmt,
      sql,
      bind: (...params: unknown[]) => wrap(stmt.bind(...params), sql),
      first: (column?: string) => through(sql, () => (column === undefined ? stmt.first() : stmt.first(column))),
      all: () => through(sql, () => stmt.all()),
      run: () => through(sql, () => stmt.run()),
      raw: (options?: { columnNames?: boolean }) => through(sql, () => stmt.raw(options as { columnNames: true })),
    }) as unknown as Wrapped;

  const client = (target: Client) => ({
    prepare: (sql: string) => wrap(target.prepare(sql), sql),
    batch: async (statements: Wrapped[]) => {
      const trip = begin(statements.map((s) => s.sql));
      if (trip.failed) throw error();
      const real = statements.map((s) => s[REAL]);
      const mid = plan.midBatch;
      if (!mid?.match(trip) || mid.after >= statements.length) return target.batch(real);
      const poisoned = [...real.slice(0, mid.after), target.prepare(AFTER_A_WRITE), ...real.slice(mid.after)];
      let results: D1Result[];
      try {
        results = await target.batch(poisoned);
      } catch (cause) {
        trip.failed = true;
        throw Object.assign(error(), { cause });
      }
      // The statement before the poison changed nothing, so nothing failed.
      return [...results.slice(0, mid.after), ...results.slice(mid.after + 1)];
    },
  });

  const db = {
    ...client(real),
    exec: (sql: string) => through(sql, () => real.exec(sql)),
    withSession: (start?: string) => {
      const session = real.withSession(start);
      return { ...client(session), getBookmark: () => session.getBookmark() };
    },
    dump: () => real.dump(),
  } as unknown as D1Database;
  return { db, trips, failed: () => trips.filter((trip) => trip.failed) };
}
