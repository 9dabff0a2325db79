// The caller of a call (docs/api.md, "The caller of a call") as each transport
// reports it: the X-Caller-Phone header over HTTP and MCP, Vapi's
// tool-calls envelope (message.call.customer.number, else
// message.customer.number) and Retell's call (from_number, or to_number of an
// outbound call), each with the header beside it. One tool call through any
// of them answers as HTTP does: a status and a body (a problem document when
// it failed).
import type { Credentials } from "./http";
import { mcpCall, toolAnswer } from "./mcp";
import { call } from "./request";

/** The tools whose answers depend on the caller. */
export type CallerTool = "find_caller" | "list_incidents" | "get_incident" | "cancel_incident" | "reschedule_incident";

/** What a transport reports of the call: each value is sent as given, undefined ones are left out. */
export type Report =
  | { channel: "http" | "mcp"; header?: string }
  | { channel: "vapi"; callCustomer?: string; messageCustomer?: string; header?: string }
  | { channel: "retell"; outbound: boolean; from?: string; to?: string; header?: string };

export interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
  body: any;
}

const VAPI = "/api/v1/integrations/vapi/tool-calls";
const RETELL = (tool: string) => `/api/v1/integrations/retell/${tool}`;

const headersOf = (report: Report): Record<string, string> =>
  report.header === undefined ? {} : { "X-Caller-Phone": report.header };

/** A tool's arguments as an HTTP request: path, and body or query. */
function httpRequest(tool: CallerTool, args: Record<string, unknown>): { path: string; body?: unknown } {
  const { id, ...rest } = args;
  const incident = `/api/v1/incidents/${encodeURIComponent(String(id))}`;
  switch (tool) {
    case "find_caller":
      return { path: "/api/v1/ai-agent/find-caller", body: rest };
    case "list_incidents": {
      const query = new URLSearchParams(
        Object.entries(rest)
          .filter(([, v]) => v !== undefined)
          .map(([k, v]): [string, string] => [k, String(v)]),
      ).toString();
      return { path: `/api/v1/incidents${query ? `?${query}` : ""}` };
    }
    case "get_incident":
      return { path: incident };
    case "cancel_incident":
      return { path: `${incident}/cancel`, body: rest };
    case "reschedule_incident":
      return { path: `${incident}/reschedule`, body: rest };
  }
}

const withNumber = (number: string | undefined) => (number === undefined ? {} : { customer: { number } });

let calls = 0;

/** One call of `tool` as `key`, through the report's transport, reporting its numbers. */
export async function callAs(
  key: Credentials,
  report: Report,
  tool: CallerTool,
  args: Record<string, unknown>,
): Promise<Answer> {
  const headers = headersOf(report);
  switch (report.channel) {
    case "http": {
      const { path, body } = httpRequest(tool, args);
      const res = await call(key, path, { body, headers });
      return { status: res.status, body: res.body };
    }
    case "mcp": {
      const { status, body } = toolAnswer(await mcpCall(key, tool, args, { headers }));
      return { status, body };
    }
    case "vapi": {
      const id = `tc_${++calls}`;
      const message = {
        type: "tool-calls",
        toolCallList: [{ id, type: "function", function: { name: tool, arguments: JSON.stringify(args) } }],
        toolWithToolCallList: [],
        timestamp: Date.now(),
        call: { id: `vapi_call_${calls}`, ...withNumber(report.callCustomer) },
        ...withNumber(report.messageCustomer),
      };
      const res = await call(key, VAPI, { body: { message }, headers });
      if (res.status !== 200) throw new Error(`Vapi tool-calls: ${res.status} ${res.text}`);
      const [result] = res.body.results as { toolCallId: string; result?: string; error?: string }[];
      if (result?.toolCallId !== id) throw new Error(`Vapi tool-calls: no result for ${id}: ${res.text}`);
      if (result.error !== undefined) {
        const problem = JSON.parse(result.error);
        return { status: problem.status, body: problem };
      }
      return { status: 200, body: JSON.parse(result.result!) };
    }
    case "retell": {
      const retellCall = {
        agent_id: "agent_test",
        agent_version: 1,
        call_id: `retell_call_${++calls}`,
        call_status: "ongoing",
        call_type: "phone_call",
        direction: report.outbound ? "outbound" : "inbound",
        ...(report.from === undefined ? {} : { from_number: report.from }),
        ...(report.to === undefined ? {} : { to_number: report.to }),
      };
      const res = await call(key, RETELL(tool), { body: { name: tool, call: retellCall, args }, headers });
      return { status: res.status, body: res.body };
    }
  }
}
