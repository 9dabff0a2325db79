// One declaration per operation: method, path, schemas,
// problems, MCP tool name and handler together, in the route file of its
// resource. The router (src/middleware/mount.ts), the OpenAPI document and the MCP
// tool list are all read off these declarations.
import type { Context } from "hono";
import type * as z from "zod/v4";
import type { KeyRole } from "../../drizzle/schema";
import type { AppEnv } from "../env";
import type { ProblemCode } from "./errors";

/** A schema as declared: built on first use (src/lib/once.ts), so startup builds none. */
export type Lazy<T extends z.ZodType = z.ZodType> = () => T;
type Schema = Lazy | undefined;
type Out<S extends Schema> = S extends Lazy<infer T> ? z.output<T> : undefined;

/** What a handler reads: the validated body, query and path parameters, nothing raw. */
export interface Input<B extends Schema, Q extends Schema, P extends Schema> {
  body: Out<B>;
  query: Out<Q>;
  params: Out<P>;
}

export interface Operation<B extends Schema = Schema, Q extends Schema = Schema, P extends Schema = Schema> {
  operationId: string;
  /** Its name as an MCP tool. */
  tool: string;
  method: "get" | "post";
  /** The path as an OpenAPI template (`{id}` for a path parameter). */
  path: string;
  tag: string;
  /**
   * What it does to stored data: `read` never writes, `create` adds and never
   * destroys, `change` alters what exists (the same arguments twice change it
   * once). The MCP tool annotations and the document's `x-read-only` say so.
   */
  effect: "read" | "create" | "change";
  /**
   * The key roles that may call it (docs/api.md, "Key roles"): checked once,
   * after routing and before the rate limit; MCP's tool list, the voice
   * platforms' tools and the document read it too.
   */
  roles: readonly KeyRole[];
  summary: string;
  description: string;
  /** The JSON body of a POST (every POST has one, if only `{}`): the body reader and validation come with it. */
  body?: B;
  query?: Q;
  params?: P;
  response: Lazy;
  /** Problems this operation answers besides those every operation (or every POST) can. */
  errors?: ProblemCode[];
  handler(c: Context<AppEnv>, input: Input<B, Q, P>): Response | Promise<Response>;
}

/** Types the handler's input by the schemas it is declared with. */
export const defineOperation = <
  B extends Schema = undefined,
  Q extends Schema = undefined,
  P extends Schema = undefined,
>(
  operation: Operation<B, Q, P>,
): Operation => operation as Operation;

/** The MCP tool annotations of an operation (agent hosts decide from them what may run unasked). */
export function toolAnnotations(op: Operation) {
  return {
    title: op.summary,
    readOnlyHint: op.effect === "read",
    destructiveHint: op.effect === "change",
    idempotentHint: op.effect !== "create",
    openWorldHint: false,
  };
}

/** Whether a key of `role` may call the operation. */
export const mayCall = (op: Operation, role: KeyRole) => op.roles.includes(role);

/** Hono's form of an OpenAPI path template: `/accounts/{id}` → `/accounts/:id`. */
export const routePath = (template: string) => template.replace(/\{(\w+)\}/g, ":$1");
