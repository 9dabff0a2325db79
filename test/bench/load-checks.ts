// The checks of a load run (test/bench/load-run.ts): what the clients were answered,
// set against what D1 holds afterwards and what the API reads back.
//
// Incidents are booked, moved and cancelled while the run lasts, so a slot's
// bookings are no longer min(attempts, capacity): places are freed and taken
// again. What stays exact:
// - Final state. The server serialises the changes of one incident (compare
//   and set on its status, times and updatedAt), and each change's `now` is
//   read after the change before it was written, so its answers ordered by
//   `updatedAt` are its history: D1 must hold the state of the answer with
//   the latest updatedAt, with that updatedAt (an older one: a change lost;
//   a newer one: a change nobody was answered 200 for). Only when two
//   different slots come back with the same millisecond is the order of the
//   last two unknown; D1 must then hold one of them (counted as `ties`).
//   A cancel is final, so it is always last.
// - Per slot: scheduled incidents in D1 ≤ capacity, equal to the number the
//   last answers leave there, and equal to capacity − the remaining read back.
// - In real time, from the answers alone: an incident certainly holds a slot
//   from the first answer showing it there until the first request answered
//   with its next state was sent; never more of them at once than places.
// - Every refusal is explained: a 409 fully_booked (booking or reschedule)
//   needs, at some moment while it was in flight, as many other incidents
//   that may have held the slot as it has places (an incident may hold a
//   slot from the moment the request putting it there was sent until an
//   answer showing it elsewhere came back); a reschedule's 409
//   incident_not_changeable (cancelled) needs a cancel of that incident sent
//   before its answer came. Which refusal met which booking is not knowable
//   from outside, so this is the exact form of "refused only when full".
// These read every change off its 200; a request with no answer or a 5xx
// (itself a violation) may have changed what the others are checked against.
import type { Kind, Slot } from "./load-run";
import type { LoadOrg, StoredRows } from "./load-state";

export interface Outcome {
  kind: Kind | "health";
  org?: LoadOrg;
  /** 0 when no HTTP answer came (connection error, time-out). */
  status: number;
  ms: number;
  /** performance.now() before the request was sent and after its answer was read. */
  sentAt: number;
  receivedAt: number;
  // biome-ignore lint/suspicious/noExplicitAny: bodies of every operation are read
  body: any;
  sentBody?: unknown;
  /** The incident a reschedule, cancel or get acted on. */
  incident?: string;
}

export interface Violations {
  serverErrors: number;
  networkErrors: number;
  tooManyRequests: number;
  /**
   * Answers no request of the run should get: any 4xx but a booking's or
   * reschedule's 409 slot_unavailable fully_booked and a reschedule's 409
   * incident_not_changeable (cancelled); a 200 that does not say what was asked.
   */
  unexpected: string[];
  /** Writes answered 200 that D1 (or, for contacts, the paged list) does not hold. */
  lostWrites: string[];
  /** Rows of the run's orgs that no 200 acknowledged. */
  unacknowledged: string[];
  /** Incidents D1 does not hold as their last 200 answer (by updatedAt) left them, or that changed after a cancel. */
  wrongState: string[];
  /** Slots with more scheduled incidents than places: in D1, by the last answers, or at one moment by the answers. */
  overbooked: string[];
  /** 409s no full slot (fully_booked) or earlier cancel (incident_not_changeable) explains. */
  wrongRefusals: string[];
  /** Slot objects answered with remaining < 0. */
  negativeRemaining: number;
  /** Slots whose remaining, read after the run, is not capacity minus D1's scheduled incidents. */
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

/** The kinds whose 200 is the incident (docs/api.md, "Incidents"). */
const INCIDENT_ANSWERS = new Set<Kind>(["create-incident", "reschedule-incident", "cancel-incident", "get-incident"]);

/** Where an incident is: its status and its slot's start (ms); only `scheduled` holds the slot. */
interface State {
  status: string;
  start: number;
}
const stateKey = (s: State) => `${s.status} ${new Date(s.start).toISOString()}`;

/** One version of an incident: the states its answers carrying one `updatedAt` show (more than one only on a tie) and when they were sent and read. */
interface Version {
  updatedAt: number;
  states: Map<string, State>;
  firstSent: number;
  firstReceived: number;
}

/** A stretch of time an incident holds (or may hold) a slot, in performance.now() ms; `to` is Infinity when it still does. */
interface Stretch {
  id: string;
  from: number;
  to: number;
}

/** The most stretches that hold at one moment, each held open (from, to): at the instant after some stretch starts. */
function mostAtOnce(stretches: Stretch[]): number {
  let most = 0;
  for (const s of stretches) {
    if (s.from >= s.to) continue;
    const n = stretches.filter((o) => o.from < o.to && o.from <= s.from && o.to > s.from).length;
    most = Math.max(most, n);
  }
  return most;
}

/** The most stretches (but `except`'s) that may hold, closed [from, to], at one moment of [a, b]. */
function mostWithin(stretches: Stretch[], a: number, b: number, except?: string): number {
  const others = stretches.filter((s) => s.id !== except);
  const moments = [a, ...others.map((s) => s.from).filter((t) => t >= a && t <= b)];
  return Math.max(0, ...moments.map((t) => others.filter((s) => s.from <= t && t <= s.to).length));
}

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
    wrongState: [],
    overbooked: [],
    wrongRefusals: [],
    negativeRemaining: 0,
    remainingWrong: [],
  };
  const kinds: Kind[] = [
    "list-contacts",
    "get-account",
    "available-appointments",
    "is-booking-available",
    "create-lead",
    "create-contact",
    "create-incident",
    "reschedule-incident",
    "cancel-incident",
    "get-incident",
  ];
  const byKind = Object.fromEntries(kinds.map((k) => [k, 0])) as Record<Kind, number>;
  const byKindStatus = Object.fromEntries(kinds.map((k) => [k, {}])) as Record<Kind, Record<string, number>>;
  const byStatus: Record<string, number> = {};
  // The 409s by kind and reason, e.g. "reschedule-incident fully_booked".
  const refusals: Record<string, number> = {};
  // Per table: id → org of each acknowledged write.
  const acknowledged: Record<keyof StoredRows, Map<string, string>> = {
    leads: new Map(),
    contacts: new Map(),
    incidents: new Map(),
  };
  // Per incident, every 200 that showed it: its state, updatedAt and when it was sent and read.
  const shown = new Map<string, { state: State; updatedAt: number; sentAt: number; receivedAt: number }[]>();
  // The 409s to explain: fully_booked per slot (org + start), not_changeable per incident.
  const refusedFull: { key: string; incident?: string; o: Outcome }[] = [];
  const refusedCancelled: { incident: string; o: Outcome }[] = [];

  for (const o of requests) {
    byKind[o.kind]++;
    byStatus[o.status] = (byStatus[o.status] ?? 0) + 1;
    byKindStatus[o.kind][o.status] = (byKindStatus[o.kind][o.status] ?? 0) + 1;
    v.negativeRemaining += remainings(o.body).filter((r) => r < 0).length;
    const what = `${o.kind} ${o.incident ?? ""} ${JSON.stringify(o.sentBody ?? null)} → ${o.status} ${JSON.stringify(o.body).slice(0, 300)}`;
    const asked = (o.sentBody as { dateTime?: string } | undefined)?.dateTime;
    if (o.status === 409) {
      const reason = `${o.kind} ${o.body?.reason ?? o.body?.code}`;
      refusals[reason] = (refusals[reason] ?? 0) + 1;
    }
    if (o.status === 0) v.networkErrors++;
    else if (o.status >= 500) v.serverErrors++;
    else if (o.status === 429) v.tooManyRequests++;
    else if (
      (o.kind === "create-incident" || o.kind === "reschedule-incident") &&
      o.status === 409 &&
      o.body?.code === "slot_unavailable" &&
      o.body?.reason === "fully_booked"
    )
      refusedFull.push({ key: `${o.org.orgId} ${asked}`, incident: o.incident, o });
    else if (
      o.kind === "reschedule-incident" &&
      o.status === 409 &&
      o.body?.code === "incident_not_changeable" &&
      o.body?.reason === "cancelled" &&
      o.incident
    )
      refusedCancelled.push({ incident: o.incident, o });
    else if (o.status !== 200) v.unexpected.push(what);
    if (o.status !== 200) continue;
    const table = TABLE[o.kind];
    if (table) {
      if (typeof o.body?.id !== "string") v.unexpected.push(what);
      else acknowledged[table].set(o.body.id, o.org.orgId);
    }
    if (!INCIDENT_ANSWERS.has(o.kind)) continue;
    const b = o.body ?? {};
    const state = { status: b.status, start: Date.parse(b.dateTime) };
    const updatedAt = Date.parse(b.updatedAt);
    const wellFormed =
      typeof b.id === "string" &&
      (o.kind === "create-incident" || b.id === o.incident) &&
      (state.status === "scheduled" || state.status === "cancelled") &&
      Number.isFinite(state.start) &&
      Number.isFinite(updatedAt) &&
      b.appointment?.start === b.dateTime;
    // What each 200 must say: a booking and a reschedule, scheduled in the slot asked for; a cancel, cancelled.
    const saysWhatWasAsked =
      o.kind === "create-incident" || o.kind === "reschedule-incident"
        ? state.status === "scheduled" && state.start === Date.parse(asked ?? "")
        : o.kind === "cancel-incident"
          ? state.status === "cancelled"
          : true;
    if (!wellFormed || !saysWhatWasAsked) {
      v.unexpected.push(what);
      continue;
    }
    const list = shown.get(b.id) ?? [];
    list.push({ state, updatedAt, sentAt: o.sentAt, receivedAt: o.receivedAt });
    shown.set(b.id, list);
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

  // Each incident's history from its answers, its final state against D1, and the stretches it held (or may have held) each slot.
  const rowOf = new Map(stored.incidents.map((row) => [row.id, row]));
  const impliedIn = new Map<string, number>(); // slot key → incidents the last answers leave scheduled there
  const certain = new Map<string, Stretch[]>();
  const possible = new Map<string, Stretch[]>();
  const cancelSentAt = new Map<string, number>(); // incident → the earliest send of an answer showing it cancelled
  const add = (map: Map<string, Stretch[]>, key: string, stretch: Stretch) => {
    const list = map.get(key) ?? [];
    list.push(stretch);
    map.set(key, list);
  };
  let ties = 0;
  for (const [id, answers] of shown) {
    const orgId = acknowledged.incidents.get(id);
    if (orgId === undefined) continue; // not booked by this run: already unexpected
    const byTime = new Map<number, Version>();
    for (const a of answers) {
      const version = byTime.get(a.updatedAt) ?? {
        updatedAt: a.updatedAt,
        states: new Map<string, State>(),
        firstSent: a.sentAt,
        firstReceived: a.receivedAt,
      };
      version.states.set(stateKey(a.state), a.state);
      version.firstSent = Math.min(version.firstSent, a.sentAt);
      version.firstReceived = Math.min(version.firstReceived, a.receivedAt);
      byTime.set(a.updatedAt, version);
    }
    const versions = [...byTime.values()].sort((a, b) => a.updatedAt - b.updatedAt);

    // A cancel is final: every answer after the first that shows the incident cancelled shows it so, in one slot.
    const cancels = answers.filter((a) => a.state.status === "cancelled");
    if (cancels.length > 0) {
      const firstCancelled = versions.findIndex((ver) =>
        [...ver.states.values()].some((s) => s.status === "cancelled"),
      );
      if (
        new Set(cancels.map((a) => stateKey(a.state))).size !== 1 ||
        versions.slice(firstCancelled + 1).some((ver) => [...ver.states.values()].some((s) => s.status !== "cancelled"))
      )
        v.wrongState.push(`incident ${id} was shown otherwise after it was cancelled: ${JSON.stringify(answers)}`);
      cancelSentAt.set(id, Math.min(...cancels.map((a) => a.sentAt)));
    }

    // The final state: the last version's; on a tie, a cancelled state is the last, else D1 may hold any of them.
    const last = versions.at(-1)!;
    let candidates = [...last.states.values()];
    if (candidates.some((s) => s.status === "cancelled"))
      candidates = candidates.filter((s) => s.status === "cancelled");
    if (candidates.length > 1) ties++;
    const row = rowOf.get(id);
    let final = candidates[0]!;
    if (row) {
      const inD1 = { status: row.status, start: row.starts_at };
      const match = candidates.find((s) => stateKey(s) === stateKey(inD1));
      if (match) final = match;
      if (!match || row.updated_at !== last.updatedAt) {
        const drift =
          row.updated_at < last.updatedAt
            ? "a change answered 200 is lost"
            : row.updated_at > last.updatedAt
              ? "D1 holds a change no 200 answered"
              : "another state";
        v.wrongState.push(
          `incident ${id}: D1 holds ${stateKey(inD1)} updated ${new Date(row.updated_at).toISOString()}, its last 200 ${candidates.map(stateKey).join(" or ")} updated ${new Date(last.updatedAt).toISOString()} (${drift})`,
        );
      }
    }
    if (final.status === "scheduled") {
      const key = `${orgId} ${new Date(final.start).toISOString()}`;
      impliedIn.set(key, (impliedIn.get(key) ?? 0) + 1);
    }

    versions.forEach((ver, i) => {
      const next = versions[i + 1];
      for (const s of ver.states.values()) {
        if (s.status !== "scheduled") continue;
        const key = `${orgId} ${new Date(s.start).toISOString()}`;
        // May hold it from when the request that put it there was sent until an answer shows the next version.
        add(possible, key, { id, from: ver.firstSent, to: next ? next.firstReceived : Number.POSITIVE_INFINITY });
        // Certainly holds it from the first answer showing it there until the first request of the next version was sent.
        if (ver.states.size === 1)
          add(certain, key, { id, from: ver.firstReceived, to: next ? next.firstSent : Number.POSITIVE_INFINITY });
      }
    });
  }

  // Refusals: a full slot or an earlier cancel explains each.
  const capacityOf = new Map(orgs.map((org) => [org.orgId, org.capacity]));
  const contestedSlots = new Set<string>();
  for (const { key, incident, o } of refusedFull) {
    contestedSlots.add(key);
    const capacity = capacityOf.get(o.org!.orgId)!;
    const most = mostWithin(possible.get(key) ?? [], o.sentAt, o.receivedAt, incident);
    if (most < capacity)
      v.wrongRefusals.push(
        `${o.kind} ${incident ?? ""} refused ${key} as fully booked while at most ${most} other incidents could hold it (capacity ${capacity})`,
      );
  }
  for (const { incident, o } of refusedCancelled) {
    const cancelled = cancelSentAt.get(incident);
    if (cancelled === undefined || cancelled > o.receivedAt)
      v.wrongRefusals.push(`reschedule of ${incident} refused as cancelled before any cancel of it was sent`);
  }

  // Slots: never more scheduled incidents than places (in D1, by the last answers, at any moment by the answers);
  // D1 as the answers leave it; remaining read back right.
  let places = 0;
  let bookedTotal = 0;
  for (const org of orgs) {
    for (const slot of slotsOf.get(org.orgId) ?? []) {
      const key = `${org.orgId} ${slot.start}`;
      const inD1 = stored.incidents.filter(
        (row) => row.org_id === org.orgId && row.status === "scheduled" && row.starts_at === Date.parse(slot.start),
      ).length;
      const implied = impliedIn.get(key) ?? 0;
      const atOnce = mostAtOnce(certain.get(key) ?? []);
      places += org.capacity;
      bookedTotal += inD1;
      if (inD1 > org.capacity || implied > org.capacity || atOnce > org.capacity)
        v.overbooked.push(
          `${key}: ${inD1} scheduled in D1, ${implied} by the last answers, ${atOnce} at one moment by the answers, capacity ${org.capacity}`,
        );
      if (inD1 !== implied)
        v.wrongState.push(`${key}: ${inD1} scheduled in D1, but the last answers leave ${implied} there`);
      const check = await send(org, "POST", "/api/v1/ai-agent/is-booking-available", { dateTime: slot.start });
      const remaining = (check.body.slot as { remaining?: number } | null)?.remaining;
      if (check.status !== 200 || remaining !== Math.max(0, org.capacity - inD1)) {
        v.remainingWrong.push(
          `${key}: remaining ${remaining} (status ${check.status}), capacity ${org.capacity}, ${inD1} scheduled in D1`,
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
    byKindStatus,
    refusals,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    slots: [...slotsOf.values()].reduce((sum, slots) => sum + slots.length, 0),
    places,
    booked: bookedTotal,
    /** Slots a booking or a reschedule was refused from as full: the races really happened. */
    contested: contestedSlots.size,
    scheduled: stored.incidents.filter((row) => row.status === "scheduled").length,
    cancelled: stored.incidents.filter((row) => row.status === "cancelled").length,
    ties,
  };
}
