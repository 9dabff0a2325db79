// The admin CLI (docs/operations.md, "The admin CLI"): `npm run admin -- <command> [flags]`.
// With --json, stdout carries exactly one JSON object; messages go to stderr.
import { createDb } from "../db/client";
import { keyProblem } from "../webhooks/key";
import { COMMANDS } from "./commands";
import { connect, type Target } from "./connect";
import { CliError, describeUnexpected, whileLocked } from "./errors";
import { parseCommandLine } from "./options";
import { exportTools } from "./tools";

const USAGE = `Usage: npm run admin -- <command> [--local | --persist-to DIR | --remote] [--json]

Commands:
  org create --name NAME [--time-zone IANA] [--country CC]
                                              create an org and its first API key (country: US by default;
                                              phone numbers without "+" are read in it)
  org update --org ORG --country CC           change the org's country
  key create --org ORG [--role office|agent|read]
                                              create another key (shown once); office (the default) may call
                                              everything, agent the agent's operations bound to the caller,
                                              read every operation that changes nothing
  key revoke --org ORG --key KEYID            revoke a key at once
  key list --org ORG                          list keys (never the secrets)
  accounts import --org ORG --file F          import accounts from .json or .csv, all or nothing
  schedule set --org ORG --file F             set the org's schedule from a JSON document
  schedule show --org ORG                     print the org's schedule
  phones backfill [--org ORG]                 store the E.164 form of every contact, account and lead
                                              phone (rows from before it existed, or after a change of
                                              country); batched, safe to run again
  dates check [--org ORG]                     list stored date-times outside the years 0001–9999 (changes nothing)
  dates repair [--org ORG]                    set each repairable one to null, in one batch; lists every change
                                              and the ids of the events rewritten
  webhook add --org ORG --url URL [--events TYPE,...]
                                              add a webhook endpoint (at most 10); prints its secret once
  webhook list --org ORG                      list endpoints (never the secrets)
  webhook remove --org ORG --endpoint ID      remove an endpoint
  webhook rotate-secret --org ORG --endpoint ID
                                              new secret (shown once); the old one signs beside it for 24 h
  webhook deliveries --org ORG [--endpoint ID] [--event ID] [--limit N]
                                              delivery attempts, newest first (100 by default, at most 1000)
  webhook replay --org ORG --event ID [--endpoint ID]
                                              send an event again (by the next minute's sweep)
  service add --org ORG --name N --duration MIN [--buffer MIN] [--window MIN] [--skills a,b]
              [--keywords "x,y"] [--default]
                                              add a service (at most 200); --default takes the mark from the
                                              previous default
  service update --org ORG --id ID [the flags of add] [--active true|false]
                                              change a service; its booked visits keep their times
  service list --org ORG                      list services, inactive ones too
  technician add --org ORG --name N [--skills a,b] [--postal-codes 100,1120] [--hours-file F]
                 [--days-off 2026-12-24,...]
                                              add a technician (--hours-file: a weeklyHours JSON object;
                                              without it the org's hours)
  technician update --org ORG --id ID [the flags of add] [--active true|false] [--reassign]
                                              change a technician; refused, listing the visits, when it
                                              would strand future visits, unless --reassign moves them
  technician list --org ORG                   list technicians, inactive ones too
  technician import --org ORG --file F        import technicians from .json or .csv, all or nothing
  tools export --platform P --base-url URL --org ORG [--role agent|office|read]
                                              print the tool definitions of a voice platform (vapi, retell,
                                              elevenlabs, openai) calling URL as ORG, those a key of the role
                                              (agent by default) may call; offline, no database
  demo seed                                   seed the demo org (local state only)`;

async function main(argv: string[]): Promise<number> {
  const { flags, name } = parseCommandLine(argv);
  // Offline: the definitions need no database (the same JSON array with or without --json).
  if (name === "tools export" && !flags.help) {
    await write(`${JSON.stringify(exportTools(flags), null, flags.json ? undefined : 2)}\n`);
    return 0;
  }
  const command = COMMANDS[name];
  if (flags.help || !command) {
    (flags.help ? process.stdout : process.stderr).write(
      `${name && !command ? `unknown command: ${name}\n\n` : ""}${USAGE}\n`,
    );
    return flags.help ? 0 : 2;
  }
  if (flags.remote && (flags.local || flags["persist-to"]))
    throw new CliError("--remote cannot be combined with --local or --persist-to");
  if (flags.remote && name === "demo seed")
    throw new CliError("the demo org has public credentials; it is never seeded with --remote");

  const target: Target = { remote: flags.remote === true, persistTo: flags["persist-to"] };
  // With --remote the key comes from the operator's shell: refused before any connection.
  const needsKey = name === "webhook add" || name === "webhook rotate-secret";
  const remoteKeyProblem = keyProblem({ WEBHOOK_SECRET_KEY: process.env.WEBHOOK_SECRET_KEY });
  if (target.remote && needsKey && remoteKeyProblem)
    throw new CliError(`${remoteKeyProblem}; export the deployed key as WEBHOOK_SECRET_KEY for --remote`);
  const { d1, keyEnv, dispose } = await connect(target);
  const webhookKey = () => {
    const problem = keyProblem(keyEnv);
    if (problem) throw new CliError(problem);
    return keyEnv.WEBHOOK_SECRET_KEY!;
  };
  try {
    const result = await whileLocked(() => command(createDb(d1), flags, { webhookKey }));
    await write(flags.json ? `${JSON.stringify(result)}\n` : humanReadable(result));
  } finally {
    await dispose();
  }
  return 0;
}

function humanReadable(result: object): string {
  if ("weeklyHours" in result) return `${JSON.stringify(result, null, 2)}\n`;
  const lines = Object.entries(result).map(([key, value]) =>
    !Array.isArray(value)
      ? `${key}: ${value !== null && typeof value === "object" ? JSON.stringify(value) : value}`
      : value.length === 0
        ? `${key}: none`
        : value.every((item) => typeof item === "string")
          ? `${key}: ${value.join(", ")}`
          : `${key}: ${value.length} (use --json for the list)`,
  );
  if ("apiKey" in result && "keyId" in result) lines.push("Store the API key now: it is shown only once.");
  if ("secret" in result) lines.push("Store the signing secret now: it is shown only once.");
  return `${lines.join("\n")}\n`;
}

/** Resolves once the text is flushed, so large outputs are complete when the process exits. */
const write = (text: string) =>
  new Promise<void>((resolve, reject) => process.stdout.write(text, (e) => (e ? reject(e) : resolve())));

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const known = error instanceof CliError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS");
    const message = known ? (error as Error).message : `unexpected error: ${describeUnexpected(error)}`;
    process.stderr.write(`error: ${message}\n`);
    process.exitCode = 1;
  },
);
