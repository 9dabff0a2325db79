// Tool definitions for voice-agent platforms (docs/voice-agents.md), built
// from the operation declarations, as the OpenAPI document and the MCP tool
// list are: the same names, descriptions, property names and required lists.
// Each platform takes only part of JSON Schema, so each definition keeps what
// its platform's type allows and drops the rest; the API still enforces every
// rule when called.
import type * as z from "zod/v4";
import type { KeyRole } from "../../drizzle/schema";
import { mayCall, type Operation } from "../http/operation";
import { isWriteTool, jsonSchema, toolInputSchema } from "../http/tools";

export const PLATFORMS = ["vapi", "retell", "elevenlabs", "openai"] as const;
export type Platform = (typeof PLATFORMS)[number];

/** Where the key goes: the platform's secret or variable, never a real key. */
export const API_KEY_PLACEHOLDER = "{{FIELD_SERVICE_API_KEY}}";

/** The platforms' limits on a tool's name and description. */
export const NAME = /^[a-zA-Z0-9_-]{1,40}$/;
export const DESCRIPTION_MAX = 1000;

export interface Target {
  /** The origin the tools call (the one the request came to). */
  origin: string;
  orgId: string;
  /** The role of the key asking: only the tools it may call are defined. */
  role: KeyRole;
}

type Json = Record<string, unknown>;

type JsonType = "string" | "number" | "integer" | "boolean" | "array" | "object";
/** The formats Vapi's property schemas know. */
type VapiFormat = "date-time" | "time" | "date" | "duration" | "email" | "hostname" | "ipv4" | "ipv6" | "uuid";

/** A property schema as the definitions carry it: what `KEEP` lets through for the platform. */
export interface Property<Format extends string = string> {
  type: JsonType;
  description?: string;
  items?: Property<Format>;
  properties?: Record<string, Property<Format>>;
  required?: string[];
  enum?: string[];
  pattern?: string;
  format?: Format;
  title?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
}

/** A tool's arguments at the root: an object, its properties and which are required, nothing else. */
export interface ToolParameters<Format extends string = string> {
  type: "object";
  properties: Record<string, Property<Format>>;
  required: string[];
}

export interface VapiTool {
  type: "function";
  function: { name: string; description: string; parameters: ToolParameters<VapiFormat> };
  server: { url: string; headers: Record<string, string> };
}

export interface RetellTool {
  type: "custom";
  name: string;
  description: string;
  url: string;
  method: "POST";
  parameters: ToolParameters;
  headers: Record<string, string>;
  args_at_root: false;
  speak_during_execution: boolean;
  speak_after_execution: boolean;
}

/** ElevenLabs' literal (a path or query parameter, a body member): no format, no lengths. */
export interface ElevenLabsLiteral {
  type: "string" | "number" | "integer" | "boolean";
  description: string;
  enum?: string[];
}

export interface ElevenLabsTool {
  type: "webhook";
  name: string;
  description: string;
  api_schema: {
    url: string;
    method: "GET" | "POST";
    request_headers: Record<string, string | { variable_name: string }>;
    path_params_schema?: Record<string, ElevenLabsLiteral>;
    query_params_schema?: { properties: Record<string, ElevenLabsLiteral>; required: string[] };
    request_body_schema?: {
      type: "object";
      description: string;
      properties: Record<string, ElevenLabsLiteral>;
      required: string[];
    };
  };
}

export interface OpenAiTool {
  type: "function";
  name: string;
  description: string;
  parameters: ToolParameters;
}

export interface ToolOf {
  vapi: VapiTool;
  retell: RetellTool;
  elevenlabs: ElevenLabsTool;
  openai: OpenAiTool;
}

// What each platform's property schema knows (src: their SDKs' types).
const VAPI_FORMATS = new Set(["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"]);
// Retell's and OpenAI's property schemas are plain JSON Schema: the sizes too.
const SIZED = [
  "type",
  "items",
  "properties",
  "description",
  "pattern",
  "format",
  "required",
  "enum",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
] as const;
const KEEP: Record<Platform, readonly string[]> = {
  vapi: ["type", "items", "properties", "description", "pattern", "format", "required", "enum", "title"],
  retell: SIZED,
  elevenlabs: ["type", "items", "properties", "description", "required", "enum"],
  openai: SIZED,
};

/** A nullable member (`anyOf` with null, or a type list with "null") as its one non-null form: omitting it is how a tool says null. */
function nonNull(node: Json): Json {
  const options = Array.isArray(node.anyOf) ? (node.anyOf as Json[]).filter((o) => o.type !== "null") : undefined;
  const { anyOf: _, ...rest } = node;
  const merged = options?.length === 1 ? { ...options[0], ...rest } : node;
  if (Array.isArray(merged.type)) merged.type = (merged.type as string[]).find((t) => t !== "null");
  return merged;
}

/** A property schema in the part of JSON Schema `platform` knows; every property described (ElevenLabs wants one). */
function portable(node: Json, platform: Platform, name?: string): Property {
  const source = nonNull(node);
  const out: Json = {};
  for (const key of KEEP[platform]) {
    const value = source[key];
    if (value === undefined) continue;
    if (key === "properties") {
      out.properties = Object.fromEntries(
        Object.entries(value as Record<string, Json>).map(([n, p]) => [n, portable(p, platform, n)]),
      );
    } else if (key === "items") out.items = portable(value as Json, platform);
    else if (key === "format" && platform === "vapi" && !VAPI_FORMATS.has(value as string)) continue;
    else if (key === "enum" && !(value as unknown[]).every((v) => typeof v === "string")) continue;
    else out[key] = value;
  }
  if (out.type === undefined) out.type = "string";
  if (name !== undefined && out.description === undefined) out.description = name;
  return out as unknown as Property;
}

/** A description within the platforms' limit, cut at a word. */
function described(text: string): string {
  if (text.length <= DESCRIPTION_MAX) return text;
  return `${text.slice(0, DESCRIPTION_MAX - 1).replace(/\s+\S*$/, "")}…`;
}

const headers = ({ orgId }: Target) => ({ "X-ORG-ID": orgId, "X-API-KEY": API_KEY_PLACEHOLDER });

/** The root object of a tool's arguments for `platform`: type, properties, required (nothing else at the root). */
function parameters(op: Operation, platform: Platform): ToolParameters {
  const { properties = {}, required = [] } = portable(toolInputSchema(op), platform);
  return { type: "object", properties, required };
}

function vapi(op: Operation, target: Target): VapiTool {
  // portable() kept only the formats Vapi knows.
  const args = parameters(op, "vapi") as ToolParameters<VapiFormat>;
  return {
    type: "function",
    function: { name: op.tool, description: described(op.description), parameters: args },
    server: { url: `${target.origin}/api/v1/integrations/vapi/tool-calls`, headers: headers(target) },
  };
}

function retell(op: Operation, target: Target): RetellTool {
  return {
    type: "custom",
    name: op.tool,
    description: described(op.description),
    url: `${target.origin}/api/v1/integrations/retell/${op.tool}`,
    method: "POST",
    parameters: parameters(op, "retell"),
    headers: headers(target),
    args_at_root: false,
    speak_during_execution: isWriteTool(op),
    speak_after_execution: true,
  };
}

/** A property as ElevenLabs' literal (every agent tool's parameters are literals; anything else is sent as text). */
function literal(property: Property): ElevenLabsLiteral {
  const type = ["string", "number", "integer", "boolean"].includes(property.type) ? property.type : "string";
  return {
    type: type as ElevenLabsLiteral["type"],
    description: property.description ?? "",
    ...(property.enum && { enum: property.enum }),
  };
}

/** ElevenLabs calls the operation's own path: the body's or the query's properties, `{id}` a path parameter. */
function elevenlabs(op: Operation, target: Target): ElevenLabsTool {
  const schemaOf = (lazy: (() => unknown) | undefined) =>
    lazy ? portable(jsonSchema(lazy() as z.ZodType, "input"), "elevenlabs") : undefined;
  const literals = (schema: Property | undefined) =>
    Object.fromEntries(Object.entries(schema?.properties ?? {}).map(([name, p]) => [name, literal(p)]));
  const body = schemaOf(op.body);
  const query = schemaOf(op.query);
  const path = schemaOf(op.params);
  return {
    type: "webhook",
    name: op.tool,
    description: described(op.description),
    api_schema: {
      url: `${target.origin}${op.path}`,
      method: op.method === "get" ? "GET" : "POST",
      // ElevenLabs fills these from its system variables: the caller's number and the conversation.
      request_headers: {
        ...headers(target),
        "X-Caller-Phone": { variable_name: "system__caller_id" },
        "X-Call-Id": { variable_name: "system__conversation_id" },
      },
      ...(path && { path_params_schema: literals(path) }),
      ...(query && Object.keys(query.properties ?? {}).length > 0
        ? { query_params_schema: { properties: literals(query), required: query.required ?? [] } }
        : {}),
      ...(body && {
        request_body_schema: {
          type: "object" as const,
          description: `The ${op.tool} request`,
          properties: literals(body),
          required: body.required ?? [],
        },
      }),
    },
  };
}

function openai(op: Operation): OpenAiTool {
  return {
    type: "function",
    name: op.tool,
    description: described(op.description),
    parameters: parameters(op, "openai"),
  };
}

const BUILDERS: { [P in Platform]: (op: Operation, target: Target) => ToolOf[P] } = {
  vapi,
  retell,
  elevenlabs,
  openai: (op) => openai(op),
};

/**
 * The agent's tools (the operations a key of role `agent` may call) that the
 * target's key may call, as `platform`'s definitions calling `target`.
 */
export function toolDefinitions<P extends Platform>(
  platform: P,
  operations: readonly Operation[],
  target: Target,
): ToolOf[P][] {
  const chosen = operations.filter((op) => mayCall(op, "agent") && mayCall(op, target.role));
  return chosen.map((op) => BUILDERS[platform](op, target));
}
