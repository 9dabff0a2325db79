// One way to read a response in tests, in workerd and in Node alike.
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
