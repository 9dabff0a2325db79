// The admin CLI's flags, and its command line read with them: by main.ts, and
// by the e2e harness, which runs a command in its own process as main.ts does.
import { type ParseArgsConfig, parseArgs } from "node:util";

export const OPTIONS = {
  local: { type: "boolean" },
  remote: { type: "boolean" },
  "persist-to": { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  name: { type: "string" },
  "time-zone": { type: "string" },
  country: { type: "string" },
  org: { type: "string" },
  key: { type: "string" },
  file: { type: "string" },
  url: { type: "string" },
  events: { type: "string" },
  endpoint: { type: "string" },
  event: { type: "string" },
  limit: { type: "string" },
  id: { type: "string" },
  duration: { type: "string" },
  buffer: { type: "string" },
  window: { type: "string" },
  skills: { type: "string" },
  keywords: { type: "string" },
  default: { type: "boolean" },
  active: { type: "string" },
  "postal-codes": { type: "string" },
  "hours-file": { type: "string" },
  "days-off": { type: "string" },
  reassign: { type: "boolean" },
  platform: { type: "string" },
  "base-url": { type: "string" },
  role: { type: "string" },
} satisfies ParseArgsConfig["options"];

/** `argv` as the CLI reads it: its flags (refusing unknown ones) and the command's name, its words joined. */
export function parseCommandLine(argv: string[]) {
  const { values: flags, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: OPTIONS,
  });
  return { flags, name: positionals.join(" ") };
}
