// End-to-end harness: runs a real `wrangler dev` (and, where a test is about
// the process, the real admin CLI) as child processes against one throwaway
// local state folder, and talks to the server over plain HTTP. The worker's
// code is never imported; the admin CLI's commands are, for test setup in
// this process (see IN_PROCESS).
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describeUnexpected, whileLocked } from "../../src/cli/errors";
import { type Credentials, type ReadResponse, type RequestOptions, readResponse, toRequest } from "../support/http";

export const ROOT = path.resolve(import.meta.dirname, "../..");

/**
 * A binary of the project's node_modules, run as `npm run` runs a script's
 * (`npx` would add an npm process, seconds on a busy machine, to each run).
 */
export const bin = (name: string) => path.join(ROOT, "node_modules", ".bin", name);

export const ENV: NodeJS.ProcessEnv = {
  ...process.env,
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  CI: "true",
};

/**
 * Runs `task` while no other heavy e2e file runs (bench.e2e and load.e2e: a
 * server or two driven flat out by many connections). Two at once on a
 * 2-core machine slowed one past its timeout in CI. The lock is a folder in
 * the OS's temp folder, so it holds across vitest's worker processes; one
 * whose holder has died is taken over.
 */
export async function oneHeavyAtATime<T>(task: () => Promise<T>): Promise<T> {
  const lock = path.join(os.tmpdir(), "fs-e2e-heavy.lock");
  const owner = path.join(lock, "pid");
  for (;;) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(owner, String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      if (holderGone(lock, owner)) fs.rmSync(lock, { recursive: true, force: true });
      else await sleep(500);
    }
  }
  try {
    return await task();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

/** The lock's holder is no longer running (or never wrote its pid, 10 s after taking the folder). */
function holderGone(lock: string, owner: string): boolean {
  try {
    process.kill(Number(fs.readFileSync(owner, "utf8")), 0);
    return false;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ESRCH") return true;
    if (code === "ENOENT") {
      try {
        return Date.now() - fs.statSync(lock).mtimeMs > 10_000;
      } catch {
        return false; // released meanwhile
      }
    }
    return false;
  }
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion (never rejects on a non-zero exit; kills it after `timeoutMs`). */
export function run(command: string, args: string[], timeoutMs = 60_000): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env: ENV, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The admin CLI and `wrangler d1` on a state folder, in this process: inside
 * vitest, each folder (and config) gets one platform proxy — the connection
 * the CLI itself opens (src/cli/connect.ts) — kept open for the test file,
 * instead of a process and a workerd for each command (about 6 s apiece).
 * `admin` runs the CLI's own COMMANDS[name] on it; `d1Execute` and
 * `applyMigrations` do what `wrangler d1 execute` and `wrangler d1 migrations
 * apply` do locally (wrangler's own SQL splitter, one batch). A `wrangler dev`
 * on the folder sees these writes at once, and they see its writes: the same
 * SQLite files. Outside vitest (the bench scripts, which must exit when done),
 * or with E2E_ADMIN=process, each call is the child process it stands for;
 * `adminProcess` and `cli` always are. A test file's proxies close after its
 * tests (or at `closeFolder`).
 */
export const IN_PROCESS = "__vitest_worker__" in globalThis && process.env.E2E_ADMIN !== "process";

/** wrangler and the CLI's modules, loaded by the first in-process call (so never by the bench scripts). */
let loading: ReturnType<typeof load> | undefined;
async function load() {
  const [wrangler, commands, connection, errors, options, client, key] = await Promise.all([
    import("wrangler"),
    import("../../src/cli/commands"),
    import("../../src/cli/connect"),
    import("../../src/cli/errors"),
    import("../../src/cli/options"),
    import("../../src/db/client"),
    import("../../src/webhooks/key"),
  ]);
  return {
    getPlatformProxy: wrangler.getPlatformProxy,
    readConfig: wrangler.unstable_readConfig,
    splitSqlQuery: wrangler.unstable_splitSqlQuery,
    COMMANDS: commands.COMMANDS,
    parseCommandLine: options.parseCommandLine,
    connect: connection.connect,
    CliError: errors.CliError,
    createDb: client.createDb,
    keyProblem: key.keyProblem,
  };
}
const modules = () => {
  loading ??= load();
  return loading;
};

interface Folder {
  d1: D1Database;
  keyEnv: { WEBHOOK_SECRET_KEY?: string; LOCAL_DEVELOPMENT?: string };
  dispose: () => Promise<void>;
}

const folders = new Map<string, Promise<Folder>>();
const folderKey = (stateDir: string, config?: string) =>
  `${path.resolve(stateDir)}\0${config === undefined ? "" : path.resolve(ROOT, config)}`;

/** How long a folder's local proxy may take to start before it is started again. */
const FOLDER_START_MS = 60_000;

/**
 * `start`'s proxy, started again (once) when it has not started within
 * FOLDER_START_MS: now and then a file's set-up has hung until its 180 s
 * hook timeout, and a second try costs less than a failed file. The first
 * is disposed of if it ever starts.
 */
async function startedWithin(start: () => Promise<Folder>, stateDir: string): Promise<Folder> {
  for (let attempt = 1; ; attempt++) {
    const starting = start();
    const folder = await Promise.race([starting, sleep(FOLDER_START_MS, undefined, { ref: false })]);
    if (folder) return folder;
    starting.then(
      (late) => late.dispose(),
      () => undefined,
    );
    if (attempt === 2)
      throw new Error(`${stateDir}: the local platform proxy did not start in ${FOLDER_START_MS} ms, twice`);
  }
}

/** The folder's proxy: the CLI's own connection for the project's config, else the same proxy for `config`. */
function openFolder(stateDir: string, config?: string): Promise<Folder> {
  const key = folderKey(stateDir, config);
  let folder = folders.get(key);
  if (!folder) {
    folder = startedWithin(
      () =>
        modules().then(async ({ connect, getPlatformProxy }) => {
          if (config === undefined) return connect({ remote: false, persistTo: stateDir });
          process.env.WRANGLER_LOG ??= "warn";
          const proxy = await getPlatformProxy<{
            DB: D1Database;
            WEBHOOK_SECRET_KEY?: string;
            LOCAL_DEVELOPMENT?: string;
          }>({
            configPath: path.resolve(ROOT, config),
            remoteBindings: false,
            persist: { path: path.join(path.resolve(stateDir), "v3") },
          });
          const { DB, WEBHOOK_SECRET_KEY, LOCAL_DEVELOPMENT } = proxy.env;
          return { d1: DB, keyEnv: { WEBHOOK_SECRET_KEY, LOCAL_DEVELOPMENT }, dispose: () => proxy.dispose() };
        }),
      stateDir,
    );
    folders.set(key, folder);
    const started = folder;
    // One that failed to start is started afresh by the next call.
    started.catch(() => folders.get(key) === started && folders.delete(key));
  }
  return folder;
}

// Each test file's proxies close when it is done (a file may also close a folder's itself, before removing it).
if (IN_PROCESS) {
  const { afterAll } = await import("vitest");
  afterAll(() => Promise.all([...new Set([...folders.keys()].map((key) => key.split("\0")[0]!))].map(closeFolder)));
}

/** Closes the folder's proxies once what is queued on it is done; a later call opens one again. */
export function closeFolder(stateDir: string): Promise<void> {
  return oneAtATime(stateDir, async () => {
    const prefix = folderKey(stateDir);
    const open = [...folders].filter(([key]) => key.startsWith(prefix));
    for (const [key] of open) folders.delete(key);
    await Promise.all(
      open.map(([, folder]) =>
        folder.then(
          (f) => f.dispose(),
          () => undefined,
        ),
      ),
    );
  });
}

/** `wrangler d1 execute --local`'s steps: the SQL split by wrangler's splitter and run as one batch; each statement's rows. */
async function executeBatch(d1: D1Database, sql: string): Promise<Record<string, unknown>[][]> {
  const { splitSqlQuery } = await modules();
  const results = await d1.batch<Record<string, unknown>>(splitSqlQuery(sql).map((query) => d1.prepare(query)));
  // As its --json prints them: an array value (a blob) as "[1, 2]".
  return results.map((result) =>
    (result.results ?? []).map((row) =>
      Object.fromEntries(
        Object.entries(row).map(([key, value]) => [key, Array.isArray(value) ? `[${value.join(", ")}]` : value]),
      ),
    ),
  );
}

/** `wrangler d1 migrations apply DB --local --persist-to <dir>` (with another config's database and migrations if given). */
export function applyMigrations(stateDir: string, config?: string): Promise<void> {
  if (!IN_PROCESS) return applyMigrationsProcess(stateDir, config);
  return oneAtATime(stateDir, async () => {
    const { readConfig } = await modules();
    const configPath = path.resolve(ROOT, config ?? "wrangler.toml");
    const binding = readConfig({ config: configPath }).d1_databases.find(
      (d: { binding: string }) => d.binding === "DB",
    );
    if (!binding) throw new Error(`${configPath} has no D1 binding DB`);
    const table = binding.migrations_table ?? "d1_migrations";
    const dir = path.resolve(path.dirname(configPath), binding.migrations_dir ?? "migrations");
    // A try that met a stuck proxy is made again on a fresh one: each file is applied with its row, or not at all.
    const apply = () => onProxy(stateDir, config, ({ d1 }) => applyPending(d1, table, dir));
    await apply().catch((error) => {
      if (error instanceof ProxyStuck) return apply();
      throw error;
    });
  });
}

/** The migrations of `dir` not yet in `table`, as `wrangler d1 migrations apply --local` applies them. */
async function applyPending(d1: D1Database, table: string, dir: string): Promise<void> {
  // wrangler's own steps (src/d1/migrations): the table, the names applied, then each new file with its row, one batch each.
  await executeBatch(
    d1,
    `CREATE TABLE IF NOT EXISTS ${table}(
		id         INTEGER PRIMARY KEY AUTOINCREMENT,
		name       TEXT UNIQUE,
		applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
);`,
  );
  const applied = new Set((await executeBatch(d1, `SELECT * FROM ${table} ORDER BY id`))[0]!.map((row) => row.name));
  const pending = fs
    .readdirSync(dir)
    .filter((name) => name.endsWith(".sql") && !applied.has(name))
    .sort()
    .sort((a, b) => Number.parseInt(a.split("_")[0]!, 10) - Number.parseInt(b.split("_")[0]!, 10));
  for (const name of pending) {
    const sql = `${fs.readFileSync(path.join(dir, name), "utf8")}\nINSERT INTO ${table} (name) values ('${name}');`;
    try {
      await executeBatch(d1, sql);
    } catch (error) {
      throw new Error(`migrations failed at ${name}: ${describeUnexpected(error)}`);
    }
  }
}

async function applyMigrationsProcess(stateDir: string, config?: string): Promise<void> {
  const args = ["d1", "migrations", "apply", "DB", "--local", "--persist-to", stateDir];
  const result = await oneAtATime(stateDir, () =>
    run(bin("wrangler"), [...args, ...(config ? ["--config", config] : [])]),
  );
  if (result.code !== 0)
    throw new Error(`migrations failed (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
}

/**
 * `wrangler d1 execute DB --local` on a state folder (with another config's
 * database if given): the rows of the last statement. A statement that meets
 * another process's lock on the folder is tried again, up to 3 times.
 */
export async function d1Execute(stateDir: string, sql: string, config?: string): Promise<Record<string, unknown>[]> {
  let last = "";
  for (let attempt = 1; attempt <= 3; attempt++) {
    if (IN_PROCESS) {
      try {
        return await oneAtATime(stateDir, () =>
          onProxy(stateDir, config, async ({ d1 }) => (await executeBatch(d1, sql)).at(-1)!),
        );
      } catch (error) {
        last = describeUnexpected(error);
        await sleep(100 * attempt);
        continue;
      }
    }
    const args = ["d1", "execute", "DB", "--local", "--persist-to", stateDir, "--json", "--command", sql];
    const result = await oneAtATime(stateDir, () =>
      run(bin("wrangler"), [...args, ...(config ? ["--config", config] : [])]),
    );
    if (result.code === 0)
      return (JSON.parse(result.stdout) as { results: Record<string, unknown>[] }[]).at(-1)!.results;
    last = `${result.stdout}\n${result.stderr}`;
  }
  throw new Error(`d1 execute failed:\n${last}`);
}

/** `tsx src/cli/main.ts <args>`: the admin CLI as a user runs it (`npm run admin -- <args>`). */
export const cli = (args: string[]) => run(bin("tsx"), ["src/cli/main.ts", ...args]);

/**
 * Each process that opens a state folder without a server (the CLI, `wrangler
 * d1 execute`) starts its own workerd on the folder's SQLite files; two at once
 * can trip workerd's own assertions or hang (seen in CI). So the processes of
 * one folder run one at a time, in the order they were asked for, and the
 * in-process calls take their turns in the same queue.
 */
const folderQueues = new Map<string, Promise<unknown>>();
function oneAtATime<T>(stateDir: string, task: () => Promise<T>): Promise<T> {
  const key = path.resolve(stateDir);
  const turn = (folderQueues.get(key) ?? Promise.resolve()).then(task, task);
  folderQueues.set(
    key,
    turn.catch(() => undefined),
  );
  return turn;
}

/** `tsx src/cli/main.ts <args> --persist-to <dir> --json` as a child process, one per folder at a time. */
export const adminProcess = (stateDir: string, args: string[]) =>
  oneAtATime(stateDir, () => cli([...args, "--persist-to", stateDir, "--json"]));

/**
 * `admin <args> --persist-to <dir> --json`: the exit code, stdout and stderr
 * of that process. In this process when it can (IN_PROCESS), as
 * src/cli/main.ts runs a command: the flags read with main.ts's own options
 * table, COMMANDS[name] on the CLI's connection, run again while the database
 * is locked, then one JSON line, or `error: <message>` on stderr and exit 1.
 * Help, an unknown command, flags main.ts would refuse and --remote go to the
 * real process.
 */
export async function admin(stateDir: string, args: string[]): Promise<RunResult> {
  if (!IN_PROCESS) return adminProcess(stateDir, args);
  const { COMMANDS, parseCommandLine } = await modules();
  let parsed: { flags: Flags; name: string };
  try {
    parsed = parseCommandLine([...args, "--json"]);
  } catch {
    return adminProcess(stateDir, args);
  }
  const { flags, name } = parsed;
  const command = COMMANDS[name];
  if (!command || flags.help || flags.remote) return adminProcess(stateDir, args);
  return oneAtATime(stateDir, async () => {
    try {
      return await onProxy(stateDir, undefined, (folder) => runInProcess(folder, command, flags));
    } catch (error) {
      if (!(error instanceof ProxyStuck)) return failed(error);
      // The command runs as the real CLI, on a workerd of its own.
      return cli([...args, "--persist-to", stateDir, "--json"]);
    }
  });
}

/** How long a call may take on an open proxy before the proxy is taken for stuck (one takes well under a second). */
const COMMAND_MS = 30_000;

class ProxyStuck extends Error {}

/**
 * `task` on the folder's proxy, bounded by COMMAND_MS. A proxy that does not
 * answer in time is dropped, so that the next call opens a fresh one, and the
 * call fails with ProxyStuck: set-ups have hung until their hook timeout on a
 * proxy that stopped answering ("Network connection lost", and once with no
 * word at all).
 */
async function onProxy<T>(stateDir: string, config: string | undefined, task: (folder: Folder) => Promise<T>) {
  const folder = await openFolder(stateDir, config);
  const answered = await Promise.race([
    task(folder).then((value) => ({ value })),
    sleep(COMMAND_MS, undefined, { ref: false }),
  ]);
  if (answered) return answered.value;
  forgetFolder(stateDir);
  const stuck = new ProxyStuck(`${stateDir}: the local platform proxy did not answer in ${COMMAND_MS} ms`);
  console.warn(`${stuck.message}; dropped`);
  throw stuck;
}

/** Drops the folder's proxies without waiting on its queue (closeFolder's, from inside a turn). */
function forgetFolder(stateDir: string) {
  const prefix = folderKey(stateDir);
  for (const [key, folder] of [...folders].filter(([key]) => key.startsWith(prefix))) {
    folders.delete(key);
    folder.then(
      (f) => f.dispose().catch(() => undefined),
      () => undefined,
    );
  }
}

/** One command on the folder's proxy, as main.ts runs it. */
async function runInProcess(
  { d1, keyEnv }: Folder,
  command: Awaited<ReturnType<typeof modules>>["COMMANDS"][string],
  flags: Flags,
): Promise<RunResult> {
  const { CliError, createDb, keyProblem } = await modules();
  try {
    const webhookKey = () => {
      const problem = keyProblem(keyEnv);
      if (problem) throw new CliError(problem);
      return keyEnv.WEBHOOK_SECRET_KEY!;
    };
    const result = await whileLocked(() => command(createDb(d1), flags, { webhookKey }));
    return { code: 0, stdout: `${JSON.stringify(result)}\n`, stderr: "" };
  } catch (error) {
    return failed(error);
  }
}

/** A command's failure as main.ts prints it. */
async function failed(error: unknown): Promise<RunResult> {
  const { CliError } = await modules();
  const message = error instanceof CliError ? error.message : `unexpected error: ${describeUnexpected(error)}`;
  return { code: 1, stdout: "", stderr: `error: ${message}\n` };
}

type Flags = Record<string, string | boolean | undefined>;
/** The one JSON line a successful `--json` CLI run prints; throws with the CLI's stderr otherwise. */
export function jsonLine<T>(result: RunResult, what: string): T {
  const lines = result.stdout.split("\n").filter((line) => line.trim() !== "");
  if (result.code !== 0 || lines.length !== 1) {
    throw new Error(
      `${what}: exit ${result.code}, ${lines.length} stdout line(s)\nstdout: ${result.stdout}\nstderr: ${result.stderr}`,
    );
  }
  return JSON.parse(lines[0]!) as T;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error("no port assigned"))));
    });
  });
}

/**
 * A project's wrangler.toml (this one by default) with the rate limit set to `limit` and its
 * relative paths made absolute (a config's paths are relative to its folder).
 * Derived at run time so that it cannot drift from the real configuration.
 */
export function configWithRateLimit(limit: number, root = ROOT): { text: string; original: string } {
  const original = fs.readFileSync(path.join(root, "wrangler.toml"), "utf8");
  const text = original
    .replace(
      /^(\s*main\s*=\s*)"([^"]+)"/m,
      (_m, lead: string, file: string) => `${lead}${JSON.stringify(path.resolve(root, file))}`,
    )
    .replace(
      /^(\s*(?:migrations_dir|directory)\s*=\s*)"([^"]+)"/gm,
      (_m, lead: string, dir: string) => `${lead}${JSON.stringify(path.resolve(root, dir))}`,
    )
    // [alias] entries that name a file of the project.
    .replace(
      /^(\s*"[^"]+"\s*=\s*)"(\.\.?\/[^"]+)"/gm,
      (_m, lead: string, file: string) => `${lead}${JSON.stringify(path.resolve(root, file))}`,
    )
    .replace(/^(\s*simple\s*=\s*\{\s*limit\s*=\s*)\d+(\s*,\s*period\s*=\s*60\s*\})/m, `$1${limit}$2`);
  return { text, original };
}

/** `wrangler dev` in its own process group, with all of its output kept for diagnostics. */
export class DevServer {
  private log = "";
  private exitCode: number | null | undefined;
  // Last resort if the test process ends without afterAll (e.g. interrupted).
  private readonly killOnExit = () => {
    if (this.child.pid !== undefined && this.exitCode === undefined) {
      try {
        process.kill(-this.child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  };

  private constructor(
    private readonly child: ChildProcess,
    readonly baseUrl: string,
    private readonly logFile: string,
    /** wrangler's inspector (Chrome DevTools protocol) port for this server's worker. */
    readonly inspectorPort: number,
  ) {
    const keep = (chunk: Buffer) => {
      this.log += chunk.toString();
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    child.on("exit", (code) => {
      this.exitCode = code;
    });
    process.once("exit", this.killOnExit);
  }

  /**
   * Starts `wrangler dev` and resolves once GET /health answers 200. Nothing
   * else may touch the state folder while it boots: a workerd opening its
   * SQLite files beside another process's write can die of SQLITE_BUSY ("The
   * Workers runtime failed to start"), so the CLI provisions after this.
   * Each server gets its own free inspector port too: suites run in parallel,
   * and wrangler's default (9229) is shared. wrangler's debug log (workerd's
   * own output included) goes to the state folder and into any start failure.
   */
  static async start(stateDir: string, port: number, extraArgs: string[] = [], timeoutMs = 60_000): Promise<DevServer> {
    const inspector = await freePort();
    const args = [
      "dev",
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspector),
      "--persist-to",
      stateDir,
      "--log-level",
      "warn",
      ...extraArgs,
    ];
    const logFile = path.join(stateDir, `wrangler-dev-${port}.log`);
    const env = { ...ENV, WRANGLER_LOG_PATH: logFile };
    const child = spawn(bin("wrangler"), args, { cwd: ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const server = new DevServer(child, `http://127.0.0.1:${port}`, logFile, inspector);
    try {
      await server.waitUntilHealthy(timeoutMs);
    } catch (error) {
      await server.stop();
      throw error;
    }
    return server;
  }

  output(): string {
    return this.log;
  }

  /** The id of its process group (wrangler and workerd): the bench reads the group's CPU time from /proc. */
  get processGroup(): number | undefined {
    return this.child.pid;
  }

  /** Polls GET /health every 200 ms until it answers 200. */
  private async waitUntilHealthy(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.exitCode !== undefined)
        throw new Error(`wrangler dev exited (${this.exitCode}) before it was healthy:\n${this.diagnostics()}`);
      try {
        const response = await fetch(`${this.baseUrl}/health`, { signal: AbortSignal.timeout(2_000) });
        await response.arrayBuffer();
        if (response.status === 200) return;
      } catch {
        // not listening yet
      }
      await sleep(200);
    }
    throw new Error(`wrangler dev was not healthy after ${timeoutMs} ms:\n${this.diagnostics()}`);
  }

  /** Its output, then the last 100 lines of its debug log. */
  private diagnostics(): string {
    let debugLog = "(no debug log)";
    try {
      debugLog = fs.readFileSync(this.logFile, "utf8").split("\n").slice(-100).join("\n");
    } catch {
      // never written
    }
    return `${this.log}\n--- ${this.logFile} (tail) ---\n${debugLog}`;
  }

  /** SIGTERM to the whole process group (wrangler, workerd), SIGKILL if it lingers. */
  async stop(): Promise<void> {
    process.off("exit", this.killOnExit);
    const pid = this.child.pid;
    if (pid === undefined) return;
    const signalGroup = (signal: NodeJS.Signals | 0) => {
      try {
        process.kill(-pid, signal);
        return true;
      } catch {
        return false; // ESRCH: the group is gone
      }
    };
    if (!signalGroup("SIGTERM")) return;
    for (let i = 0; i < 50; i++) {
      await sleep(100);
      if (!signalGroup(0)) return;
    }
    signalGroup("SIGKILL");
  }
}

export type Tenant = Credentials;
export type ApiResponse = ReadResponse;
export type { RequestOptions };

/** One HTTP call as `tenant` (no credentials when null), written and read as the worker-side tests' call(). */
/**
 * `wrangler dev`'s own proxy sometimes answers a request on a pooled
 * connection that sat idle with this plain-text 503 (workers-sdk#14641, fixed
 * upstream after the wrangler we pin); the request never reached the worker.
 * `request` sends exactly that answer again, at most twice, and counts it;
 * any other 5xx — the API's are problem documents — is returned as it came.
 */
const PROXY_LOST = /^Your worker restarted mid-request/;
export const proxyResends = { count: 0 };

export async function request(
  baseUrl: string,
  tenant: Tenant | null,
  urlPath: string,
  options: RequestOptions = {},
): Promise<ApiResponse> {
  for (let attempt = 1; ; attempt++) {
    const response = await readResponse(await fetch(toRequest(`${baseUrl}${urlPath}`, tenant, options)));
    if (attempt === 3 || response.status !== 503 || !PROXY_LOST.test(response.text)) return response;
    proxyResends.count++;
    console.warn(`wrangler dev's proxy lost ${urlPath} (resent; ${proxyResends.count} so far)`);
  }
}
