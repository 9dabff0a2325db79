// Fuzzing the MCP tools at /mcp (issue 6): the seven tools, RUNS generated
// argument objects each with the fixed seed of the HTTP fuzz, through the
// Streamable HTTP transport. A tool runs its operation's own route, so the
// same oracle applies: never a protocol error or a 5xx, a failed call is an
// isError result holding a problem document with the request's id, a 422
// names the offending fields, valid arguments get the operation's outcome,
// nothing of another org shows, and nothing is stored but what succeeded.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  type Answer,
  type Counts,
  callTool,
  countRows,
  expectNothingOf,
  expectSane,
  expectShare,
  type Fixture,
  type Foreign,
  FUZZ_SEED,
  newForeign,
  RUNS,
  resolve,
  resolveObject,
  runFuzz,
} from "./harness";
import {
  checkParsed,
  expectValidationFailed,
  idempotencyKeys,
  isReplay,
  objectCases,
  POST_OPS,
  sentKey,
} from "./operations";
import { accountArgCases, expectAccountAnswer, expectPage, listArgCases, listVerdict, QUERY_FIELDS } from "./reads";

const TIMEOUT = 120_000;
let foreign: Foreign;
let foreignCounts: Counts;

beforeAll(async () => {
  foreign = await newForeign();
  foreignCounts = await countRows(foreign.tenant.orgId);
  // One request-log line per request (two per tool call) is thousands of lines of noise here.
  vi.spyOn(console, "log").mockImplementation(() => {});
});
afterAll(() => {
  vi.restoreAllMocks();
});

const fuzz = <T>(cases: fc.Arbitrary<T>, check: (fx: Fixture, c: T) => Promise<Answer>) =>
  runFuzz(cases, check, foreign, foreignCounts);

/** What arrives at the operation: the arguments after a JSON round trip (the transport's and the tool's). */
const overTheWire = (args: unknown): Record<string, unknown> => JSON.parse(JSON.stringify(args));

/** An argument as the GET tools put it in the URL (README, MCP): objects as JSON, lone surrogates as U+FFFD. */
const asQueryText = (value: unknown) =>
  (typeof value === "object" && value !== null ? JSON.stringify(value) : String(value)).replace(
    /\p{Surrogate}/gu,
    "\uFFFD",
  );

/** The key as the tool's operation gets it: /mcp forwards the header as sent, empty included. */
const forwardedKey = sentKey;

describe(`fuzzing the MCP tools (seed ${FUZZ_SEED}, ${RUNS} generated calls each)`, () => {
  it.each(POST_OPS.map((op) => [op.tool, op] as const))(
    `%s: ${RUNS} argument objects`,
    async (_tool, op) => {
      const cases = fc.record({ body: objectCases(op), idempotencyKey: idempotencyKeys });
      const statuses = await fuzz(cases, async (fx, c) => {
        const args = resolveObject(c.body, fx, foreign, Date.now());
        const parsed = overTheWire(args);
        const sent = JSON.stringify(parsed);
        const key = forwardedKey(c.idempotencyKey);
        const identity = `${op.path} ${sent}`;
        let answer: Answer | undefined;
        for (let attempt = 0; attempt < (key === undefined ? 1 : 2); attempt++) {
          const replay = isReplay(fx, identity, key);
          answer = await callTool(fx, op.tool, args, c.idempotencyKey);
          expectSane(answer, replay);
          if (new TextEncoder().encode(sent).length > 64 * 1024)
            expect([answer.status, answer.body.code]).toEqual([413, "payload_too_large"]);
          else checkParsed(op, fx, parsed, identity, key, answer);
          expectNothingOf(foreign, answer, sent);
        }
        return answer!;
      });
      expectShare(statuses, 200, 0.1);
      expectShare(statuses, 422, 0.3);
    },
    TIMEOUT,
  );

  it(
    `list_contacts: ${RUNS} argument objects`,
    async () => {
      const statuses = await fuzz(listArgCases, async (fx, pairs) => {
        const args: Record<string, unknown> = {};
        for (const [name, value] of pairs)
          Object.defineProperty(args, name, {
            value: resolve(value, fx, foreign, Date.now()),
            enumerable: true,
            configurable: true,
            writable: true,
          });
        const parsed = overTheWire(args);
        // The tool passes each argument as a query parameter, null and absent left out.
        const url = new URL("https://api.test/api/v1/contacts");
        for (const [name, value] of Object.entries(parsed))
          if (value !== null && value !== undefined) url.searchParams.set(name, asQueryText(value));
        const query = [...url.searchParams];
        const answer = await callTool(fx, "list_contacts", args);
        expectSane(answer);
        const { verdict, must, may } = listVerdict(query, fx);
        if (verdict === "invalid") expectValidationFailed(answer, must, may, QUERY_FIELDS);
        else if (verdict === "unknown" && answer.status === 422) expectValidationFailed(answer, [], may);
        else expectPage(answer, query, fx);
        expectNothingOf(foreign, answer, JSON.stringify(parsed));
        return answer;
      });
      expectShare(statuses, 200, 0.1);
      expectShare(statuses, 422, 0.3);
    },
    TIMEOUT,
  );

  it(
    `get_account: ${RUNS} argument objects`,
    async () => {
      const statuses = await fuzz(accountArgCases, async (fx, c) => {
        const args = resolveObject({ ...c.extra, ...("id" in c ? { id: c.id } : {}) }, fx, foreign, Date.now());
        const parsed = overTheWire(args);
        const answer = await callTool(fx, "get_account", args);
        expectSane(answer);
        expectAccountAnswer(answer, Object.hasOwn(parsed, "id") ? asQueryText(parsed.id) : null, fx);
        expectNothingOf(foreign, answer, JSON.stringify(parsed));
        return answer;
      });
      expectShare(statuses, 200, 0.1);
      expectShare(statuses, 404, 0.3);
    },
    TIMEOUT,
  );
});
