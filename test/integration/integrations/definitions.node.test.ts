// The tool definitions of each voice platform (docs/voice-agents.md) against
// the platforms' own SDKs: the assignments below compile only if every
// definition is of the SDK's request type (Vapi's CreateToolsRequest.Function,
// Retell's LLM custom tool, ElevenLabs' create-tool tool_config in wire form),
// and ElevenLabs' own serialization schema parses each at run time. Each
// `parameters` is valid JSON Schema that agrees with the operation's input:
// the same property names and required lists as the MCP tool, and the
// operation's own samples validate against it.

import * as serialization from "@elevenlabs/elevenlabs-js/serialization";
import type { Vapi } from "@vapi-ai/server-sdk";
import Ajv2020 from "ajv/dist/2020";
import type { LlmCreateParams } from "retell-sdk/resources/llm";
import { describe, expect, it } from "vitest";
import { CliError } from "../../../src/cli/errors";
import { exportTools } from "../../../src/cli/tools";
import { toolInputSchema } from "../../../src/http/tools";
import {
  API_KEY_PLACEHOLDER,
  DESCRIPTION_MAX,
  NAME,
  PLATFORMS,
  toolDefinitions,
} from "../../../src/integrations/definitions";
import { examplesOf } from "../../../src/openapi/examples";
import { OPERATIONS } from "../../../src/routes";

const target = { origin: "https://api.example.com", orgId: "org_01m81r170vt72z173z69cgy8ce", role: "agent" as const };

// The agent's tools (docs/api.md, "Key roles"), in the order the operations are declared.
const AGENT_TOOLS = [
  "get_call_context",
  "find_available_appointments",
  "check_booking_availability",
  "create_incident",
  "hold_slot",
  "release_hold",
  "find_caller",
  "list_services",
  "create_lead",
  "get_incident",
  "list_incidents",
  "cancel_incident",
  "reschedule_incident",
  "create_plan",
  "get_plan",
  "list_plans",
  "cancel_plan",
];
// What a read key may call of them: those that change nothing.
const READ_TOOLS = [
  "get_call_context",
  "find_available_appointments",
  "check_booking_availability",
  "find_caller",
  "list_services",
  "get_incident",
  "list_incidents",
  "get_plan",
  "list_plans",
];

// Compile-time: each platform's definitions are of its SDK's request type.
const vapi: Vapi.CreateToolsRequest.Function[] = toolDefinitions("vapi", OPERATIONS, target);
const retell: LlmCreateParams.CustomTool[] = toolDefinitions("retell", OPERATIONS, target);
const elevenlabs: serialization.ToolRequestModel.Raw["tool_config"][] = toolDefinitions(
  "elevenlabs",
  OPERATIONS,
  target,
);
const openai = toolDefinitions("openai", OPERATIONS, target);

const nameOf = {
  vapi: (t: (typeof vapi)[number]) => t.function!.name,
  retell: (t: (typeof retell)[number]) => t.name,
  elevenlabs: (t: (typeof elevenlabs)[number]) => (t as { name: string }).name,
  openai: (t: (typeof openai)[number]) => t.name,
};

describe("tool definitions, checked against the platforms' SDKs", () => {
  it("every platform has exactly the agent tools, in order, with the MCP tools' names", () => {
    expect(vapi.map(nameOf.vapi)).toEqual([...AGENT_TOOLS]);
    expect(retell.map(nameOf.retell)).toEqual([...AGENT_TOOLS]);
    expect(elevenlabs.map(nameOf.elevenlabs)).toEqual([...AGENT_TOOLS]);
    expect(openai.map(nameOf.openai)).toEqual([...AGENT_TOOLS]);
  });

  it("each key's role gets the agent's tools it may call: an office key all of them, a read key the reads", () => {
    const names = (role: "office" | "agent" | "read") =>
      toolDefinitions("openai", OPERATIONS, { ...target, role }).map((t) => t.name);
    expect(names("office")).toEqual(AGENT_TOOLS);
    expect(names("read")).toEqual(READ_TOOLS);
  });

  it("ElevenLabs tools send the caller's number and the conversation id from its system variables", () => {
    for (const tool of elevenlabs) {
      const headers = (tool as { api_schema: { request_headers: Record<string, unknown> } }).api_schema.request_headers;
      expect(headers["X-Caller-Phone"]).toEqual({ variable_name: "system__caller_id" });
      expect(headers["X-Call-Id"]).toEqual({ variable_name: "system__conversation_id" });
    }
  });

  it("ElevenLabs' own serialization schema parses every tool_config", () => {
    for (const tool of elevenlabs) {
      const parsed = serialization.ToolRequestModel.parse({ tool_config: tool }, { unrecognizedObjectKeys: "fail" });
      expect(parsed.ok, JSON.stringify(parsed.ok ? "" : parsed.errors)).toBe(true);
    }
    // The parse can fail: a property type ElevenLabs does not know.
    const spoiled = structuredClone(elevenlabs[0]) as { api_schema: { url: unknown } };
    spoiled.api_schema.url = 42;
    expect(serialization.ToolRequestModel.parse({ tool_config: spoiled }).ok).toBe(false);
  });

  it("names and descriptions keep the platforms' limits; no definition carries a real key", () => {
    for (const platform of PLATFORMS) {
      const text = JSON.stringify(toolDefinitions(platform, OPERATIONS, target));
      // OpenAI's function tools name no server: the integrator's code calls it.
      if (platform !== "openai") expect(text).toContain(API_KEY_PLACEHOLDER);
      expect(text).not.toMatch(/fsk_/);
    }
    for (const t of vapi) {
      expect(t.function!.name).toMatch(NAME);
      expect(t.function!.description!.length).toBeLessThanOrEqual(DESCRIPTION_MAX);
      expect(t.server!.headers).toEqual({ "X-ORG-ID": target.orgId, "X-API-KEY": API_KEY_PLACEHOLDER });
      expect(t.server!.url).toBe("https://api.example.com/api/v1/integrations/vapi/tool-calls");
    }
    for (const t of retell) {
      expect(t.name).toMatch(NAME);
      expect(t.description!.length).toBeLessThanOrEqual(DESCRIPTION_MAX);
      expect(t).toMatchObject({
        url: `https://api.example.com/api/v1/integrations/retell/${t.name}`,
        args_at_root: false,
      });
    }
  });

  it("each platform's schemas keep only what the platform's type knows", () => {
    const keys = (node: unknown, into = new Set<string>()): Set<string> => {
      if (typeof node !== "object" || node === null) return into;
      for (const [k, v] of Object.entries(node)) {
        if (k !== "properties") into.add(k);
        if (k === "properties") for (const p of Object.values(v as object)) keys(p, into);
        else if (k === "items") keys(v, into);
      }
      return into;
    };
    const vapiKeys = new Set(vapi.flatMap((t) => [...keys(t.function!.parameters)]));
    for (const k of vapiKeys)
      expect(["type", "items", "description", "pattern", "format", "required", "enum", "title"]).toContain(k);
    const elevenKeys = new Set(
      elevenlabs.flatMap((t) => {
        const api = (t as unknown as { api_schema: Record<string, unknown> }).api_schema;
        return [...keys(api.request_body_schema), ...keys({ properties: api.query_params_schema ?? {} })];
      }),
    );
    expect(elevenKeys.has("format")).toBe(false);
    expect(elevenKeys.has("maxLength")).toBe(false);
    // Retell's root takes no additionalProperties.
    for (const t of retell) expect(Object.keys(t.parameters!).sort()).toEqual(["properties", "required", "type"]);
  });

  it("every parameters schema is valid JSON Schema with the operation's property names and required list, and accepts its samples", () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    for (const platform of ["vapi", "retell", "openai"] as const) {
      const defs = toolDefinitions(platform, OPERATIONS, target);
      for (const def of defs) {
        const params = "function" in def ? def.function.parameters : def.parameters;
        const name = "function" in def ? def.function.name : def.name;
        const op = OPERATIONS.find((o) => o.tool === name)!;
        const input = toolInputSchema(op) as { properties?: object; required?: string[] };
        expect(Object.keys(params.properties), `${platform} ${name}`).toEqual(Object.keys(input.properties ?? {}));
        expect(params.required, `${platform} ${name}`).toEqual(input.required ?? []);
        const validate = ajv.compile(params);
        const sample = {
          ...(op.params ? { id: "inc_01m81r170vt72z173z69cgy8ce" } : {}),
          ...examplesOf(op.operationId).example,
        };
        expect(validate(sample), `${platform} ${name}: ${ajv.errorsText(validate.errors)}`).toBe(true);
        // And it can refuse: a required member missing.
        if (params.required.length > 0) expect(validate({}), `${platform} ${name}`).toBe(false);
      }
    }
  });
});

describe("npm run admin -- tools export", () => {
  it("prints the definitions the API serves for that origin and org; refuses a bad platform or URL", () => {
    const flags = { platform: "vapi", "base-url": "https://api.example.com", org: target.orgId };
    expect(exportTools(flags)).toEqual(vapi);
    expect(exportTools({ ...flags, "base-url": "https://api.example.com/" })).toEqual(vapi);
    for (const [bad, message] of [
      [{ platform: "bland" }, /--platform must be one of vapi, retell, elevenlabs, openai/],
      [{ "base-url": "api.example.com" }, /--base-url must be a URL/],
      [{ "base-url": "https://api.example.com/v1" }, /--base-url must be the service's origin/],
      [{ "base-url": "ftp://api.example.com" }, /--base-url must be the service's origin/],
      [{ org: "" }, /--org is required/],
    ] as const) {
      expect(() => exportTools({ ...flags, ...bad }), JSON.stringify(bad)).toThrow(CliError);
      expect(() => exportTools({ ...flags, ...bad })).toThrow(message);
    }
  });
});
