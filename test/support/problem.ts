// One check of a problem document (RFC 9457), in workerd and in Node alike.
import { expect } from "vitest";
import type { ReadResponse } from "./http";

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
