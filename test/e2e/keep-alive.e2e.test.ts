// End-to-end proof that a 413 leaves its kept-alive HTTP/1.1 connection usable
// (src/http/body.ts, discardRest): a client sends an oversized POST and then
// another request on the same socket, written and read byte for byte over
// node:net, against a real `wrangler dev`. Without the discarding, a body
// refused part-way through its stream leaves wrangler dev's proxy answering the
// next request with its plain-text 503, or a GET not at all.
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin, applyMigrations, DevServer, freePort, jsonLine, type Tenant } from "./harness";

const OVERSIZED = Buffer.from(JSON.stringify({ notes: "x".repeat(100 * 1024) }));
const CHUNK = 8 * 1024;
const ANSWER_MS = 10_000;

let stateDir: string | undefined;
let server: DevServer | undefined;
let port: number;
let org: Tenant;

beforeAll(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-e2e-keep-alive-"));
  stateDir = dir;
  await applyMigrations(dir);
  port = await freePort();
  server = await DevServer.start(dir, port);
  org = jsonLine<Tenant>(await admin(dir, ["org", "create", "--name", "Keep Alive"]), "org create");
});

afterAll(async () => {
  await server?.stop();
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One socket: write a request, read its whole response (Content-Length framed), and so on. */
class Connection {
  private received = Buffer.alloc(0);
  private closed = false;
  private wake = () => {};

  private constructor(private readonly socket: net.Socket) {
    socket.on("data", (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      this.wake();
    });
    socket.on("close", () => {
      this.closed = true;
      this.wake();
    });
    socket.on("error", () => {}); // seen as the close that follows
  }

  static open(): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, "127.0.0.1", () => resolve(new Connection(socket)));
      socket.once("error", reject);
    });
  }

  write(...parts: (string | Buffer)[]): void {
    for (const part of parts) this.socket.write(part);
  }

  /** The next response, or why there is none within ANSWER_MS. */
  async response(): Promise<RawResponse | string> {
    const deadline = Date.now() + ANSWER_MS;
    for (;;) {
      const parsed = this.take();
      if (parsed) return parsed;
      if (this.closed) return `connection closed; unparsed: ${JSON.stringify(this.received.toString())}`;
      const left = deadline - Date.now();
      if (left <= 0) return `no answer in ${ANSWER_MS} ms; unparsed: ${JSON.stringify(this.received.toString())}`;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  close(): void {
    this.socket.destroy();
  }

  private take(): RawResponse | undefined {
    const end = this.received.indexOf("\r\n\r\n");
    if (end < 0) return undefined;
    const [statusLine, ...lines] = this.received.subarray(0, end).toString("latin1").split("\r\n");
    const headers = Object.fromEntries(
      lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]),
    );
    const length = Number(headers["content-length"]);
    if (!Number.isInteger(length))
      throw new Error(`not Content-Length framed: ${statusLine} ${JSON.stringify(headers)}`);
    if (this.received.length < end + 4 + length) return undefined;
    const body = this.received.subarray(end + 4, end + 4 + length).toString();
    this.received = this.received.subarray(end + 4 + length);
    return { status: Number(statusLine!.split(" ")[1]), headers, body };
  }
}

const head = (method: string, urlPath: string, extra: string[] = []) =>
  [`${method} ${urlPath} HTTP/1.1`, `Host: 127.0.0.1:${port}`, ...extra, "", ""].join("\r\n");
const authorised = () => [`X-ORG-ID: ${org.orgId}`, `X-API-KEY: ${org.apiKey}`, "Content-Type: application/json"];

/** The oversized lead, framed by Content-Length (refused on the header) or chunked (refused as it streams). */
function sendOversized(connection: Connection, framing: "content-length" | "chunked"): void {
  if (framing === "content-length") {
    connection.write(
      head("POST", "/api/v1/leads", [...authorised(), `Content-Length: ${OVERSIZED.length}`]),
      OVERSIZED,
    );
    return;
  }
  connection.write(head("POST", "/api/v1/leads", [...authorised(), "Transfer-Encoding: chunked"]));
  for (let at = 0; at < OVERSIZED.length; at += CHUNK) {
    const chunk = OVERSIZED.subarray(at, at + CHUNK);
    connection.write(`${chunk.length.toString(16)}\r\n`, chunk, "\r\n");
  }
  connection.write("0\r\n\r\n");
}

const NEXT = {
  "a lead": () => {
    const body = JSON.stringify({ firstName: "Kept" });
    return head("POST", "/api/v1/leads", [...authorised(), `Content-Length: ${Buffer.byteLength(body)}`]) + body;
  },
  "GET /health": () => head("GET", "/health"),
};

describe("a 413 on a kept-alive connection", () => {
  it.each([
    ["chunked", "a lead"],
    ["chunked", "GET /health"],
    ["content-length", "a lead"],
  ] as const)("after a %s oversized POST, the API answers %s on the same socket", async (framing, next) => {
    const connection = await Connection.open();
    try {
      sendOversized(connection, framing);
      const refused = await connection.response();
      if (typeof refused === "string") throw new Error(`the oversized POST: ${refused}`);
      expect(refused.status, refused.body).toBe(413);
      expect(JSON.parse(refused.body)).toMatchObject({ code: "payload_too_large" });

      connection.write(NEXT[next]());
      const answer = await connection.response();
      if (typeof answer === "string") throw new Error(`${next} after the 413: ${answer}`);
      expect(answer.status, answer.body).toBe(200);
      expect(answer.headers["content-type"]).toBe("application/json");
      expect(answer.headers["x-request-id"]).toBeTruthy();
      expect(JSON.parse(answer.body)).toEqual(
        next === "a lead" ? expect.objectContaining({ id: expect.stringMatching(/^lead_/) }) : { status: "ok" },
      );
    } finally {
      connection.close();
    }
  });
});
