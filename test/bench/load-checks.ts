// The checks of a load run (test/bench/load-run.ts): what the clients were answered,
// set against what D1 holds afterwards and what the API reads back.
import type { Kind, Slot } from "./load-run";
import type { LoadOrg, StoredRows } from "./load-state";

export interface Outcome {
  kind: Kind | "health";
  org?: LoadOrg;
  /** 0 when no HTTP answer came (connection error, time-out). */
  status: number;
  ms: number;
  // biome-ignore lint/suspicious/noExplicitAny: bodies of every operation are read
  body: any;
  sentBody?: unknown;
}

export interface Violations {
  serverErrors: number;
  networkErrors: number;
  tooManyRequests: number;
  /** Answers no request of the run should get (any 4xx but a booking's 409 fully_booked, a 200 that does not say what was asked). */
  unexpected: string[];
  /** Writes answered 200 that D1 (or, for contacts, the paged list) does not hold. */
  lostWrites: string[];
  /** Rows of the run's orgs that no 200 acknowledged. */
  unacknowledged: string[];
  /** Slots with more bookings than places, in D1 or by the 200s answered. */
  overbooked: string[];
  /**
   * Slots whose bookings are not exactly min(attempts, capacity) (contract 5.5):
   * a booking refused as full while a place was left, or a 200 D1 lost.
   */
  underbooked: string[];
  /** Slot objects answered with remaining < 0. */
  negativeRemaining: number;
  /** Slots whose remaining, read after the run, is not capacity minus D1's bookings. */
  remainingWrong: string[];
}

type SendAs = (
  org: LoadOrg,
  method: "GET" | "POST",
  urlPath: string,
  json?: unknown,
) => Promise<{ status: number; body: { [key: string]: unknown } }>;

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/** Every `remaining` member anywhere in a body. */
function remainings(value: unknown, out: number[] = []): number[] {
  if (Array.isArray(value)) for (const item of value) remainings(item, out);
  else if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (key === "remaining" && typeof item === "number") out.push(item);
      else remainings(item, out);
    }
  }
  return out;
}

/** The ids the paged contact list shows for `org`, in order; every page at most 200. */
async function listedContacts(org: LoadOrg, sendAs: SendAs): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100; page++) {
    const res = await sendAs(
      org,
      "GET",
      `/api/v1/contacts?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    if (res.status !== 200) throw new Error(`listing contacts: ${res.status} ${JSON.stringify(res.body)}`);
    ids.push(...(res.body.data as { id: string }[]).map((contact) => contact.id));
    cursor = res.body.nextCursor as string | null;
    if (cursor === null) return ids;
  }
  throw new Error("more than 100 pages of contacts");
}

const TABLE: Partial<Record<Kind, keyof StoredRows>> = {
  "create-lead": "leads",
  "create-contact": "contacts",
  "create-incident": "incidents",
};

export async function summarise(input: {
  orgs: LoadOrg[];
  slotsOf: Map<string, Slot[]>;
  outcomes: Outcome[];
  stored: StoredRows;
  send: SendAs;
}) {
  const { orgs, slotsOf, outcomes, stored, send } = input;
  const requests = outcomes.filter(
    (o): o is Outcome & { kind: Kind; org: LoadOrg } => o.kind !== "health" && o.org !== undefined,
  );
  const v: Violations = {
    serverErrors: 0,
    networkErrors: 0,
    tooManyRequests: 0,
    unexpected: [],
    lostWrites: [],
    unacknowledged: [],
    overbooked: [],
    underbooked: [],
    negativeRemaining: 0,
    remainingWrong: [],
  };
  const byKind = Object.fromEntries(
    [
      "list-contacts",
      "get-account",
      "available-appointments",
      "is-booking-available",
      "create-lead",
      "create-contact",
      "create-incident",
    ].map((k) => [k, 0]),
  ) as Record<Kind, number>;
  const byStatus: Record<string, number> = {};
  // Per table: id → org of each acknowledged write. Per slot (org + start): bookings answered 200, and whether one was refused as full.
  const acknowledged: Record<keyof StoredRows, Map<string, string>> = {
    leads: new Map(),
    contacts: new Map(),
    incidents: new Map(),
  };
  const booked = new Map<string, number>();
  const refusedFull = new Map<string, number>();

  for (const o of requests) {
    byKind[o.kind]++;
    byStatus[o.status] = (byStatus[o.status] ?? 0) + 1;
    v.negativeRemaining += remainings(o.body).filter((r) => r < 0).length;
    const what = `${o.kind} ${JSON.stringify(o.sentBody ?? null)} → ${o.status} ${JSON.stringify(o.body).slice(0, 300)}`;
    if (o.status === 0) v.networkErrors++;
    else if (o.status >= 500) v.serverErrors++;
    else if (o.status === 429) v.tooManyRequests++;
    else if (
      o.kind === "create-incident" &&
      o.status === 409 &&
      o.body?.code === "slot_unavailable" &&
      o.body?.reason === "fully_booked"
    ) {
      const key = `${o.org.orgId} ${(o.sentBody as { dateTime: string }).dateTime}`;
      refusedFull.set(key, (refusedFull.get(key) ?? 0) + 1);
    } else if (o.status !== 200) v.unexpected.push(what);
    if (o.status !== 200) continue;
    const table = TABLE[o.kind];
    if (table) {
      if (typeof o.body?.id !== "string") v.unexpected.push(what);
      else acknowledged[table].set(o.body.id, o.org.orgId);
    }
    if (o.kind === "create-incident") {
      const start = (o.sentBody as { dateTime: string }).dateTime;
      if (o.body?.appointment?.start !== start) v.unexpected.push(what);
      const key = `${o.org.orgId} ${start}`;
      booked.set(key, (booked.get(key) ?? 0) + 1);
    }
  }

  // Lost writes: acknowledged but not in D1, or (contacts) not in the paged list; unacknowledged: in D1 with no 200.
  for (const table of ["leads", "contacts", "incidents"] as const) {
    const inD1 = new Map(stored[table].map((row) => [row.id, row.org_id]));
    for (const [id, orgId] of acknowledged[table])
      if (inD1.get(id) !== orgId) v.lostWrites.push(`${table} ${id} (org ${orgId}) is not in D1`);
    for (const [id, orgId] of inD1)
      if (!acknowledged[table].has(id)) v.unacknowledged.push(`${table} ${id} (org ${orgId})`);
  }
  for (const org of orgs) {
    const listed = await listedContacts(org, send);
    if (new Set(listed).size !== listed.length)
      v.lostWrites.push(`org ${org.orgId}: the contact list shows a contact twice`);
    const seen = new Set(listed);
    for (const [id, orgId] of acknowledged.contacts)
      if (orgId === org.orgId && !seen.has(id))
        v.lostWrites.push(`contacts ${id} is not listed by GET /api/v1/contacts`);
  }

  // Slots: never more bookings than places (D1 and 200s); exactly min(attempts, capacity); remaining read back right.
  let places = 0;
  let bookedTotal = 0;
  let contested = 0;
  for (const org of orgs) {
    for (const slot of slotsOf.get(org.orgId) ?? []) {
      const key = `${org.orgId} ${slot.start}`;
      const inD1 = stored.incidents.filter(
        (row) => row.org_id === org.orgId && row.starts_at === Date.parse(slot.start),
      ).length;
      const answered = booked.get(key) ?? 0;
      places += org.capacity;
      bookedTotal += inD1;
      if (inD1 > org.capacity || answered > org.capacity)
        v.overbooked.push(`${key}: ${inD1} in D1, ${answered} answered 200, capacity ${org.capacity}`);
      const refused = refusedFull.get(key) ?? 0;
      if (refused > 0) contested++;
      if (inD1 !== Math.min(answered + refused, org.capacity)) {
        v.underbooked.push(
          `${key}: ${inD1} in D1 after ${answered + refused} attempts (${refused} refused as full), capacity ${org.capacity}`,
        );
      }
      const check = await send(org, "POST", "/api/v1/ai-agent/is-booking-available", { dateTime: slot.start });
      const remaining = (check.body.slot as { remaining?: number } | null)?.remaining;
      if (check.status !== 200 || remaining !== Math.max(0, org.capacity - inD1)) {
        v.remainingWrong.push(
          `${key}: remaining ${remaining} (status ${check.status}), capacity ${org.capacity}, ${inD1} in D1`,
        );
      }
    }
  }

  const latencies = requests.map((o) => o.ms).sort((a, b) => a - b);
  return {
    ...v,
    requests: requests.length,
    byKind,
    byStatus,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    slots: [...slotsOf.values()].reduce((sum, slots) => sum + slots.length, 0),
    places,
    booked: bookedTotal,
    /** Slots at least one booking was refused from as full: the races really happened. */
    contested,
  };
}
