// Opaque keyset cursors for the lists: the last row's (sort time, id)
// plus a fingerprint of the org and filters the cursor was issued for, so that
// a cursor replayed against another org or other filters is refused (422)
// instead of silently paging through something else.
import { sha256Hex } from "../lib/hash";
import { ApiError } from "./problem";

export interface CursorPosition {
  /** The time the list is sorted by (a contact's createdAt, an incident's start). */
  at: number;
  id: string;
}

const ID = /^[a-z]{2,4}_[0-9a-z]{26}$/;

const fingerprint = async (scope: unknown): Promise<string> => (await sha256Hex(JSON.stringify(scope))).slice(0, 16);

export async function encodeCursor(position: CursorPosition, scope: unknown): Promise<string> {
  const json = JSON.stringify({ t: position.at, i: position.id, s: await fingerprint(scope) });
  return btoa(json).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

export async function decodeCursor(token: string, scope: unknown): Promise<CursorPosition> {
  const invalid = new ApiError("validation_failed", "1 field is invalid", {
    errors: [
      {
        path: "cursor",
        code: "invalid_cursor",
        message: "is not a cursor issued for this list; start again without it",
      },
    ],
  });
  let parsed: unknown;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(token)) throw invalid;
    parsed = JSON.parse(atob(token.replaceAll("-", "+").replaceAll("_", "/")));
  } catch {
    throw invalid;
  }
  const { t, i, s } = (parsed ?? {}) as Record<string, unknown>;
  if (!Number.isSafeInteger(t) || (t as number) < 0 || typeof i !== "string" || !ID.test(i)) throw invalid;
  if (s !== (await fingerprint(scope))) throw invalid;
  return { at: t as number, id: i };
}
