// `tools export` (docs/voice-agents.md): the tool definitions of a voice
// platform, offline, exactly as GET /api/v1/integrations/{platform}/tools
// serves them to a caller of that org at that origin.
import { PLATFORMS, type Platform, toolDefinitions } from "../integrations/definitions";
import { OPERATIONS } from "../routes";
import { CliError } from "./errors";
import { keyRole } from "./roles";
import { type Flags, required } from "./webhooks";

export function exportTools(flags: Flags): unknown[] {
  const platform = required(flags, "platform") as Platform;
  if (!PLATFORMS.includes(platform)) throw new CliError(`--platform must be one of ${PLATFORMS.join(", ")}`);
  const text = required(flags, "base-url");
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CliError(`--base-url must be a URL such as https://api.example.com (got ${text})`);
  }
  if (!["http:", "https:"].includes(url.protocol) || url.pathname !== "/" || url.search || url.hash)
    throw new CliError(`--base-url must be the service's origin, http(s) with no path (got ${text})`);
  const role = keyRole(flags.role, "agent");
  return toolDefinitions(platform, OPERATIONS, { origin: url.origin, orgId: required(flags, "org"), role });
}
