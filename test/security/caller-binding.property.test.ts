// The caller of a call (docs/api.md, "The caller of a call") as
// a property: random orgs with several callers, accounts, contacts and visits;
// random agent calls with random callers — valid numbers in many spellings,
// no number at all, withheld, "anonymous", malformed, another country's —
// reported over HTTP and MCP (X-Caller-Phone), Vapi's envelope
// (message.call.customer.number, else message.customer.number) and Retell's
// (from_number, or to_number of an outbound call), each with or without a
// header beside it. An agent call never reads, lists or changes a visit that
// is not its caller's, and always reaches the caller's own; with no caller the
// bound operations are 403 caller_unknown; office and read keys see everything.
//
// The oracle is plain JS over the generated model: an incident is a caller's
// when its phone is the caller's number, or its account has that number as its
// own mobile or business phone, or has a contact with that number. Each run
// makes one org (UTC, open around the clock, every visit a distinct hour two
// or more days ahead), inserts its rows directly as the API stores them
// (E.164 beside each free-text phone), then sweeps every number of the org
// (list all pages, get every id) and the no-caller case, and runs random
// calls: filtered lists, get, cancel, reschedule to a free hour, find-caller,
// unbound keys. A change the model does not expect is caught in D1 (status,
// starts_at, updated_at of the row after every change attempted) and in the
// org's events (exactly the changes the model made, with their actor).
// Another org holds visits with every number the runs use: none may show.
import { asc, eq } from "drizzle-orm";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { accounts, contacts, events, incidents } from "../../drizzle/schema";
import { newId } from "../../src/lib/ids";
import { normalizePhone } from "../../src/lib/phones";
import { type Answer, type CallerTool, callAs, type Report } from "../support/callers";
import { db, openTenant, type Tenant, withRole } from "../support/tenants";
import { HOUR, hoursAhead, iso } from "../support/time";

const SEED = 20261127;
const RUNS = 30;

// ---------------------------------------------------------------------------
// Numbers and what callers report

/** A valid number and ways people and platforms write it. */
interface Num {
  e164: string;
  spellings: string[];
}

const nanp = (area: string, exchange: string, line: string): Num => ({
  e164: `+1${area}${exchange}${line}`,
  spellings: [
    `(${area}) ${exchange}-${line}`,
    `${area}.${exchange}.${line}`,
    `+1${area}${exchange}${line}`,
    `${area}-${exchange}-${line}`,
    `1 ${area} ${exchange} ${line}`,
    `+1 (${area}) ${exchange}-${line}`,
    `${area}${exchange}${line}`,
    `1-${area}-${exchange}-${line}`,
    `${area} ${exchange} ${line} x12`,
    `tel:+1-${area}-${exchange}-${line}`,
  ],
});

const pad2 = (n: number) => String(n).padStart(2, "0");
/** The org's callers: +1 212 555 01xx. */
const callerNumber = (xx: number) => nanp("212", "555", `01${pad2(xx)}`);
/** A US number no org's caller has: +1 212 555 02xx. */
const outsiderNumber = (xx: number) => nanp("212", "555", `02${pad2(xx)}`);
/** Another country's number, written with "+": a valid caller too. */
const FOREIGN: Num = { e164: "+447911123456", spellings: ["+44 7911 123456", "+447911123456", "+44 7911-123-456"] };

/** What a platform may report that is no number: no caller. */
const NOT_A_NUMBER = [
  "anonymous",
  "withheld",
  "Restricted",
  "unknown",
  "",
  "12",
  "+1 212 555 01",
  "555-0123",
  "0000000000",
  "07911 123456",
  "212555012345",
  "call the office",
];

/** A number (by index into the org's numbers, and a spelling of it), something that is none, or nothing. */
type Reporter = { kind: "num"; n: number; s: number } | { kind: "bad"; b: number } | { kind: "none" };

const aNumber = fc.record({ kind: fc.constant("num" as const), n: fc.nat(), s: fc.nat() });
const notANumber = fc.record({ kind: fc.constant("bad" as const), b: fc.nat() });
const nothing = fc.constant({ kind: "none" as const });
const reporter: fc.Arbitrary<Reporter> = fc.oneof(
  { weight: 6, arbitrary: aNumber },
  { weight: 2, arbitrary: notANumber },
  { weight: 1, arbitrary: nothing },
);
/** A second number beside the platform's own: mostly absent. */
const decoy: fc.Arbitrary<Reporter> = fc.oneof({ weight: 3, arbitrary: nothing }, { weight: 1, arbitrary: reporter });
const silent: fc.Arbitrary<Reporter> = fc.oneof(notANumber, nothing);

/** Who reports what, by transport (Report, with reporters instead of text). */
type ReportSpec =
  | { channel: "http" | "mcp"; header: Reporter }
  | { channel: "vapi"; callCustomer: Reporter; messageCustomer: Reporter; header: Reporter }
  | { channel: "retell"; outbound: boolean; caller: Reporter; other: Reporter; header: Reporter };

const reportSpec = (main: fc.Arbitrary<Reporter>, extra: fc.Arbitrary<Reporter>): fc.Arbitrary<ReportSpec> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.record({ channel: fc.constant("http" as const), header: main }) },
    { weight: 1, arbitrary: fc.record({ channel: fc.constant("mcp" as const), header: main }) },
    {
      weight: 2,
      arbitrary: fc.record({
        channel: fc.constant("vapi" as const),
        callCustomer: main,
        messageCustomer: extra,
        header: extra,
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        channel: fc.constant("retell" as const),
        outbound: fc.boolean(),
        caller: main,
        other: main,
        header: extra,
      }),
    },
  );

const anyReport = reportSpec(reporter, decoy);
const noCallerReport = reportSpec(silent, silent);

// ---------------------------------------------------------------------------
// The generated org and calls

/** An incident target: any of the org's, one of the caller's own, an unknown id, another org's. */
type Target = { kind: "any" | "mine"; i: number } | { kind: "unknown" } | { kind: "neighbour" };
const target: fc.Arbitrary<Target> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("any" as const), i: fc.nat() }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("mine" as const), i: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ kind: "unknown" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "neighbour" as const }) },
);

type AccountFilter = { kind: "acct"; i: number } | { kind: "unknown" } | { kind: "neighbour" };
/** A phone argument: the caller's own number in a spelling, a number, or no number. */
type PhoneArg = { kind: "own"; s: number } | { kind: "num"; n: number; s: number } | { kind: "invalid"; b: number };
const phoneArg: fc.Arbitrary<PhoneArg> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("own" as const), s: fc.nat() }) },
  { weight: 2, arbitrary: aNumber },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("invalid" as const), b: fc.nat() }) },
);

type Op =
  | {
      op: "list";
      who: ReportSpec;
      limit: number;
      status: "scheduled" | "cancelled" | null;
      account: AccountFilter | null;
      phone: PhoneArg | null;
    }
  | { op: "get" | "cancel" | "reschedule"; who: ReportSpec; target: Target }
  | { op: "find"; who: ReportSpec; phone: PhoneArg | null }
  | { op: "unbound"; who: ReportSpec; role: "office" | "read"; limit: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("list" as const),
      who: anyReport,
      limit: fc.integer({ min: 1, max: 4 }),
      status: fc.option(fc.constantFrom("scheduled" as const, "cancelled" as const), { nil: null, freq: 2 }),
      account: fc.option(
        fc.oneof(
          { weight: 4, arbitrary: fc.record({ kind: fc.constant("acct" as const), i: fc.nat() }) },
          { weight: 1, arbitrary: fc.constant({ kind: "unknown" as const }) },
          { weight: 1, arbitrary: fc.constant({ kind: "neighbour" as const }) },
        ),
        { nil: null, freq: 2 },
      ),
      phone: fc.option(phoneArg, { nil: null, freq: 2 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("get" as const), who: anyReport, target }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("cancel" as const), who: anyReport, target }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("reschedule" as const), who: anyReport, target }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant("find" as const),
      who: anyReport,
      phone: fc.option(phoneArg, { nil: null, freq: 2 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("unbound" as const),
      who: anyReport,
      role: fc.constantFrom("office" as const, "read" as const),
      limit: fc.integer({ min: 1, max: 5 }),
    }),
  },
);

/** A free-text phone field: absent (most often none), a number in a spelling, or text that is no number. */
const phoneField: fc.Arbitrary<Reporter> = fc.oneof(
  { weight: 3, arbitrary: nothing },
  { weight: 4, arbitrary: aNumber },
  { weight: 1, arbitrary: notANumber },
);

const orgSpec = fc.record({
  /** The org's callers: 3–5 distinct +1 212 555 01xx. */
  lines: fc.uniqueArray(fc.integer({ min: 0, max: 99 }), { minLength: 3, maxLength: 5 }),
  /** A US number none of the org's people has (but a visit or a record may). */
  outsider: fc.integer({ min: 0, max: 99 }),
  accounts: fc.array(fc.record({ mobile: phoneField, business: phoneField }), { minLength: 2, maxLength: 6 }),
  contacts: fc.array(
    fc.record({ mobile: phoneField, business: phoneField, account: fc.option(fc.nat(), { nil: null, freq: 4 }) }),
    { minLength: 1, maxLength: 8 },
  ),
  incidents: fc.array(
    fc.record({
      phone: fc.option(fc.nat(), { nil: null, freq: 3 }),
      account: fc.option(fc.nat(), { nil: null, freq: 3 }),
      cancelled: fc.integer({ min: 0, max: 3 }).map((x) => x === 0),
    }),
    { minLength: 3, maxLength: 10 },
  ),
  /** Distinct hours (after the base) of the incidents: list order is not insertion order. */
  slots: fc.uniqueArray(fc.integer({ min: 0, max: 47 }), { minLength: 10, maxLength: 10 }),
  /**
   * Sometimes more than find-caller's 10 accounts for one caller (by their own
   * phone or by a contact), each with a visit: every one is the caller's.
   */
  crowd: fc.oneof(
    { weight: 4, arbitrary: fc.constant(null) },
    {
      weight: 1,
      arbitrary: fc.record({ caller: fc.nat(), size: fc.integer({ min: 11, max: 13 }), viaContact: fc.boolean() }),
    },
  ),
  /** How each of the org's numbers (callers, outsider, foreign) is swept: transport, spelling, page size. */
  sweep: fc.array(
    fc.record({
      channel: fc.constantFrom("http" as const, "mcp" as const, "vapi" as const, "retell" as const),
      s: fc.nat(),
      outbound: fc.boolean(),
      limit: fc.integer({ min: 1, max: 4 }),
    }),
    { minLength: 7, maxLength: 7 },
  ),
  noCaller: noCallerReport,
  ops: fc.array(op, { minLength: 10, maxLength: 22 }),
});

type OrgSpec = typeof orgSpec extends fc.Arbitrary<infer T> ? T : never;

// ---------------------------------------------------------------------------
// The model

interface ModelIncident {
  id: string;
  phone: string | null;
  accountId: string | null;
  status: "scheduled" | "cancelled";
  startsAt: number;
  updatedAt: number;
}

interface Party {
  id: string;
  /** The E.164 forms of its mobile and business phones (those that are numbers). */
  phones: string[];
}

interface ExpectedEvent {
  type: "incident.cancelled" | "incident.rescheduled";
  id: string;
  channel: string;
  callerPhone: string;
}

interface World {
  tenant: Tenant;
  agent: Tenant;
  reader: Tenant;
  /** The org's callers, then the outsider, then the foreign number. */
  nums: Num[];
  accounts: Party[];
  contacts: (Party & { accountId: string | null })[];
  incidents: ModelIncident[];
  /** The first hour of the universe; visits at base + slot hours, reschedules after base + 48 h. */
  base: number;
  nextHour: number;
  events: ExpectedEvent[];
  /** 404 bodies (minus requestId) of an unknown id, by transport and tool. */
  notFound: Map<string, unknown>;
}

/** The oracle: accounts whose own phone is `phone`, and accounts of a contact with that phone. */
function accountsOf(w: World, phone: string): Set<string> {
  const own = w.accounts.filter((a) => a.phones.includes(phone)).map((a) => a.id);
  const linked = w.contacts.filter((c) => c.accountId !== null && c.phones.includes(phone)).map((c) => c.accountId!);
  return new Set([...own, ...linked]);
}

/** The oracle: whether `inc` is the caller's. */
const isCallers = (w: World, inc: ModelIncident, phone: string) =>
  inc.phone === phone || (inc.accountId !== null && accountsOf(w, phone).has(inc.accountId));

const listOrder = (rows: ModelIncident[]) =>
  [...rows].sort((a, b) => a.startsAt - b.startsAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map((r) => r.id);

/** What a reporter says: the text sent (undefined: left out) and the number it is (null: none). */
function said(w: World, r: Reporter): { text?: string; e164: string | null } {
  switch (r.kind) {
    case "none":
      return { e164: null };
    case "bad":
      return { text: NOT_A_NUMBER[r.b % NOT_A_NUMBER.length]!, e164: null };
    case "num": {
      const num = w.nums[r.n % w.nums.length]!;
      return { text: num.spellings[r.s % num.spellings.length]!, e164: num.e164 };
    }
  }
}

/** The report as sent, and the caller the API must find in it: the first valid number, envelope before header. */
interface Resolved {
  report: Report;
  caller: string | null;
}

function resolve(w: World, spec: ReportSpec): Resolved {
  switch (spec.channel) {
    case "http":
    case "mcp": {
      const header = said(w, spec.header);
      return { report: { channel: spec.channel, header: header.text }, caller: header.e164 };
    }
    case "vapi": {
      const [call, message, header] = [spec.callCustomer, spec.messageCustomer, spec.header].map((r) => said(w, r));
      return {
        report: { channel: "vapi", callCustomer: call!.text, messageCustomer: message!.text, header: header!.text },
        caller: call!.e164 ?? message!.e164 ?? header!.e164,
      };
    }
    case "retell": {
      const [caller, other, header] = [spec.caller, spec.other, spec.header].map((r) => said(w, r));
      const { outbound } = spec;
      return {
        report: {
          channel: "retell",
          outbound,
          from: outbound ? other!.text : caller!.text,
          to: outbound ? caller!.text : other!.text,
          header: header!.text,
        },
        caller: caller!.e164 ?? header!.e164,
      };
    }
  }
}

/** A spelling of the caller's own number (another spelling than reported, maybe). */
function ownSpelling(w: World, caller: string | null, s: number) {
  const num = w.nums.find((n) => n.e164 === caller) ?? w.nums[0]!;
  return { text: num.spellings[s % num.spellings.length]!, e164: num.e164 };
}

function phoneArgument(w: World, caller: string | null, arg: PhoneArg): { text: string; e164: string | null } {
  switch (arg.kind) {
    case "own":
      return ownSpelling(w, caller, arg.s);
    case "num":
      return said(w, arg) as { text: string; e164: string };
    case "invalid": {
      const bad = NOT_A_NUMBER.filter((t) => t !== "");
      return { text: bad[arg.b % bad.length]!, e164: null };
    }
  }
}

// ---------------------------------------------------------------------------
// Another org: a visit for every number a run may use, by phone and by account

interface Neighbour {
  tenant: Tenant;
  accountId: string;
  /** Its incident by the phone it carries. */
  byPhone: Map<string, { id: string; startsAt: number; updatedAt: number }>;
}

let neighbour: Neighbour;

async function makeNeighbour(): Promise<Neighbour> {
  const tenant = await openTenant("Neighbour Org");
  const now = Date.now();
  const startsAt = hoursAhead(60);
  const updatedAt = now - HOUR;
  const d = db();
  const statements = [];
  const byPhone = new Map<string, { id: string; startsAt: number; updatedAt: number }>();
  let firstAccount = "";
  const numbers = [
    ...Array.from({ length: 100 }, (_, xx) => callerNumber(xx)),
    ...Array.from({ length: 100 }, (_, xx) => outsiderNumber(xx)),
    FOREIGN,
  ];
  for (const [i, num] of numbers.entries()) {
    const incident = {
      id: newId("inc", now),
      orgId: tenant.orgId,
      status: "scheduled" as const,
      clientName: "Neighbour",
      insectName: "ants",
      phone: num.e164,
      startsAt: startsAt + (i % 24) * HOUR,
      endsAt: startsAt + (i % 24) * HOUR + HOUR,
      occupiedUntil: startsAt + (i % 24) * HOUR + HOUR,
      createdAt: updatedAt,
      updatedAt,
    };
    byPhone.set(num.e164, { id: incident.id, startsAt: incident.startsAt, updatedAt });
    statements.push(d.insert(incidents).values(incident));
    if (i < 100) {
      // The same number as an account's own phone, and a visit of that account without a phone.
      const accountId = newId("acct", now);
      firstAccount ||= accountId;
      statements.push(
        d.insert(accounts).values({
          id: accountId,
          orgId: tenant.orgId,
          name: `Neighbour ${i}`,
          nameLower: `neighbour ${i}`,
          mobilePhone: num.spellings[0]!,
          mobileE164: num.e164,
          createdAt: now,
          updatedAt: now,
        }),
        d.insert(incidents).values({ ...incident, id: newId("inc", now), phone: null, accountId }),
      );
    }
  }
  const [first, ...rest] = statements;
  await d.batch([first!, ...rest]);
  return { tenant, accountId: firstAccount, byPhone };
}

// ---------------------------------------------------------------------------
// Building an org from its spec

/** The stored form of a free-text phone field: as given, and its E.164 form when it is a number. */
function storedPhone(w: World, r: Reporter): { text: string | null; e164: string | null } {
  const { text, e164 } = said(w, r);
  return { text: text === undefined || text === "" ? null : text, e164 };
}

async function buildWorld(spec: OrgSpec): Promise<World> {
  const tenant = await openTenant("Caller Binding Org");
  const agent = await withRole(tenant, "agent");
  const reader = await withRole(tenant, "read");
  const now = Date.now();
  const w: World = {
    tenant,
    agent,
    reader,
    nums: [...spec.lines.map(callerNumber), outsiderNumber(spec.outsider), FOREIGN],
    accounts: [],
    contacts: [],
    incidents: [],
    base: hoursAhead(48),
    nextHour: 48,
    events: [],
    notFound: new Map(),
  };
  const d = db();
  const statements = [];
  for (const [i, a] of spec.accounts.entries()) {
    const mobile = storedPhone(w, a.mobile);
    const business = storedPhone(w, a.business);
    const id = newId("acct", now);
    w.accounts.push({ id, phones: [mobile.e164, business.e164].filter((p) => p !== null) });
    statements.push(
      d.insert(accounts).values({
        id,
        orgId: tenant.orgId,
        name: `Account ${i}`,
        nameLower: `account ${i}`,
        mobilePhone: mobile.text,
        businessPhone: business.text,
        mobileE164: mobile.e164,
        businessE164: business.e164,
        createdAt: now + i,
        updatedAt: now + i,
      }),
    );
  }
  for (const [i, c] of spec.contacts.entries()) {
    const mobile = storedPhone(w, c.mobile);
    const business = storedPhone(w, c.business);
    const id = newId("ct", now);
    const accountId = c.account === null ? null : w.accounts[c.account % w.accounts.length]!.id;
    w.contacts.push({ id, accountId, phones: [mobile.e164, business.e164].filter((p) => p !== null) });
    statements.push(
      d.insert(contacts).values({
        id,
        orgId: tenant.orgId,
        firstName: `Contact ${i}`,
        mobilePhone: mobile.text,
        businessPhone: business.text,
        mobileE164: mobile.e164,
        businessE164: business.e164,
        accountId,
        createdAt: now + i,
        updatedAt: now + i,
      }),
    );
  }
  for (const [i, inc] of spec.incidents.entries()) {
    const startsAt = w.base + spec.slots[i]! * HOUR;
    const updatedAt = now - HOUR;
    const row: ModelIncident = {
      id: newId("inc", now),
      phone: inc.phone === null ? null : w.nums[inc.phone % w.nums.length]!.e164,
      accountId: inc.account === null ? null : w.accounts[inc.account % w.accounts.length]!.id,
      status: inc.cancelled ? "cancelled" : "scheduled",
      startsAt,
      updatedAt,
    };
    w.incidents.push(row);
    statements.push(
      d.insert(incidents).values({
        ...row,
        orgId: tenant.orgId,
        clientName: `Client ${i}`,
        insectName: "termites",
        endsAt: startsAt + HOUR,
        occupiedUntil: startsAt + HOUR,
        createdAt: updatedAt,
        cancelledAt: inc.cancelled ? updatedAt : null,
      }),
    );
  }
  if (spec.crowd) {
    const num = w.nums[spec.crowd.caller % spec.lines.length]!;
    for (let j = 0; j < spec.crowd.size; j++) {
      const id = newId("acct", now);
      const spelling = num.spellings[j % num.spellings.length]!;
      const own = spec.crowd.viaContact ? {} : { businessPhone: spelling, businessE164: num.e164 };
      w.accounts.push({ id, phones: spec.crowd.viaContact ? [] : [num.e164] });
      const created = now - 1000 + j;
      statements.push(
        d.insert(accounts).values({
          id,
          orgId: tenant.orgId,
          name: `Crowd ${j}`,
          nameLower: `crowd ${j}`,
          ...own,
          createdAt: created,
          updatedAt: created,
        }),
      );
      if (spec.crowd.viaContact) {
        const contactId = newId("ct", now);
        w.contacts.push({ id: contactId, accountId: id, phones: [num.e164] });
        statements.push(
          d.insert(contacts).values({
            id: contactId,
            orgId: tenant.orgId,
            lastName: `Crowd ${j}`,
            mobilePhone: spelling,
            mobileE164: num.e164,
            accountId: id,
            createdAt: created,
            updatedAt: created,
          }),
        );
      }
      // Beyond the hours of the other visits and of the reschedules.
      const startsAt = w.base + (200 + j) * HOUR;
      const row: ModelIncident = {
        id: newId("inc", now),
        phone: null,
        accountId: id,
        status: "scheduled",
        startsAt,
        updatedAt: now - HOUR,
      };
      w.incidents.push(row);
      statements.push(
        d.insert(incidents).values({
          ...row,
          orgId: tenant.orgId,
          clientName: `Crowd ${j}`,
          insectName: "ants",
          endsAt: startsAt + HOUR,
          occupiedUntil: startsAt + HOUR,
          createdAt: row.updatedAt,
        }),
      );
    }
  }
  const [first, ...rest] = statements;
  await d.batch([first!, ...rest]);
  return w;
}

// ---------------------------------------------------------------------------
// Checks

/** Coverage across runs: the oracle must be able to fail (see the last test). */
const seen = {
  runs: 0,
  /** A caller reaching a visit only through a contact of its account. */
  contactOnly: 0,
  /** A caller reaching a visit only through its account's own phone. */
  accountOnly: 0,
  /** A caller of the org with no visit at all. */
  nobodysCaller: 0,
  /** A caller for whom some visits of the org are another's. */
  notAllMine: 0,
  /** Another's visit got, cancelled or rescheduled by a bound call (404). */
  refusedOthers: { get: 0, cancel: 0, reschedule: 0 },
  /** The caller's own visit cancelled or moved. */
  changedOwn: { cancel: 0, reschedule: 0 },
  /** Calls through each transport that found a caller. */
  transports: { http: 0, mcp: 0, vapi: 0, retell: 0 } as Record<string, number>,
  noCaller: 0,
  mismatch: 0,
  crossCursor: 0,
  /** A caller's list of more than 10 visits (more accounts than find-caller lists). */
  longLists: 0,
};

const withoutRequestId = (body: Record<string, unknown>) => {
  const { requestId: _, ...rest } = body;
  return rest;
};

function expectProblemAnswer(answer: Answer, status: number, code: string, context: string) {
  expect(answer.status, `${context}: ${JSON.stringify(answer.body)}`).toBe(status);
  expect(answer.body, context).toMatchObject({ status, code });
}

/** The id a target names, and the model incident (of this org) if it is one. */
function targetOf(w: World, t: Target, caller: string | null): { id: string; incident?: ModelIncident } {
  switch (t.kind) {
    case "unknown":
      return { id: UNKNOWN_ID };
    case "neighbour":
      return { id: neighbourIncident(w).id };
    case "mine": {
      const mine = caller === null ? [] : w.incidents.filter((inc) => isCallers(w, inc, caller));
      const pool = mine.length > 0 ? mine : w.incidents;
      const incident = pool[t.i % pool.length]!;
      return { id: incident.id, incident };
    }
    case "any": {
      const incident = w.incidents[t.i % w.incidents.length]!;
      return { id: incident.id, incident };
    }
  }
}

/** The other org's visit carrying the org's first caller's number. */
const neighbourIncident = (w: World) => neighbour.byPhone.get(w.nums[0]!.e164)!;

let UNKNOWN_ID = "";

const toolArgs = (tool: CallerTool, id: string, w: World): Record<string, unknown> =>
  tool === "get_incident"
    ? { id }
    : tool === "cancel_incident"
      ? { id, reason: "caller binding test" }
      : { id, dateTime: iso(w.base + w.nextHour++ * HOUR) };

/** A 404 that is exactly what an unknown id answers through the same transport. */
async function expectNotFound(w: World, report: Report, tool: CallerTool, answer: Answer, context: string) {
  expectProblemAnswer(answer, 404, "incident_not_found", context);
  const key = `${report.channel}:${tool}`;
  if (!w.notFound.has(key)) {
    const reference = await callAs(w.agent, report, tool, toolArgs(tool, UNKNOWN_ID, w));
    expectProblemAnswer(reference, 404, "incident_not_found", `${context} (unknown id)`);
    w.notFound.set(key, withoutRequestId(reference.body));
  }
  expect(withoutRequestId(answer.body), context).toEqual(w.notFound.get(key));
}

/** The incident as the API shows it agrees with the model. */
function expectShown(shown: Record<string, unknown>, inc: ModelIncident, context: string) {
  expect(
    {
      id: shown.id,
      status: shown.status,
      phone: shown.phone,
      accountId: shown.accountId,
      dateTime: shown.dateTime,
      updatedAt: shown.updatedAt,
    },
    context,
  ).toEqual({
    id: inc.id,
    status: inc.status,
    phone: inc.phone,
    accountId: inc.accountId,
    dateTime: iso(inc.startsAt),
    updatedAt: iso(inc.updatedAt),
  });
}

/** The row in D1 is as the model says: a refused change changed nothing. */
async function expectRow(
  id: string,
  expected: { status: string; startsAt: number; updatedAt: number },
  context: string,
) {
  const [row] = await db()
    .select({ status: incidents.status, startsAt: incidents.startsAt, updatedAt: incidents.updatedAt })
    .from(incidents)
    .where(eq(incidents.id, id));
  expect(row, `${context}: the row in D1`).toEqual({
    status: expected.status,
    startsAt: expected.startsAt,
    updatedAt: expected.updatedAt,
  });
}

async function expectTargetRow(w: World, id: string, incident: ModelIncident | undefined, context: string) {
  if (incident) await expectRow(id, incident, context);
  else if (id === neighbourIncident(w).id)
    await expectRow(id, { status: "scheduled", ...neighbourIncident(w) }, context);
}

/**
 * Every page of a list as `key` with `report`; returns the ids in the order
 * listed, or the problem answer of the first page that failed.
 */
async function listAll(
  w: World,
  key: Tenant,
  report: Report,
  args: Record<string, unknown>,
  limit: number,
  context: string,
  onPage?: (cursor: string) => void,
): Promise<{ ids: string[] } | { problem: Answer }> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page++) {
    const answer = await callAs(key, report, "list_incidents", { ...args, limit, cursor });
    if (answer.status !== 200) {
      expect(page, `${context}: a later page failed: ${JSON.stringify(answer.body)}`).toBe(0);
      return { problem: answer };
    }
    const { data, hasMore, nextCursor } = answer.body;
    expect(data.length, context).toBeLessThanOrEqual(limit);
    expect(hasMore, context).toBe(nextCursor !== null);
    for (const shown of data) {
      const inc = w.incidents.find((i) => i.id === shown.id);
      expect(inc, `${context}: listed ${shown.id}, not of this org`).toBeDefined();
      expectShown(shown, inc!, context);
      ids.push(shown.id);
    }
    if (nextCursor === null) return { ids };
    onPage?.(nextCursor);
    cursor = nextCursor;
  }
  throw new Error(`${context}: pagination did not end`);
}

/** A bound list: the caller's visits within the filters, 403 without a caller or for another phone. */
async function checkList(
  w: World,
  report: Report,
  caller: string | null,
  filters: { status?: string; accountId?: string; phone?: { text: string; e164: string | null } },
  limit: number,
  context: string,
  onPage?: (cursor: string) => void,
) {
  const args = { status: filters.status, accountId: filters.accountId, phone: filters.phone?.text };
  const result = await listAll(w, w.agent, report, args, limit, context, onPage);
  if (filters.phone && filters.phone.e164 === null) {
    expect("problem" in result, context).toBe(true);
    if ("problem" in result) expectProblemAnswer(result.problem, 422, "validation_failed", context);
    return;
  }
  if (caller === null) {
    seen.noCaller++;
    expect("problem" in result, `${context}: listed without a caller`).toBe(true);
    if ("problem" in result) expectProblemAnswer(result.problem, 403, "caller_unknown", context);
    return;
  }
  if (filters.phone && filters.phone.e164 !== caller) {
    seen.mismatch++;
    expect("problem" in result, `${context}: listed another phone's visits`).toBe(true);
    if ("problem" in result) expectProblemAnswer(result.problem, 403, "caller_mismatch", context);
    return;
  }
  expect("ids" in result, `${context}: ${"problem" in result && JSON.stringify(result.problem.body)}`).toBe(true);
  if (!("ids" in result)) return;
  seen.transports[report.channel]!++;
  if (result.ids.length > 10) seen.longLists++;
  const expected = w.incidents.filter(
    (inc) =>
      isCallers(w, inc, caller) &&
      (filters.status === undefined || inc.status === filters.status) &&
      (filters.accountId === undefined || inc.accountId === filters.accountId) &&
      (filters.phone === undefined || inc.phone === filters.phone.e164),
  );
  expect(result.ids, `${context}: the caller's visits (${caller})`).toEqual(listOrder(expected));
}

/** Get, cancel or reschedule of `target` by a bound call. */
async function checkOne(
  w: World,
  kind: "get" | "cancel" | "reschedule",
  { report, caller }: Resolved,
  t: Target,
  context: string,
) {
  const { id, incident } = targetOf(w, t, caller);
  const tool: CallerTool =
    kind === "get" ? "get_incident" : kind === "cancel" ? "cancel_incident" : "reschedule_incident";
  const args = toolArgs(tool, id, w);
  const answer = await callAs(w.agent, report, tool, args);
  const ctx = `${context} ${kind} ${id} as ${JSON.stringify(report)} (caller ${caller})`;
  if (caller === null) {
    seen.noCaller++;
    expectProblemAnswer(answer, 403, "caller_unknown", ctx);
  } else if (!incident || !isCallers(w, incident, caller)) {
    if (incident) seen.refusedOthers[kind]++;
    await expectNotFound(w, report, tool, answer, ctx);
  } else if (kind === "get") {
    seen.transports[report.channel]!++;
    expect(answer.status, `${ctx}: ${JSON.stringify(answer.body)}`).toBe(200);
    expectShown(answer.body, incident, ctx);
  } else if (kind === "cancel") {
    seen.transports[report.channel]!++;
    expect(answer.status, `${ctx}: ${JSON.stringify(answer.body)}`).toBe(200);
    if (incident.status === "scheduled") {
      seen.changedOwn.cancel++;
      incident.status = "cancelled";
      incident.updatedAt = Date.parse(answer.body.updatedAt);
      w.events.push({ type: "incident.cancelled", id, channel: report.channel, callerPhone: caller });
    }
    expectShown(answer.body, incident, ctx);
  } else if (incident.status === "cancelled") {
    expectProblemAnswer(answer, 409, "incident_not_changeable", ctx);
    expect(answer.body.reason, ctx).toBe("cancelled");
  } else {
    seen.transports[report.channel]!++;
    expect(answer.status, `${ctx}: ${JSON.stringify(answer.body)}`).toBe(200);
    seen.changedOwn.reschedule++;
    incident.startsAt = Date.parse(args.dateTime as string);
    incident.updatedAt = Date.parse(answer.body.updatedAt);
    w.events.push({ type: "incident.rescheduled", id, channel: report.channel, callerPhone: caller });
    expectShown(answer.body, incident, ctx);
  }
  if (kind !== "get") await expectTargetRow(w, id, incident, ctx);
}

/** find-caller: the caller's own, 403 without a caller or for another phone. */
async function checkFind(w: World, { report, caller }: Resolved, phone: PhoneArg | null, context: string) {
  const given = phone === null ? null : phoneArgument(w, caller, phone);
  const answer = await callAs(w.agent, report, "find_caller", given === null ? {} : { phone: given.text });
  const ctx = `${context} find-caller ${JSON.stringify(given)} as ${JSON.stringify(report)} (caller ${caller})`;
  if (given !== null && given.e164 === null) return expectProblemAnswer(answer, 422, "validation_failed", ctx);
  if (caller === null) {
    seen.noCaller++;
    return expectProblemAnswer(answer, 403, "caller_unknown", ctx);
  }
  if (given !== null && given.e164 !== caller) {
    seen.mismatch++;
    return expectProblemAnswer(answer, 403, "caller_mismatch", ctx);
  }
  expect(answer.status, `${ctx}: ${JSON.stringify(answer.body)}`).toBe(200);
  seen.transports[report.channel]!++;
  const body = answer.body as {
    phone: string;
    contacts: { id: string }[];
    accounts: { id: string }[];
    upcomingIncidents: { id: string }[];
  };
  expect(body.phone, ctx).toBe(caller);
  const upcoming = body.upcomingIncidents.map((i) => i.id);
  const mine = new Set(w.incidents.filter((inc) => isCallers(w, inc, caller)).map((inc) => inc.id));
  // Never another's visit…
  for (const id of upcoming) expect(mine.has(id), `${ctx}: ${id} is not the caller's`).toBe(true);
  const scheduled = w.incidents.filter((inc) => inc.status === "scheduled" && mine.has(inc.id));
  const theirContacts = new Set(w.contacts.filter((c) => c.phones.includes(caller)).map((c) => c.id));
  const theirAccounts = accountsOf(w, caller);
  const contactIds = body.contacts.map((c) => c.id);
  const accountIds = body.accounts.map((a) => a.id);
  if (theirAccounts.size <= 10) {
    // …and, when all the caller's accounts are listed, exactly its scheduled ones (all ahead), soonest first.
    expect(upcoming, ctx).toEqual(listOrder(scheduled).slice(0, 10));
    expect(new Set(accountIds), ctx).toEqual(theirAccounts);
  } else {
    expect(upcoming, ctx).toEqual(listOrder(scheduled.filter((inc) => upcoming.includes(inc.id))));
    expect(accountIds, ctx).toHaveLength(10);
    for (const id of accountIds) expect(theirAccounts.has(id), `${ctx}: account ${id}`).toBe(true);
  }
  expect(contactIds.length, ctx).toBe(Math.min(10, theirContacts.size));
  for (const id of contactIds) expect(theirContacts.has(id), `${ctx}: contact ${id}`).toBe(true);
}

/** An office or read key: every visit of the org, whatever caller it reports. */
async function checkUnbound(w: World, key: Tenant, report: Report, limit: number, context: string, gets = Infinity) {
  const result = await listAll(w, key, report, {}, limit, context);
  expect("ids" in result, `${context}: ${"problem" in result && JSON.stringify(result.problem.body)}`).toBe(true);
  if ("ids" in result) expect(result.ids, context).toEqual(listOrder(w.incidents));
  await Promise.all(
    w.incidents.slice(0, gets).map(async (inc) => {
      const answer = await callAs(key, report, "get_incident", { id: inc.id });
      expect(answer.status, `${context} get ${inc.id}: ${JSON.stringify(answer.body)}`).toBe(200);
      expectShown(answer.body, inc, `${context} get ${inc.id}`);
    }),
  );
  const other = await callAs(key, report, "get_incident", { id: neighbourIncident(w).id });
  expectProblemAnswer(other, 404, "incident_not_found", `${context} another org's`);
}

/** The report of a sweep of one number: the number in the platform's own place. */
function sweepReport(w: World, k: number, how: OrgSpec["sweep"][number]): Resolved {
  const num: Reporter = { kind: "num", n: k, s: how.s };
  const spec: ReportSpec =
    how.channel === "vapi"
      ? { channel: "vapi", callCustomer: num, messageCustomer: { kind: "none" }, header: { kind: "none" } }
      : how.channel === "retell"
        ? { channel: "retell", outbound: how.outbound, caller: num, other: { kind: "none" }, header: { kind: "none" } }
        : { channel: how.channel, header: num };
  return resolve(w, spec);
}

/** Counts what the generated org covers (its callers only: the outsider and foreign numbers are nobody's). */
function tally(w: World) {
  for (const num of w.nums.slice(0, -2)) {
    const mine = w.incidents.filter((inc) => isCallers(w, inc, num.e164));
    if (mine.length === 0) seen.nobodysCaller++;
    if (mine.length < w.incidents.length) seen.notAllMine++;
    const own = new Set(w.accounts.filter((a) => a.phones.includes(num.e164)).map((a) => a.id));
    for (const inc of mine) {
      if (inc.phone === num.e164 || inc.accountId === null) continue;
      if (own.has(inc.accountId)) seen.accountOnly++;
      else seen.contactOnly++;
    }
  }
}

/** One random call of the run. */
async function runOp(w: World, o: Op, step: number) {
  const context = `op ${step} (${o.op})`;
  const who = resolve(w, o.who);
  switch (o.op) {
    case "list": {
      const accountId =
        o.account === null
          ? undefined
          : o.account.kind === "acct"
            ? w.accounts[o.account.i % w.accounts.length]!.id
            : o.account.kind === "neighbour"
              ? neighbour.accountId
              : "acct_0000000000unknownaccount0";
      const phone = o.phone === null ? undefined : phoneArgument(w, who.caller, o.phone);
      const ctx = `${context} ${JSON.stringify({ status: o.status, accountId, phone })} as ${JSON.stringify(who.report)} (caller ${who.caller})`;
      return checkList(w, who.report, who.caller, { status: o.status ?? undefined, accountId, phone }, o.limit, ctx);
    }
    case "get":
    case "cancel":
    case "reschedule":
      return checkOne(w, o.op, who, o.target, context);
    case "find":
      return checkFind(w, who, o.phone, context);
    case "unbound": {
      const key = o.role === "office" ? w.tenant : w.reader;
      // A few gets: the first checks got every one already.
      return checkUnbound(w, key, who.report, o.limit, `${context} ${o.role}`, 3);
    }
  }
}

async function run(spec: OrgSpec) {
  const w = await buildWorld(spec);
  seen.runs++;
  tally(w);
  // Unbound keys first: they see every visit, reporting a caller or not.
  await checkUnbound(w, w.tenant, { channel: "http" }, 3, "office");
  await checkUnbound(w, w.reader, { channel: "http", header: w.nums[0]!.spellings[0] }, 4, "read with a caller");

  // Every number of the org, in one spelling through one transport: its list, and a get of every id.
  const cursors: { caller: string; limit: number; cursor: string }[] = [];
  for (const k of w.nums.keys()) {
    const how = spec.sweep[k]!;
    const who = sweepReport(w, k, how);
    expect(who.caller, "the sweep reports a valid number").toBe(w.nums[k]!.e164);
    const context = `sweep ${who.caller} via ${how.channel}`;
    let first = true;
    await checkList(w, who.report, who.caller, {}, how.limit, context, (cursor) => {
      if (first) cursors.push({ caller: who.caller!, limit: how.limit, cursor });
      first = false;
    });
    // Reads only: sent together.
    const targets: Target[] = [
      ...[...w.incidents.keys()].map((i) => ({ kind: "any" as const, i })),
      { kind: "unknown" },
    ];
    await Promise.all([...targets, { kind: "neighbour" as const }].map((t) => checkOne(w, "get", who, t, context)));
  }

  // No caller: every bound operation is 403 caller_unknown, and nothing changes.
  const none = resolve(w, spec.noCaller);
  expect(none.caller).toBeNull();
  await checkList(w, none.report, null, {}, 2, "no caller");
  await checkFind(w, none, null, "no caller");
  await checkFind(w, none, { kind: "num", n: 0, s: 0 }, "no caller");
  for (const kind of ["get", "cancel", "reschedule"] as const)
    for (const t of [{ kind: "any" as const, i: 0 }, { kind: "unknown" as const }])
      await checkOne(w, kind, none, t, "no caller");

  // A cursor of one caller's list, used by another caller: refused, or only the other caller's visits.
  for (const { caller, limit, cursor } of cursors) {
    const other = w.nums.find((n) => n.e164 !== caller)!;
    const answer = await callAs(w.agent, { channel: "http", header: other.spellings[0] }, "list_incidents", {
      limit,
      cursor,
    });
    const ctx = `${caller}'s cursor used by ${other.e164}`;
    seen.crossCursor++;
    if (answer.status === 200) {
      for (const row of answer.body.data)
        expect(isCallers(w, w.incidents.find((i) => i.id === row.id)!, other.e164), ctx).toBe(true);
    } else expectProblemAnswer(answer, 422, "validation_failed", ctx);
  }

  for (const [step, o] of spec.ops.entries()) await runOp(w, o, step);

  // D1 holds what the model says of every visit, and the org's events are exactly the changes made, by whom.
  for (const inc of w.incidents) await expectRow(inc.id, inc, "at the end");
  await expectRow(
    neighbourIncident(w).id,
    { status: "scheduled", ...neighbourIncident(w) },
    "another org's, at the end",
  );
  const recorded = await db()
    .select({ body: events.body })
    .from(events)
    .where(eq(events.orgId, w.tenant.orgId))
    .orderBy(asc(events.seq));
  expect(
    recorded.map(({ body }) => {
      const event = JSON.parse(body);
      return {
        type: event.type,
        id: event.data.id,
        role: event.actor.role,
        keyId: event.actor.keyId,
        channel: event.actor.channel,
        callerPhone: event.actor.callerPhone,
      };
    }),
    "the org's events",
  ).toEqual(w.events.map((e) => ({ ...e, role: "agent", keyId: w.agent.keyId })));
}

describe("the caller of a call binds an agent key (property)", () => {
  beforeAll(async () => {
    UNKNOWN_ID = newId("inc");
    neighbour = await makeNeighbour();
  });

  it("every spelling the runs use is the number the model says, and every no-number is none", () => {
    const all = [
      ...Array.from({ length: 100 }, (_, xx) => callerNumber(xx)),
      ...Array.from({ length: 100 }, (_, xx) => outsiderNumber(xx)),
      FOREIGN,
    ];
    for (const num of all) for (const s of num.spellings) expect(normalizePhone(s, "US"), s).toBe(num.e164);
    for (const text of NOT_A_NUMBER) expect(normalizePhone(text, "US"), text).toBeNull();
  });

  it("agent calls reach exactly the caller's visits; office and read keys every visit", async () => {
    await fc.assert(
      fc.asyncProperty(orgSpec, async (spec) => run(spec)),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  }, 180_000);

  it("the generated orgs exercise every way a visit is or is not the caller's (the oracle can fail)", () => {
    expect(seen.runs).toBe(RUNS);
    expect(seen.contactOnly, "visits reached only through a contact of their account").toBeGreaterThan(5);
    expect(seen.accountOnly, "visits reached only through their account's own phone").toBeGreaterThan(5);
    expect(seen.nobodysCaller, "callers with no visit").toBeGreaterThan(5);
    expect(seen.notAllMine, "callers for whom some visits are another's").toBeGreaterThan(RUNS);
    for (const [kind, n] of Object.entries(seen.refusedOthers))
      expect(n, `another's visit, ${kind}`).toBeGreaterThan(10);
    for (const [kind, n] of Object.entries(seen.changedOwn))
      expect(n, `the caller's own visit, ${kind}`).toBeGreaterThan(5);
    for (const [channel, n] of Object.entries(seen.transports))
      expect(n, `a caller found via ${channel}`).toBeGreaterThan(5);
    expect(seen.noCaller).toBeGreaterThan(RUNS);
    expect(seen.mismatch).toBeGreaterThan(5);
    expect(seen.crossCursor).toBeGreaterThan(5);
    expect(seen.longLists, "a caller with more than 10 accounts").toBeGreaterThan(2);
  });
});
