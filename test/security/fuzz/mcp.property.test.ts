// Fuzzing the MCP tools at /mcp (docs/api.md, "MCP" and "After the booking"): every tool the
// API declares (a test checks the list against src/routes), TOOL_RUNS generated
// argument objects each with the fixed seed of the HTTP fuzz, through the
// Streamable HTTP transport. A tool runs its operation's own route, so the
// same oracle applies: never a protocol error or a 5xx, a failed call is an
// isError result holding a problem document with the request's id, a 422
// names the offending fields, valid arguments get the operation's outcome
// (for cancel and reschedule, worked out from the incident as the answers so
// far left it, and every incident read back after each call; for hold and
// release, from the org's holds, every hold read back after each call),
// nothing of another org shows, and nothing is stored but what succeeded.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { OPERATIONS } from "../../../src/routes";
import { mcpCall } from "../../support/mcp";
import { BOARD_QUERY_FIELDS, boardArgCases, boardValue, boardVerdict, expectBoard } from "./board";
import {
  type Answer,
  bookFresh,
  type Counts,
  callTool,
  countRows,
  expectHoldsAsAnswered,
  expectIncidentsAsAnswered,
  expectNothingOf,
  expectSane,
  expectShare,
  type Fixture,
  type Foreign,
  FUZZ_SEED,
  newFixture,
  newForeign,
  TOOL_RUNS as RUNS,
  resolve,
  resolveObject,
  runFuzz,
  withNumbers,
} from "./harness";
import {
  checkParsed,
  expectValidationFailed,
  type IdCase,
  idempotencyKeys,
  isReplay,
  objectCases,
  POST_OPS,
  type PostOp,
  sentKey,
  spoil,
} from "./operations";
import {
  expectPlanAnswer,
  expectPlanPage,
  PLAN_QUERY_FIELDS,
  planArgCases,
  planListArgCases,
  planListVerdict,
} from "./plans";
import {
  accountArgCases,
  contextArgCases,
  EVENT_QUERY_FIELDS,
  eventListArgCases,
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
  incidentArgCases,
  incidentListArgCases,
  incidentListVerdict,
  listArgCases,
  listVerdict,
  QUERY_FIELDS,
  serviceArgCases,
} from "./reads";
import { junkString, junkValue, Sym } from "./values";

const TIMEOUT = 300_000;
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
  runFuzz(cases, check, foreign, foreignCounts, RUNS);

/** What arrives at the operation: the arguments after a JSON round trip (the transport's and the tool's). */
const overTheWire = (args: unknown): Record<string, unknown> => JSON.parse(JSON.stringify(args));

/** An argument as the GET tools put it in the URL (README, MCP): objects as JSON, lone surrogates as U+FFFD. */
const asQueryText = (value: unknown) =>
  (typeof value === "object" && value !== null ? JSON.stringify(value) : String(value)).replace(
    /\p{Surrogate}/gu,
    "\uFFFD",
  );

/**
 * The query a GET tool on one resource sends: its arguments but `id` as
 * parameters (null left out). The operation takes none, so each is refused.
 */
const queryOfExtras = (parsed: Record<string, unknown>) => {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(parsed))
    if (name !== "id" && value !== null) params.set(name, asQueryText(value));
  return `?${params}`;
};

/** The key as the tool's operation gets it: /mcp forwards the header as sent, empty included. */
const forwardedKey = sentKey;

/**
 * The `id` argument of a tool on one incident: an incident id as over HTTP
 * (mostly), none at all, or a value of another JSON type. Strings "", "."
 * and ".." are left to their own test below.
 */
const idArgument = (op: PostOp): fc.Arbitrary<{ target?: IdCase; odd?: unknown }> =>
  fc.oneof(
    { arbitrary: op.ids!.map((target) => ({ target })), weight: 12 },
    { arbitrary: fc.constant({}), weight: 1 },
    { arbitrary: junkValue.filter((v) => typeof v !== "string").map((odd) => ({ odd })), weight: 1 },
  );

/** Expected shares of statuses per tool: the generators must keep reaching every outcome. */
const SHARES: Record<string, [number, number][]> = {
  // At most 100 live holds per org (docs/api.md, "Holding a slot"): a fixture's 200s stop there, its 409s begin.
  hold_slot: [
    [200, 0.05],
    [409, 0.02],
    [422, 0.3],
  ],
  release_hold: [
    [200, 0.1],
    [422, 0.3],
  ],
  cancel_incident: [
    [200, 0.1],
    [404, 0.05],
    [409, 0.005],
    [422, 0.3],
  ],
  reschedule_incident: [
    [200, 0.03],
    [404, 0.05],
    [409, 0.03],
    [422, 0.3],
  ],
  // A plan's body fails more ways than a booking's (every, visits): fewer 200s.
  create_plan: [
    [200, 0.05],
    [422, 0.3],
  ],
  // Two of the seeded visits have started: most closes meet one not started (409) or another org's (404).
  close_incident: [
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

/** Every tool this file fuzzes: the POST operations' and the GET ones' below. */
const GET_TOOLS = [
  "list_contacts",
  "get_account",
  "list_incidents",
  "get_incident",
  "list_events",
  "list_services",
  "get_call_context",
  "get_board",
  "get_plan",
  "list_plans",
];

describe(`fuzzing the MCP tools (seed ${FUZZ_SEED}, ${RUNS} generated calls each)`, () => {
  it("fuzzes every tool the API declares (src/routes OPERATIONS)", () => {
    expect([...POST_OPS.map((op) => op.tool), ...GET_TOOLS].sort()).toEqual(OPERATIONS.map((op) => op.tool).sort());
  });

  it.each(POST_OPS.map((op) => [op.tool, op] as const))(
    `%s: ${RUNS} argument objects`,
    async (tool, op) => {
      // A body member named "id" would be the incident's id itself: a tool's arguments hold one "id".
      const bodies = op.ids ? objectCases(op).filter((body) => !Object.hasOwn(body, "id")) : objectCases(op);
      const ids = op.ids ? idArgument(op) : fc.constant({});
      const cases = fc.record({ body: bodies, idempotencyKey: idempotencyKeys, id: ids });
      const statuses = await fuzz(cases, async (fx, c) => {
        const { target, odd } = c.id as { target?: IdCase; odd?: unknown };
        let id: unknown = odd;
        let resolvedTarget: string | undefined;
        if (target) {
          resolvedTarget =
            target.id instanceof Sym && target.id.kind === "freshIncidentId"
              ? await bookFresh(fx)
              : String(resolve(target.id, fx, foreign, Date.now()));
          id = spoil(resolvedTarget, target.variant);
        }
        const body = resolveObject(c.body, fx, foreign, Date.now(), resolvedTarget);
        const args = op.ids && ("target" in c.id || "odd" in c.id) ? { id, ...body } : body;
        const parsed = overTheWire(args);
        // The tool puts its id argument in the path and sends the other arguments as the body.
        const { id: sentId, ...rest } = parsed;
        const idText = op.ids && Object.hasOwn(parsed, "id") ? asQueryText(sentId) : undefined;
        const sentBody = JSON.stringify(op.ids ? rest : parsed);
        const key = forwardedKey(c.idempotencyKey);
        const identity = `${op.path.replace("{id}", idText === undefined ? "{id}" : encodeURIComponent(idText))} ${sentBody}`;
        let answer: Answer | undefined;
        for (let attempt = 0; attempt < (key === undefined ? 1 : 2); attempt++) {
          const replay = isReplay(fx, identity, key);
          const before = Date.now();
          answer = await callTool(fx, op.tool, args, c.idempotencyKey);
          const sent = { id: idText, before, after: Date.now() };
          expectSane(answer, replay);
          if (new TextEncoder().encode(sentBody).length > 64 * 1024)
            expect([answer.status, answer.body.code]).toEqual([413, "payload_too_large"]);
          else checkParsed(op, fx, op.ids ? rest : parsed, identity, key, answer, sent);
          expectNothingOf(foreign, answer, withNumbers(JSON.stringify(parsed), Object.values(parsed)));
        }
        if (op.ids) await expectIncidentsAsAnswered(fx, foreign);
        if (op.holds) await expectHoldsAsAnswered(fx, foreign);
        return answer!;
      });
      for (const [status, share] of SHARES[tool] ?? DEFAULT_SHARES) expectShare(statuses, status, share);
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
        else expectPage(answer, query, fx, verdict);
        expectNothingOf(
          foreign,
          answer,
          withNumbers(
            JSON.stringify(parsed),
            query.map(([, v]) => v),
          ),
        );
        return answer;
      });
      expectShare(statuses, 200, 0.1);
      expectShare(statuses, 422, 0.3);
    },
    TIMEOUT,
  );

  it(
    `list_incidents: ${RUNS} argument objects`,
    async () => {
      const statuses = await fuzz(incidentListArgCases, async (fx, pairs) => {
        const args: Record<string, unknown> = {};
        for (const [name, value] of pairs)
          Object.defineProperty(args, name, {
            value: resolve(value, fx, foreign, Date.now()),
            enumerable: true,
            configurable: true,
            writable: true,
          });
        const parsed = overTheWire(args);
        const url = new URL("https://api.test/api/v1/incidents");
        for (const [name, value] of Object.entries(parsed))
          if (value !== null && value !== undefined) url.searchParams.set(name, asQueryText(value));
        const query = [...url.searchParams];
        const answer = await callTool(fx, "list_incidents", args);
        expectSane(answer);
        const { verdict, must, may } = incidentListVerdict(query, fx);
        if (verdict === "invalid") expectValidationFailed(answer, must, may, INCIDENT_QUERY_FIELDS);
        else if (verdict === "unknown" && answer.status === 422) expectValidationFailed(answer, [], may);
        else expectIncidentPage(answer, query, fx, verdict);
        expectNothingOf(
          foreign,
          answer,
          withNumbers(
            JSON.stringify(parsed),
            query.map(([, v]) => v),
          ),
        );
        return answer;
      });
      expectShare(statuses, 200, 0.2);
      expectShare(statuses, 422, 0.2);
    },
    TIMEOUT,
  );

  it(
    `list_events: ${RUNS} argument objects`,
    async () => {
      const statuses = await fuzz(eventListArgCases, async (fx, pairs) => {
        const args: Record<string, unknown> = {};
        for (const [name, value] of pairs)
          Object.defineProperty(args, name, {
            value: resolve(value, fx, foreign, Date.now()),
            enumerable: true,
            configurable: true,
            writable: true,
          });
        const parsed = overTheWire(args);
        const url = new URL("https://api.test/api/v1/events");
        for (const [name, value] of Object.entries(parsed))
          if (value !== null && value !== undefined) url.searchParams.set(name, asQueryText(value));
        const query = [...url.searchParams];
        const answer = await callTool(fx, "list_events", args);
        expectSane(answer);
        const { verdict, must, may } = eventListVerdict(query, fx);
        if (verdict === "invalid") expectValidationFailed(answer, must, may, EVENT_QUERY_FIELDS);
        else if (verdict === "unknown" && answer.status === 422) expectValidationFailed(answer, [], may);
        else expectEventPage(answer, query, fx, verdict);
        expectNothingOf(foreign, answer, JSON.stringify(parsed));
        return answer;
      });
      expectShare(statuses, 200, 0.2);
      expectShare(statuses, 422, 0.2);
    },
    TIMEOUT,
  );

  it(
    `list_plans: ${RUNS} argument objects`,
    async () => {
      const statuses = await fuzz(planListArgCases, async (fx, pairs) => {
        const args: Record<string, unknown> = {};
        for (const [name, value] of pairs)
          Object.defineProperty(args, name, {
            value: resolve(value, fx, foreign, Date.now()),
            enumerable: true,
            configurable: true,
            writable: true,
          });
        const parsed = overTheWire(args);
        const params = new URLSearchParams();
        for (const [name, value] of Object.entries(parsed))
          if (value !== null && value !== undefined) params.set(name, asQueryText(value));
        const answer = await callTool(fx, "list_plans", args);
        expectSane(answer);
        const { verdict, must, may, filters } = planListVerdict([...params]);
        if (verdict === "invalid") expectValidationFailed(answer, must, may, PLAN_QUERY_FIELDS);
        else if (verdict === "unknown" && answer.status === 422) expectValidationFailed(answer, [], may);
        else expectPlanPage(answer, filters, fx);
        expectNothingOf(foreign, answer, JSON.stringify(parsed));
        return answer;
      });
      expectShare(statuses, 200, 0.2);
      expectShare(statuses, 422, 0.2);
    },
    TIMEOUT,
  );

  it(
    `get_plan: ${RUNS} argument objects`,
    async () => {
      const statuses = await fuzz(planArgCases, async (fx, id) => {
        const args = { id: resolve(id, fx, foreign, Date.now()) };
        const answer = await callTool(fx, "get_plan", args);
        expectSane(answer);
        // A path's id is text: any other JSON type is refused before the plan is looked for.
        if (typeof args.id === "string") expectPlanAnswer(answer, args.id.trim(), fx);
        else expect([404, 422]).toContain(answer.status);
        expectNothingOf(foreign, answer, JSON.stringify(args));
        return answer;
      });
      expectShare(statuses, 200, 0.1);
      expectShare(statuses, 404, 0.2);
    },
    TIMEOUT,
  );

  it(
    `get_board: ${RUNS} argument objects`,
    async () => {
      const statuses = await fuzz(boardArgCases, async (fx, pairs) => {
        const args: Record<string, unknown> = {};
        for (const [name, value] of pairs)
          Object.defineProperty(args, name, {
            value: boardValue(value, fx),
            enumerable: true,
            configurable: true,
            writable: true,
          });
        const parsed = overTheWire(args);
        const params = new URLSearchParams();
        for (const [name, value] of Object.entries(parsed))
          if (value !== null && value !== undefined) params.set(name, asQueryText(value));
        const before = Date.now();
        const answer = await callTool(fx, "get_board", args);
        const after = Date.now();
        expectSane(answer);
        const { verdict, must, may, date } = boardVerdict([...params]);
        if (verdict === "invalid") expectValidationFailed(answer, must, may, BOARD_QUERY_FIELDS);
        else if (verdict === "unknown" && answer.status === 422) expectValidationFailed(answer, [], may);
        else expectBoard(answer, fx, date, before, after);
        expectNothingOf(foreign, answer, JSON.stringify(parsed));
        return answer;
      });
      expectShare(statuses, 200, 0.3);
      expectShare(statuses, 422, 0.2);
    },
    TIMEOUT,
  );

  it(
    `get_incident: ${RUNS} argument objects`,
    async () => {
      const statuses = await fuzz(incidentArgCases, async (fx, c) => {
        const args = resolveObject({ ...c.extra, ...("id" in c ? { id: c.id } : {}) }, fx, foreign, Date.now());
        const parsed = overTheWire(args);
        const answer = await callTool(fx, "get_incident", args);
        expectSane(answer);
        expectByIdAnswer(answer, queryOfExtras(parsed), true, () =>
          expectIncidentAnswer(answer, Object.hasOwn(parsed, "id") ? asQueryText(parsed.id) : null, fx),
        );
        expectNothingOf(foreign, answer, JSON.stringify(parsed));
        return answer;
      });
      expectShare(statuses, 200, 0.1);
      expectShare(statuses, 404, 0.3);
    },
    TIMEOUT,
  );

  it(
    `list_services: ${RUNS} argument objects`,
    async () => {
      const statuses = await fuzz(serviceArgCases, async (fx, args) => {
        const parsed = overTheWire(args);
        const answer = await callTool(fx, "list_services", args);
        expectSane(answer);
        const params = new URLSearchParams();
        for (const [name, value] of Object.entries(parsed)) if (value !== null) params.set(name, asQueryText(value));
        expectByIdAnswer(answer, `?${params}`, true, () => expectServicesAnswer(answer, fx));
        expectNothingOf(foreign, answer, JSON.stringify(parsed));
        return answer;
      });
      expectShare(statuses, 200, 0.3);
    },
    TIMEOUT,
  );

  it(
    `get_call_context: ${RUNS} argument objects`,
    async () => {
      const statuses = await fuzz(contextArgCases, async (fx, args) => {
        const parsed = overTheWire(args);
        const before = Date.now();
        const answer = await callTool(fx, "get_call_context", args);
        const after = Date.now();
        expectSane(answer);
        const params = new URLSearchParams();
        for (const [name, value] of Object.entries(parsed)) if (value !== null) params.set(name, asQueryText(value));
        expectByIdAnswer(answer, `?${params}`, true, () => expectContextAnswer(answer, fx, before, after));
        expectNothingOf(foreign, answer, JSON.stringify(parsed));
        return answer;
      });
      expectShare(statuses, 200, 0.3);
      expectShare(statuses, 422, 0.1);
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
        expectByIdAnswer(answer, queryOfExtras(parsed), true, () =>
          expectAccountAnswer(answer, Object.hasOwn(parsed, "id") ? asQueryText(parsed.id) : null, fx),
        );
        expectNothingOf(foreign, answer, JSON.stringify(parsed));
        return answer;
      });
      expectShare(statuses, 200, 0.1);
      expectShare(statuses, 404, 0.3);
    },
    TIMEOUT,
  );
});

describe("tools/call arguments that are not an object", () => {
  // src/mcp/server.ts (readCalls): arguments are an object of the tool's
  // arguments by name; an array, a string, a number or a boolean is the
  // JSON-RPC error -32602 in a sentence, and runs nothing. `arguments: null`
  // means absent: the tool answers as for no arguments at all.
  const INVALID_ARGUMENTS = {
    code: -32602,
    message: "MCP error -32602: Invalid tools/call params: arguments must be an object of the tool's arguments by name",
  };
  const notAnObject = fc.oneof(
    fc.array(junkValue, { maxLength: 3 }),
    junkString,
    fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })),
    fc.boolean(),
  );
  let fx: Fixture;
  beforeAll(async () => {
    fx = await newFixture();
  });

  it("every tool, 200 calls: -32602, nothing stored", async () => {
    const tools = OPERATIONS.map((op) => op.tool);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...tools), notAnObject, async (tool, args) => {
        const before = await countRows(fx.tenant.orgId);
        const res = await mcpCall(fx.tenant, tool, args);
        expect(res.status, res.text).toBe(200);
        expect(res.body, res.text).toEqual({ jsonrpc: "2.0", id: 1, error: INVALID_ARGUMENTS });
        expect(await countRows(fx.tenant.orgId)).toEqual(before);
      }),
      { seed: FUZZ_SEED, numRuns: 200 },
    );
  }, 30_000);

  it.each(OPERATIONS.map((op) => op.tool))("%s with arguments null answers as with {}", async (tool) => {
    const outcome = (answer: Answer) => [answer.status, answer.body.code, answer.body.errors];
    const absent = await callTool(fx, tool, null);
    expect(outcome(absent)).toEqual(outcome(await callTool(fx, tool, {})));
  });
});

describe("an incident id that is no path segment", () => {
  // docs/api.md, "Incidents" and 8: a tool's `id` argument is the incident's id; an
  // unknown or malformed one is 404 incident_not_found, after the arguments'
  // validation. "", "." and ".." are such ids, but put into the operation's
  // URL as they are they make another path ("/api/v1/incidents/./cancel" is
  // "/api/v1/incidents/cancel"): the tool must not answer for that path.
  let fx: Fixture;
  beforeAll(async () => {
    fx = await newFixture();
  });
  it.each(["get_incident", "cancel_incident", "reschedule_incident"])(
    '%s {id: "" | "." | ".."} → isError 404 incident_not_found, nothing changed',
    async (tool) => {
      const answers: Record<string, unknown> = {};
      for (const id of ["", ".", ".."]) {
        const answer = await callTool(
          fx,
          tool,
          tool === "reschedule_incident" ? { id, dateTime: fx.fullSlot } : { id },
        );
        expectSane(answer);
        answers[JSON.stringify(id)] = [answer.status, answer.body.code];
      }
      expect(answers).toEqual({
        '""': [404, "incident_not_found"],
        '"."': [404, "incident_not_found"],
        '".."': [404, "incident_not_found"],
      });
      await expectIncidentsAsAnswered(fx, foreign);
    },
  );
});
