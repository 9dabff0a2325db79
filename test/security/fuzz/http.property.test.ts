// Fuzzing every /api/v1 operation (issue 6): RUNS generated requests per
// operation with a fixed seed — wrong types, huge and malformed Unicode, NUL,
// naive, impossible and DST-gap date-times, absurd limits, tampered and
// foreign cursors, unknown fields, raw non-JSON bodies, wrong media types and
// Idempotency-Keys, and valid bodies with one field mutated. Every answer must
// be below 500, a problem document when it is an error, a 422 that names the
// offending fields (worked out by an oracle independent of the server), the
// contract's outcome for a valid body, never another org's data — and nothing
// may be stored but what the 2xx answers announce (row counts of the org and
// of another org after every request, and the exact ids after each property).
import type fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  type Answer,
  answerOf,
  type Counts,
  countRows,
  expectNothingOf,
  expectSaneHttp,
  expectShare,
  type Fixture,
  type Foreign,
  FUZZ_SEED,
  newForeign,
  RUNS,
  resolve,
  runFuzz,
  send,
} from "./harness";
import {
  checkParsed,
  expectValidationFailed,
  isReplay,
  POST_OPS,
  type PostOp,
  postCases,
  postRequest,
  precondition,
  sentKey,
} from "./operations";
import {
  accountCases,
  accountSegment,
  expectAccountAnswer,
  expectPage,
  listCases,
  listVerdict,
  QUERY_FIELDS,
} from "./reads";
import { Sym } from "./values";

// 1,000 requests take 2–10 s here; the limit leaves room for a slow machine and for shrinking.
const TIMEOUT = 120_000;
let foreign: Foreign;
let foreignCounts: Counts;

beforeAll(async () => {
  foreign = await newForeign();
  foreignCounts = await countRows(foreign.tenant.orgId);
  // One request-log line per request is thousands of lines of noise here (and more than half the run time).
  vi.spyOn(console, "log").mockImplementation(() => {});
});
afterAll(() => {
  vi.restoreAllMocks();
});

const fuzz = <T>(cases: fc.Arbitrary<T>, check: (fx: Fixture, c: T) => Promise<Answer>) =>
  runFuzz(cases, check, foreign, foreignCounts);
const expectNothingForeign = (answer: Answer, sent: string) => expectNothingOf(foreign, answer, sent);

async function fuzzPost(
  op: PostOp,
  fx: Fixture,
  c: ReturnType<typeof postCases> extends fc.Arbitrary<infer C> ? C : never,
) {
  const req = postRequest(c, fx, foreign, Date.now());
  const headers = new Headers();
  if (req.contentType !== null) headers.set("Content-Type", req.contentType);
  if (req.idempotencyKey !== undefined) headers.set("Idempotency-Key", req.idempotencyKey);
  const key = sentKey(req.idempotencyKey);
  const sentText = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true }).decode(req.bytes);
  const identity = `${op.path} ${sentText}`;
  const expected = precondition(req);
  let answer: Answer | undefined;
  // A request with an Idempotency-Key goes twice: the second is a replay exactly when the first was stored.
  for (let attempt = 0; attempt < (key === undefined ? 1 : 2); attempt++) {
    const replay = "parsed" in expected && isReplay(fx, identity, key);
    const res = await send(fx, op.path, { method: "POST", headers, rawBody: req.bytes });
    expectSaneHttp(res, replay);
    expect(res.headers.get("Idempotent-Replayed")).toBe(replay ? "true" : null);
    answer = answerOf(res);
    if ("parsed" in expected) checkParsed(op, fx, expected.parsed, identity, key, answer);
    else expect([answer.status, answer.body.code], answer.text).toEqual([expected.status, expected.code]);
    expectNothingForeign(answer, sentText);
  }
  return answer!;
}

describe(`fuzzing every endpoint (seed ${FUZZ_SEED}, ${RUNS} generated requests each)`, () => {
  it.each(POST_OPS.map((op) => [op.name, op] as const))(
    `%s: ${RUNS} bodies`,
    async (_name, op) => {
      const statuses = await fuzz(postCases(op), (fx, c) => fuzzPost(op, fx, c));
      expectShare(statuses, 200, 0.1);
      expectShare(statuses, 422, 0.3);
    },
    TIMEOUT,
  );

  it(
    `GET /api/v1/contacts: ${RUNS} query strings`,
    async () => {
      const statuses = await fuzz(listCases, async (fx, c) => {
        const params = new URLSearchParams();
        for (const [name, value] of c.pairs) params.append(name, String(resolve(value, fx, foreign, Date.now())));
        const path = `/api/v1/contacts?${params}${c.suffix ?? ""}`;
        const res = await send(fx, path);
        expectSaneHttp(res);
        const answer = answerOf(res);
        const pairs = [...new URL(path, "https://api.test").searchParams];
        // Raw suffixes may decode differently from URLSearchParams: then only the names are known.
        const { verdict, must, may } =
          c.suffix === null
            ? listVerdict(pairs, fx)
            : { verdict: "unknown", must: [], may: new Set(pairs.map(([n]) => n)) };
        if (verdict === "invalid") expectValidationFailed(answer, must, may, QUERY_FIELDS);
        else if (verdict === "unknown" && res.status === 422) expectValidationFailed(answer, [], may);
        else expectPage(answer, pairs, fx);
        expectNothingForeign(answer, [...params.values()].join(" "));
        return answer;
      });
      expectShare(statuses, 200, 0.1);
      expectShare(statuses, 422, 0.3);
    },
    TIMEOUT,
  );

  it(
    `GET /api/v1/accounts/{id}: ${RUNS} ids`,
    async () => {
      const statuses = await fuzz(accountCases, async (fx, c) => {
        const segment =
          c.segment instanceof Sym
            ? accountSegment(String(resolve(c.segment, fx, foreign, Date.now())), c.variant)
            : c.segment;
        const res = await send(
          fx,
          `/api/v1/accounts/${c.raw ? segment : encodeURIComponent(segment.toWellFormed())}${c.query}`,
        );
        expectSaneHttp(res);
        const answer = answerOf(res);
        expectAccountAnswer(answer, c.raw ? null : segment, fx);
        expectNothingForeign(answer, segment);
        return answer;
      });
      expectShare(statuses, 200, 0.1);
      expectShare(statuses, 404, 0.3);
    },
    TIMEOUT,
  );
});
