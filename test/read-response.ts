// One way to read a response in tests, and to check a problem document, in workerd and in Node alike.
import { expect } from "vitest";

export interface ReadResponse {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
  body: any;
}

/** Status, headers, the raw text, and the body parsed as JSON (null when empty or not JSON). */
export async function readResponse(response: Response): Promise<ReadResponse> {
  const text = await response.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  return { status: response.status, headers: response.headers, text, body };
}

/** The RFC 9457 members every error must carry, with `type` derived from `code`. */
export function isProblem(body: {
  type?: unknown;
  title?: unknown;
  status?: unknown;
  code?: unknown;
  requestId?: unknown;
}) {
  return (
    typeof body.type === "string" &&
    typeof body.title === "string" &&
    typeof body.status === "number" &&
    typeof body.code === "string" &&
    body.type === `/problems/${body.code}` &&
    typeof body.requestId === "string"
  );
}

/** A problem response with this status and code, whose requestId is the response's X-Request-Id; returns its body. */
export function expectProblem(res: ReadResponse, status: number, code: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get("Content-Type")).toBe("application/problem+json");
  expect(isProblem(res.body)).toBe(true);
  expect(res.body).toMatchObject({ status, code });
  expect(res.body.requestId).toBe(res.headers.get("X-Request-Id"));
  expect(res.body).not.toHaveProperty("stack");
  return res.body;
}
