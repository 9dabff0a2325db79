// Fuzzing every /api/v1 operation: RUNS generated requests per
// operation with a fixed seed — wrong types, huge and malformed Unicode, NUL,
// naive, impossible and DST-gap date-times and ones at the ends of the range
// (through offsets), strings at and just over their limits in UTF-16 code
// units, absurd limits, tampered, forged (decoded, changed, encoded again) and
// foreign cursors, unknown fields, unknown and empty query parameters on every
// operation, raw non-JSON bodies, wrong media types and Idempotency-Keys, and
// valid bodies with one field mutated (issues 6 and 21). Every answer must
// be below 500, a problem document when it is an error, a 422 that names the
// offending fields (worked out by an oracle independent of the server), the
// documented outcome for a valid body (for find-caller, the incident reads
// and lists, cancel, reschedule, hold and release: exactly the answer the
// fixture's contacts, accounts, incidents and holds, as the answers so far
// left them, call for), never another org's data — and nothing may be stored
// but what the 2xx answers announce (row counts of the org and of another org
// after every request, every incident of both after each cancel or
// reschedule, every hold of both after each hold or release, and the exact
// ids after each property). A test checks that every operation src/routes
// declares is fuzzed here.
import type fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { OPERATIONS } from "../../../src/routes";
import { call } from "../../support/request";
import { BOARD_QUERY_FIELDS, boardQueryCases, boardValue, boardVerdict, expectBoard } from "./board";
import {
  type Answer,
  answerOf,
  bookFresh,
  type Counts,
  countRows,
  expectHoldsAsAnswered,
  expectIncidentsAsAnswered,
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
  withNumbers,
} from "./harness";
import {
  checkParsed,
  expectValidationFailed,
  isReplay,
  POST_OPS,
  type PostCase,
  type PostOp,
  pathOf,
  postCases,
  postRequest,
  precondition,
  sentKey,
  spoil,
} from "./operations";
import { noQueryVerdict } from "./oracle";
import {
  expectPlanAnswer,
  expectPlanPage,
  PLAN_QUERY_FIELDS,
  planCases,
  planListCases,
  planListVerdict,
} from "./plans";
import {
  accountCases,
  accountSegment,
  contextQueries,
  EVENT_QUERY_FIELDS,
  eventListCases,
  eventListVerdict,
  expectAccountAnswer,
  expectByIdAnswer,
  expectContextAnswer,
  expectEventPage,
  expectIncidentAnswer,
  expectIncidentPage,
  expectPage,
  expectServicesAnswer,
  INCIDENT_QUERY_FIELDS,
  incidentCases,
  incidentListCases,
  incidentListVerdict,
  type ListCase,
  listCases,
  listVerdict,
  QUERY_FIELDS,
  serviceQueries,
} from "./reads";
import { Sym } from "./values";

// 1,000 requests take 2–10 s on a quiet machine, a minute and more on a busy
// one; the limit leaves room for that and for shrinking.
const TIMEOUT = 300_000;
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

/** The incident a case's path names: one of the fixture's, booked just now, another org's or junk. */
async function targetOf(fx: Fixture, c: PostCase): Promise<string | undefined> {
  if (!c.target) return undefined;
  if (c.target.id instanceof Sym && c.target.id.kind === "freshIncidentId") return bookFresh(fx);
  return String(resolve(c.target.id, fx, foreign, Date.now()));
}

async function fuzzPost(op: PostOp, fx: Fixture, c: PostCase) {
  const target = await targetOf(fx, c);
  const id = target === undefined ? undefined : spoil(target, c.target!.variant).toWellFormed();
  const path = pathOf(op, id, c.query);
  const query = noQueryVerdict(c.query ?? "");
  const req = postRequest(c, fx, foreign, Date.now(), target);
  const headers = new Headers();
  if (req.contentType !== null) headers.set("Content-Type", req.contentType);
  if (req.idempotencyKey !== undefined) headers.set("Idempotency-Key", req.idempotencyKey);
  const key = sentKey(req.idempotencyKey);
  const sentText = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true }).decode(req.bytes);
  const identity = `${path} ${sentText}`;
  const expected = precondition(req);
  let answer: Answer | undefined;
  // A request with an Idempotency-Key goes twice: the second is a replay exactly when the first was stored.
  for (let attempt = 0; attempt < (key === undefined ? 1 : 2); attempt++) {
    const replay = "parsed" in expected && isReplay(fx, identity, key);
    const before = Date.now();
    const res = await send(fx, path, { method: "POST", headers, rawBody: req.bytes });
    const sent = { id, before, after: Date.now() };
    expectSaneHttp(res, replay);
    expect(res.headers.get("Idempotent-Replayed")).toBe(replay ? "true" : null);
    answer = answerOf(res);
    if ("parsed" in expected) checkParsed(op, fx, expected.parsed, identity, key, answer, sent, query);
    else expect([answer.status, answer.body.code], answer.text).toEqual([expected.status, expected.code]);
    const values = "parsed" in expected ? Object.values(expected.parsed) : [];
    expectNothingForeign(answer, withNumbers(`${id ?? ""} ${sentText}`, values));
  }
  if (op.ids) await expectIncidentsAsAnswered(fx, foreign);
  if (op.holds) await expectHoldsAsAnswered(fx, foreign);
  return answer!;
}

/** The query of a generated list case, and the pairs the server reads (decided by the oracle only without raw text). */
function listQuery(fx: Fixture, base: string, c: ListCase) {
  const params = new URLSearchParams();
  for (const [name, value] of c.pairs) params.append(name, String(resolve(value, fx, foreign, Date.now())));
  const path = `${base}?${params}${c.suffix ?? ""}`;
  return { path, params, pairs: [...new URL(path, "https://api.test").searchParams] };
}

/** Whether a path segment reaches the operation: "", "." and ".." make another path; a raw one may. */
const routedBy = (raw: boolean, segment: string) =>
  raw ? ("maybe" as const) : !["", ".", ".."].includes(segment.toWellFormed());

/** Expected shares of statuses per operation: the generators must keep reaching every outcome. */
const SHARES: Record<string, [number, number][]> = {
  // At most 100 live holds per org (docs/api.md, "Holding a slot"): a fixture's 200s stop there, its 409s begin.
  "POST /api/v1/ai-agent/hold-slot": [
    [200, 0.05],
    [409, 0.02],
    [422, 0.3],
  ],
  "POST /api/v1/ai-agent/release-hold": [
    [200, 0.1],
    [422, 0.3],
  ],
  "POST /api/v1/ai-agent/find-caller": [
    [200, 0.1],
    [422, 0.3],
  ],
  "POST /api/v1/incidents/{id}/cancel": [
    [200, 0.1],
    [404, 0.05],
    [409, 0.005],
    [422, 0.3],
  ],
  "POST /api/v1/incidents/{id}/reschedule": [
    [200, 0.03],
    [404, 0.05],
    [409, 0.03],
    [422, 0.3],
  ],
  // A plan's body fails more ways than a booking's (every, visits): fewer 200s.
  "POST /api/v1/ai-agent/create-plan": [
    [200, 0.05],
    [422, 0.3],
  ],
  // Two of the seeded visits have started: most closes meet one not started (409) or another org's (404).
  "POST /api/v1/incidents/{id}/close": [
    [200, 0.004],
    [404, 0.05],
    [409, 0.05],
    [422, 0.3],
  ],
};
const DEFAULT_SHARES: [number, number][] = [
  [200, 0.1],
  [422, 0.3],
];

/** Every operation this file fuzzes, as "METHOD /path": the POSTs above and the GETs below. */
const GETS = [
  "GET /api/v1/contacts",
  "GET /api/v1/accounts/{id}",
  "GET /api/v1/incidents",
  "GET /api/v1/incidents/{id}",
  "GET /api/v1/events",
  "GET /api/v1/services",
  "GET /api/v1/ai-agent/context",
  "GET /api/v1/board",
  "GET /api/v1/plans",
  "GET /api/v1/plans/{id}",
];

describe(`fuzzing every endpoint (seed ${FUZZ_SEED}, ${RUNS} generated requests each)`, () => {
  it("fuzzes every operation the API declares (src/routes OPERATIONS)", () => {
    const fuzzed = [...POST_OPS.map((op) => `POST ${op.path}`), ...GETS].sort();
    expect(fuzzed).toEqual(OPERATIONS.map((op) => `${op.method.toUpperCase()} ${op.path}`).sort());
  });

  it.each(POST_OPS.map((op) => [op.name, op] as const))(
    `%s: ${RUNS} bodies`,
    async (name, op) => {
      const statuses = await fuzz(postCases(op), (fx, c) => fuzzPost(op, fx, c));
      for (const [status, share] of SHARES[name] ?? DEFAULT_SHARES) expectShare(statuses, status, share);
    },
    TIMEOUT,
  );

  it(
    `GET /api/v1/contacts: ${RUNS} query strings`,
    async () => {
      const statuses = await fuzz(listCases, async (fx, c) => {
        const { path, params, pairs } = listQuery(fx, "/api/v1/contacts", c);
        const res = await send(fx, path);
        expectSaneHttp(res);
        const answer = answerOf(res);
        // Raw suffixes may decode differently from URLSearchParams: then only the names are known.
        const { verdict, must, may } =
          c.suffix === null
            ? listVerdict(pairs, fx)
            : { verdict: "unknown" as const, must: [], may: new Set(pairs.map(([n]) => n)) };
        if (verdict === "invalid") expectValidationFailed(answer, must, may, QUERY_FIELDS);
        else if (verdict === "unknown" && res.status === 422) expectValidationFailed(answer, [], may);
        else expectPage(answer, pairs, fx, verdict);
        expectNothingForeign(answer, withNumbers([...params.values()].join(" "), [...params.values()]));
        return answer;
      });
      expectShare(statuses, 200, 0.1);
      expectShare(statuses, 422, 0.3);
    },
    TIMEOUT,
  );

  it(
    `GET /api/v1/incidents: ${RUNS} query strings`,
    async () => {
      const statuses = await fuzz(incidentListCases, async (fx, c) => {
        const { path, params, pairs } = listQuery(fx, "/api/v1/incidents", c);
        const res = await send(fx, path);
        expectSaneHttp(res);
        const answer = answerOf(res);
        const { verdict, must, may } =
          c.suffix === null
            ? incidentListVerdict(pairs, fx)
            : { verdict: "unknown" as const, must: [], may: new Set(pairs.map(([n]) => n)) };
        if (verdict === "invalid") expectValidationFailed(answer, must, may, INCIDENT_QUERY_FIELDS);
        else if (verdict === "unknown" && res.status === 422) expectValidationFailed(answer, [], may);
        else expectIncidentPage(answer, pairs, fx, verdict);
        expectNothingForeign(answer, withNumbers([...params.values()].join(" "), [...params.values()]));
        return answer;
      });
      expectShare(statuses, 200, 0.2);
      expectShare(statuses, 422, 0.2);
    },
    TIMEOUT,
  );

  it(
    `GET /api/v1/events: ${RUNS} query strings`,
    async () => {
      const statuses = await fuzz(eventListCases, async (fx, c) => {
        const { path, params, pairs } = listQuery(fx, "/api/v1/events", c);
        const res = await send(fx, path);
        expectSaneHttp(res);
        const answer = answerOf(res);
        const { verdict, must, may } =
          c.suffix === null
            ? eventListVerdict(pairs, fx)
            : { verdict: "unknown" as const, must: [], may: new Set(pairs.map(([n]) => n)) };
        if (verdict === "invalid") expectValidationFailed(answer, must, may, EVENT_QUERY_FIELDS);
        else if (verdict === "unknown" && res.status === 422) expectValidationFailed(answer, [], may);
        else expectEventPage(answer, pairs, fx, verdict);
        expectNothingForeign(answer, [...params.values()].join(" "));
        return answer;
      });
      expectShare(statuses, 200, 0.2);
      expectShare(statuses, 422, 0.2);
    },
    TIMEOUT,
  );

  it(
    `GET /api/v1/services: ${RUNS} query strings`,
    async () => {
      const statuses = await fuzz(serviceQueries, async (fx, query) => {
        const res = await send(fx, `/api/v1/services${query}`);
        expectSaneHttp(res);
        const answer = answerOf(res);
        expectByIdAnswer(answer, query, true, () => expectServicesAnswer(answer, fx));
        expectNothingForeign(answer, query);
        return answer;
      });
      expectShare(statuses, 200, 0.3);
      expectShare(statuses, 422, 0.1);
    },
    TIMEOUT,
  );

  it(
    `GET /api/v1/board: ${RUNS} query strings`,
    async () => {
      const statuses = await fuzz(boardQueryCases, async (fx, pairs) => {
        const params = new URLSearchParams();
        for (const [name, value] of pairs) params.append(name, String(boardValue(value, fx)));
        const before = Date.now();
        const res = await send(fx, `/api/v1/board?${params}`);
        const after = Date.now();
        expectSaneHttp(res);
        const answer = answerOf(res);
        const { verdict, must, may, date } = boardVerdict([...params]);
        if (verdict === "invalid") expectValidationFailed(answer, must, may, BOARD_QUERY_FIELDS);
        else if (verdict === "unknown" && res.status === 422) expectValidationFailed(answer, [], may);
        else expectBoard(answer, fx, date, before, after);
        expectNothingForeign(answer, params.toString());
        return answer;
      });
      expectShare(statuses, 200, 0.3);
      expectShare(statuses, 422, 0.2);
    },
    TIMEOUT,
  );

  it(
    `GET /api/v1/ai-agent/context: ${RUNS} query strings`,
    async () => {
      const statuses = await fuzz(contextQueries, async (fx, query) => {
        const before = Date.now();
        const res = await send(fx, `/api/v1/ai-agent/context${query}`);
        const after = Date.now();
        expectSaneHttp(res);
        const answer = answerOf(res);
        expectByIdAnswer(answer, query, true, () => expectContextAnswer(answer, fx, before, after));
        expectNothingForeign(answer, query);
        return answer;
      });
      expectShare(statuses, 200, 0.3);
      expectShare(statuses, 422, 0.1);
    },
    TIMEOUT,
  );

  it(
    `GET /api/v1/plans: ${RUNS} query strings`,
    async () => {
      const statuses = await fuzz(planListCases, async (fx, pairs) => {
        const params = new URLSearchParams();
        for (const [name, value] of pairs) params.append(name, String(resolve(value, fx, foreign, Date.now())));
        const res = await send(fx, `/api/v1/plans?${params}`);
        expectSaneHttp(res);
        const answer = answerOf(res);
        const { verdict, must, may, filters } = planListVerdict([...params]);
        if (verdict === "invalid") expectValidationFailed(answer, must, may, PLAN_QUERY_FIELDS);
        else if (verdict === "unknown" && res.status === 422) expectValidationFailed(answer, [], may);
        else expectPlanPage(answer, filters, fx);
        expectNothingForeign(answer, withNumbers([...params.values()].join(" "), [...params.values()]));
        return answer;
      });
      expectShare(statuses, 200, 0.2);
      expectShare(statuses, 422, 0.2);
    },
    TIMEOUT,
  );

  it(
    `GET /api/v1/plans/{id}: ${RUNS} ids`,
    async () => {
      const statuses = await fuzz(planCases, async (fx, c) => {
        const segment = spoil(String(resolve(c.segment, fx, foreign, Date.now())), c.variant).toWellFormed();
        const res = await send(fx, `/api/v1/plans/${encodeURIComponent(segment)}`);
        expectSaneHttp(res);
        const answer = answerOf(res);
        expectPlanAnswer(answer, segment.trim(), fx);
        expectNothingForeign(answer, segment);
        return answer;
      });
      expectShare(statuses, 200, 0.1);
      expectShare(statuses, 404, 0.2);
    },
    TIMEOUT,
  );

  it(
    `GET /api/v1/incidents/{id}: ${RUNS} ids`,
    async () => {
      const statuses = await fuzz(incidentCases, async (fx, c) => {
        const segment =
          c.segment instanceof Sym
            ? accountSegment(String(resolve(c.segment, fx, foreign, Date.now())), c.variant)
            : c.segment;
        const res = await send(
          fx,
          `/api/v1/incidents/${c.raw ? segment : encodeURIComponent(segment.toWellFormed())}${c.query}`,
        );
        expectSaneHttp(res);
        const answer = answerOf(res);
        expectByIdAnswer(answer, c.query, routedBy(c.raw, segment), () =>
          expectIncidentAnswer(answer, c.raw ? null : segment.toWellFormed(), fx),
        );
        expectNothingForeign(answer, segment);
        return answer;
      });
      expectShare(statuses, 200, 0.1);
      expectShare(statuses, 404, 0.3);
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
        expectByIdAnswer(answer, c.query, routedBy(c.raw, segment), () =>
          expectAccountAnswer(answer, c.raw ? null : segment, fx),
        );
        expectNothingForeign(answer, segment);
        return answer;
      });
      expectShare(statuses, 200, 0.1);
      expectShare(statuses, 404, 0.3);
    },
    TIMEOUT,
  );
});

describe("a phone is validated with the body", () => {
  // docs/api.md, "Validation": validation (422, every failing field in errors[]) comes before
  // the operation, and a body's errors are named before the Idempotency-Key's
  // (as for every other field). docs/api.md, "Phone numbers": a phone that is no valid number
  // is such a field error. So a malformed key beside an invalid phone must not
  // hide the phone. (The server checks the phone only in the operation, after
  // the key: the fuzz above tolerates that one order, this test shows it.)
  const cases = [
    ["/api/v1/ai-agent/find-caller", { phone: "911" }],
    [
      "/api/v1/ai-agent/create-incident",
      { dateTime: "2030-01-07T10:00:00Z", clientName: "A", insectName: "B", phone: "911" },
    ],
  ] as const;
  it.each(cases)(
    "%s with an invalid phone and a malformed Idempotency-Key → 422 naming the phone",
    async (path, body) => {
      const res = await call(foreign.tenant, path, { body, headers: { "Idempotency-Key": "é" } });
      expectSaneHttp(res);
      expect(res.status, res.text).toBe(422);
      expect(res.body.errors, res.text).toContainEqual({
        path: "phone",
        code: "invalid_phone",
        message: expect.any(String),
      });
    },
  );
});
