// End-to-end harness: runs the real admin CLI and a real `wrangler dev` as
// child processes against one throwaway local state folder, and talks to the
// server over plain HTTP. Nothing here imports the worker's own code.
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type Credentials, type ReadResponse, type RequestOptions, readResponse, toRequest } from "../support/http";

export const ROOT = path.resolve(import.meta.dirname, "../..");

export const ENV: NodeJS.ProcessEnv = {
  ...process.env,
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  CI: "true",
};

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

export async function applyMigrations(stateDir: string, config?: string): Promise<void> {
  const result = await run("npx", [
    "wrangler",
    "d1",
    "migrations",
    "apply",
    "DB",
    "--local",
    "--persist-to",
    stateDir,
    ...(config ? ["--config", config] : []),
  ]);
  if (result.code !== 0)
    throw new Error(`migrations failed (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
}

/**
 * `wrangler d1 execute DB --local` on a state folder (with another config's
 * database if given): the rows of the last statement. A statement that meets
 * another process's lock on the folder is tried again, up to 3 times.
 */
export async function d1Execute(stateDir: string, sql: string, config?: string): Promise<Record<string, unknown>[]> {
  const args = ["wrangler", "d1", "execute", "DB", "--local", "--persist-to", stateDir, "--json", "--command", sql];
  let last = "";
  for (let attempt = 0; attempt < 3; attempt++) {
    const result = await oneAtATime(stateDir, () => run("npx", [...args, ...(config ? ["--config", config] : [])]));
    if (result.code === 0)
      return (JSON.parse(result.stdout) as { results: Record<string, unknown>[] }[]).at(-1)!.results;
    last = `${result.stdout}\n${result.stderr}`;
  }
  throw new Error(`d1 execute failed:\n${last}`);
}

/** `npx tsx src/cli/main.ts <args>`: the admin CLI as a user runs it. */
export const cli = (args: string[]) => run("npx", ["tsx", "src/cli/main.ts", ...args]);

/**
 * Each process that opens a state folder without a server (the CLI, `wrangler
 * d1 execute`) starts its own workerd on the folder's SQLite files; two at once
 * can trip workerd's own assertions or hang (seen in CI). So the processes of
 * one folder run one at a time, in the order they were asked for.
 */
const folderQueues = new Map<string, Promise<unknown>>();
function oneAtATime<T>(stateDir: string, task: () => Promise<T>): Promise<T> {
  const turn = (folderQueues.get(stateDir) ?? Promise.resolve()).then(task, task);
  folderQueues.set(
    stateDir,
    turn.catch(() => undefined),
  );
  return turn;
}

/** `npx tsx src/cli/main.ts <args> --persist-to <dir> --json`, one process per folder at a time. */
export const admin = (stateDir: string, args: string[]) =>
  oneAtATime(stateDir, () => cli([...args, "--persist-to", stateDir, "--json"]));

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
      /^(\s*migrations_dir\s*=\s*)"([^"]+)"/gm,
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
      "wrangler",
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
    const child = spawn("npx", args, { cwd: ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
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

  /** The id of its process group (npx, wrangler and workerd): the bench reads the group's CPU time from /proc. */
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

  /** SIGTERM to the whole process group (npx, wrangler, workerd), SIGKILL if it lingers. */
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
