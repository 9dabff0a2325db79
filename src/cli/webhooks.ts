// `webhook …` commands of the admin CLI (docs/operations.md, "Webhook endpoints"). Secrets are made and
// encrypted here, shown once by `add` and `rotate-secret`, and never read back.
import { EVENT_TYPES, type EventType } from "../../drizzle/schema";
import type { Db } from "../db/client";
import { orgExists } from "../db/orgs";
import {
  addEndpoint,
  getEndpoint,
  getEvent,
  listDeliveries,
  listEndpoints,
  MAX_ENDPOINTS,
  removeEndpoint,
  requestReplays,
  rotateSecret,
  subscribersAt,
} from "../db/webhooks";
import { newId } from "../lib/ids";
import { encryptSecret } from "../webhooks/key";
import { newSecret } from "../webhooks/signature";
import { checkEndpointUrl } from "../webhooks/urls";
import { CliError } from "./errors";

export type Flags = Record<string, string | boolean | undefined>;

export interface CliEnv {
  /** The AES-GCM key of endpoint secrets; throws a CliError saying why when it cannot be used. */
  webhookKey: () => string;
}

export type Command = (db: Db, flags: Flags, env: CliEnv) => Promise<object>;

export const required = (flags: Flags, name: string): string => {
  const value = flags[name];
  if (typeof value !== "string" || value.trim() === "") throw new CliError(`--${name} is required`);
  return value.trim();
};

const optional = (flags: Flags, name: string): string | undefined =>
  flags[name] === undefined ? undefined : required(flags, name);

/** `--events a,b`: known types, without repeats; every type when absent. */
export function parseEventTypes(text: string | undefined): EventType[] {
  if (text === undefined) return [...EVENT_TYPES];
  const names = text
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  if (names.length === 0) throw new CliError(`--events needs at least one type (known: ${EVENT_TYPES.join(", ")})`);
  const unknown = names.filter((name) => !(EVENT_TYPES as readonly string[]).includes(name));
  if (unknown.length > 0)
    throw new CliError(`unknown event type: ${unknown.join(", ")} (known: ${EVENT_TYPES.join(", ")})`);
  return EVENT_TYPES.filter((type) => names.includes(type));
}

function parseLimit(text: string | undefined): number {
  if (text === undefined) return 100;
  if (!/^\d{1,4}$/.test(text) || Number(text) < 1 || Number(text) > 1000)
    throw new CliError("--limit must be an integer from 1 to 1000");
  return Number(text);
}

async function knownOrg(db: Db, flags: Flags): Promise<string> {
  const orgId = required(flags, "org");
  if (!(await orgExists(db, orgId))) throw new CliError(`unknown org: ${orgId}`);
  return orgId;
}

async function knownEndpoint(db: Db, orgId: string, endpointId: string) {
  const endpoint = await getEndpoint(db, orgId, endpointId);
  if (!endpoint) throw new CliError(`org ${orgId} has no webhook endpoint ${endpointId}`);
  return endpoint;
}

async function knownEvent(db: Db, orgId: string, eventId: string) {
  const event = await getEvent(db, orgId, eventId);
  if (!event) throw new CliError(`org ${orgId} has no event ${eventId} (events are kept 30 days)`);
  return event;
}

export const WEBHOOK_COMMANDS: Record<string, Command> = {
  "webhook add": async (db, f, env) => {
    const checked = checkEndpointUrl(required(f, "url"));
    if ("error" in checked) throw new CliError(`--url: ${checked.error}`);
    const events = parseEventTypes(optional(f, "events"));
    const key = env.webhookKey();
    const orgId = await knownOrg(db, f);
    const endpointId = newId("ep");
    const secret = newSecret();
    const ciphertext = await encryptSecret(key, endpointId, secret);
    const added = await addEndpoint(db, {
      orgId,
      id: endpointId,
      url: checked.url,
      events,
      ciphertext,
      now: Date.now(),
    });
    if (!added) throw new CliError(`org ${orgId} already has ${MAX_ENDPOINTS} webhook endpoints (the most allowed)`);
    return { endpointId, url: checked.url, events, secret };
  },
  "webhook list": async (db, f) => ({ endpoints: await listEndpoints(db, await knownOrg(db, f)) }),
  "webhook remove": async (db, f) => {
    const orgId = await knownOrg(db, f);
    const endpointId = required(f, "endpoint");
    if (!(await removeEndpoint(db, orgId, endpointId)))
      throw new CliError(`org ${orgId} has no webhook endpoint ${endpointId}`);
    return { endpointId, removed: true };
  },
  "webhook rotate-secret": async (db, f, env) => {
    const key = env.webhookKey();
    const orgId = await knownOrg(db, f);
    const endpointId = required(f, "endpoint");
    const secret = newSecret();
    const ciphertext = await encryptSecret(key, endpointId, secret);
    if (!(await rotateSecret(db, orgId, endpointId, ciphertext, Date.now())))
      throw new CliError(`org ${orgId} has no webhook endpoint ${endpointId}`);
    return { endpointId, secret };
  },
  "webhook deliveries": async (db, f) => {
    const limit = parseLimit(optional(f, "limit"));
    const orgId = await knownOrg(db, f);
    const endpointId = optional(f, "endpoint");
    const eventId = optional(f, "event");
    if (endpointId !== undefined) await knownEndpoint(db, orgId, endpointId);
    if (eventId !== undefined) await knownEvent(db, orgId, eventId);
    return { deliveries: await listDeliveries(db, { orgId, endpointId, eventId, limit }) };
  },
  "webhook replay": async (db, f) => {
    const orgId = await knownOrg(db, f);
    const event = await knownEvent(db, orgId, required(f, "event"));
    const endpointId = optional(f, "endpoint");
    let endpoints: string[];
    if (endpointId === undefined) {
      // Every enabled endpoint that was subscribed to it when it was recorded.
      endpoints = await subscribersAt(db, orgId, event.type, event.createdAt);
    } else {
      const endpoint = await knownEndpoint(db, orgId, endpointId);
      if (endpoint.status !== "enabled")
        throw new CliError(`webhook endpoint ${endpointId} is disabled (a 410 Gone); remove it and add it again`);
      endpoints = [endpointId];
    }
    await requestReplays(db, orgId, event.id, endpoints, Date.now());
    return { eventId: event.id, queued: endpoints.length };
  },
};
