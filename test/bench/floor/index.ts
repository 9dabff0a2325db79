// The floors the benchmark measures the API against (npm run bench): the least
// a worker can do to answer a request, served beside the API by its own
// `wrangler dev` on the API's platform (wrangler.toml here), so that both
// meet the same machine and the same runtime.
// - the read floor (`/?id=…`): one indexed D1 read;
// - the logged read floor (`/logged?id=…`): the same read and the one JSON
//   log line per request the API writes; every API read is compared with it;
// - the write floor (POST `/write`): the JSON body read, one INSERT of a lead
//   with a new id, the log line, and the new row as the answer (a create
//   answers its resource); every API write is compared with it;
// - the page floor (`/page`): one indexed read of 51 contacts (a page of 50
//   and the one that says more follow), answered as they come, and the log
//   line: what a page costs before any code of the API's (the pages are
//   also printed against it); `/page?of=incidents`, the same of 51 incidents
//   in start order, whose rows are larger (the incidents pages' shape);
// - the outbox floor (POST `/write-event`): the write floor's INSERT with the
//   event every create must record in the same batch (docs/webhooks.md,
//   "Events": the event row and the read of the endpoints subscribed to it),
//   and the log line: what a create costs before any code of the API's (the
//   creates are also printed against it); `?of=contacts`, the same with a
//   contact among the caller floor's 100,000 (a contact's own indexes).
// - the caller floor (POST `/caller`): the JSON body read, then one batch of
//   four reads by phone, as find-caller's contract asks (docs/api.md, "Find a
//   caller" and "Plans"): the contacts with the number, the accounts with it
//   or of those contacts, and the upcoming scheduled visits and the active
//   plans by the number or of those accounts, 10 at most each, answered as
//   they come, and the log line.
// - the booking floor (POST `/book`): the outbox floor with, in place of the
//   lead, the visit a booking writes only while it fits (docs/api.md, "Book"):
//   one INSERT … SELECT guarded by the count of scheduled visits and live
//   holds overlapping its span (a hold takes a place as a visit does), by the
//   (org, start, …) indexes, then the places left that the answer carries
//   (`remaining`), answered with the new row; and the technician booking floor (POST
//   `/book?technicians=20`): the visit goes, by the assignment rule, to the
//   given technician with no visit or live hold overlapping it and the fewest
//   visits that day (ties by id), each looked up by the (org, technician,
//   start) index, then the technicians still free (docs/api.md,
//   "Availability and booking");
// - the availability floor (POST `/availability`): the JSON body read, one
//   read of the visits and live holds occupying a window (a week, or to
//   `until`) of the given technicians, or of the crew org without
//   `technicians`, and the log line (what find costs before the slot maths);
// - the board floor (GET `/board?start=…&end=…`): one batch of two reads, the
//   technician org's visits starting that day but cancelled ones and its live
//   holds of that day (docs/api.md, "The dispatch board"), and the log line.
// The tables (accounts with one row, leads, contacts, the caller's contacts,
// accounts and visits, events, endpoints, the visits and holds of a crew and
// a technician org) are created by start.ts.
interface Env {
  DB: D1Database;
}

// The API's own log line (src/middleware/request-log.ts), field for field: the
// request id the contract asks every log line to carry, the org, the method,
// the route, the status and the duration. Under `wrangler dev` each line
// crosses from workerd to wrangler, and that costs by its length: a floor with
// a shorter line would charge the API for the fields the contract requires.
const logLine = (method: string, route: string, started: number) =>
  console.log(
    JSON.stringify({
      requestId: crypto.randomUUID(),
      orgId: "org_01floor0000000000000000000",
      method,
      route,
      status: 200,
      durationMs: Date.now() - started,
    }),
  );

/** The write floor's one INSERT, which the outbox floor also runs; the new row is the answer. */
const INSERT_LEAD =
  "INSERT INTO leads (org_id, id, first_name, last_name, email, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING *";
/** The contact the outbox floor writes in its place with `?of=contacts`, where the caller floor finds its contacts. */
const INSERT_CONTACT = `INSERT INTO caller_contacts (org_id, id, first_name, last_name, email, email_lower, created_at,
  updated_at) VALUES (?1, ?2, ?3, ?4, ?5, lower(?5), ?6, ?6) RETURNING *`;

/** The outbox floor's event and the read of its subscribers, which every create batches with its write. */
const eventOf = (env: Env, type: string, data: unknown, started: number) => {
  const event = crypto.randomUUID();
  const body = { id: event, type, timestamp: new Date(started).toISOString(), data };
  return [
    env.DB.prepare(
      "INSERT INTO events (id, org_id, type, created_at, body, enqueued_at) VALUES (?1, ?2, ?3, ?4, ?5, ?4)",
    ).bind(event, "org_floor", type, started, JSON.stringify(body)),
    env.DB.prepare("SELECT id FROM webhook_endpoints WHERE org_id = ?1 AND status = 'enabled'").bind("org_floor"),
  ];
};

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The technician org's technicians, as start.ts names them. */
const technicianIds = (count: number) =>
  JSON.stringify(Array.from({ length: count }, (_, i) => `tech_floor${String(i).padStart(2, "0")}`));
/** Scheduled visits of the org occupying some instant of [?5, ?6), all no longer than an hour (?8). */
const OVERLAPPING =
  "org_id = ?2 AND status = 'scheduled' AND starts_at > ?5 - ?8 AND starts_at < ?6 AND occupied_until > ?5";
/** Live holds of the org occupying some instant of [?5, ?6) at ?7: a hold takes a place as a visit does. */
const HELD =
  "org_id = ?2 AND starts_at > ?5 - ?8 AND starts_at < ?6 AND occupied_until > ?5 AND expires_at > ?7 AND ended_at IS NULL";
/** Visits and holds occupying the span: in crew mode it has room while fewer than ?9. */
const OCCUPYING = `(SELECT count(*) FROM visits WHERE ${OVERLAPPING}) + (SELECT count(*) FROM holds WHERE ${HELD})`;
/** The crew org's visit, only while fewer than ?9 visits and holds occupy its span; the new row is the answer. */
const INSERT_CREW_VISIT = `INSERT INTO visits (id, org_id, client_name, insect_name, starts_at, ends_at, occupied_until,
  created_at, updated_at) SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7, ?7 WHERE ${OCCUPYING} < ?9 RETURNING *`;
/** Whether technician t.value has no visit and no live hold occupying the span. */
const FREE = `NOT EXISTS (SELECT 1 FROM visits INDEXED BY visits_org_technician_starts
  WHERE technician_id = t.value AND ${OVERLAPPING}) AND NOT EXISTS (SELECT 1 FROM holds WHERE technician_id = t.value AND ${HELD})`;
/**
 * The technician org's visit, given by the contract's assignment rule to the free technician of ?9 (a JSON
 * array) with the fewest visits that day [?10, ?11), ties broken by id.
 */
const INSERT_TECHNICIAN_VISIT = `INSERT INTO visits (id, org_id, client_name, insect_name, starts_at, ends_at,
  occupied_until, created_at, updated_at, technician_id) SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7, ?7, t.value
  FROM json_each(?9) AS t WHERE ${FREE}
  ORDER BY (SELECT count(*) FROM visits INDEXED BY visits_org_technician_starts WHERE org_id = ?2
    AND technician_id = t.value AND status = 'scheduled' AND starts_at >= ?10 AND starts_at < ?11), t.value LIMIT 1
  RETURNING *`;
/** The places left once the visit is in (the answer's `remaining`): crews, or technicians still free. */
const CREWS_LEFT = `SELECT ?9 - ${OCCUPYING} AS remaining`;
const TECHNICIANS_LEFT = `SELECT count(*) AS remaining FROM json_each(?9) AS t WHERE ${FREE}`;
/** Bookings so far: the next goes to the next hour (the floor's own times, not the API's). */
let booked = 0;
/** A capacity no run reaches, so that every request writes as a booking that fits does. */
const CAPACITY = 1_000_000;

export default {
  async fetch(request, env) {
    const started = Date.now();
    const { pathname, searchParams } = new URL(request.url);
    if (pathname === "/book") {
      const visit = (await request.json()) as { clientName: string; insectName: string };
      const technicians = Number(searchParams.get("technicians") ?? 0);
      // The hours start.ts fills, in turn.
      const slot = booked++ % 3650;
      const start = (Math.floor(started / DAY) + Math.floor(slot / 10) - 182) * DAY + (13 + (slot % 10)) * HOUR;
      const id = crypto.randomUUID();
      const day = Math.floor(start / DAY) * DAY;
      const values = [
        id,
        technicians ? "org_fleet" : "org_floor",
        visit.clientName,
        visit.insectName,
        start,
        start + HOUR,
        started,
        HOUR,
        technicians ? technicianIds(technicians) : CAPACITY,
        day,
        day + DAY,
      ];
      const data = { id, ...visit, startsAt: start, endsAt: start + HOUR };
      const [inserted, left] = await env.DB.batch<Record<string, unknown>>([
        // D1 binds exactly as many values as a statement's highest ?N.
        technicians
          ? env.DB.prepare(INSERT_TECHNICIAN_VISIT).bind(...values)
          : env.DB.prepare(INSERT_CREW_VISIT).bind(...values.slice(0, 9)),
        env.DB.prepare(technicians ? TECHNICIANS_LEFT : CREWS_LEFT).bind(...values.slice(0, 9)),
        ...eventOf(env, "incident.created", data, started),
      ]);
      logLine(request.method, pathname, started);
      return Response.json({ ...inserted!.results[0], remaining: left!.results[0]!.remaining });
    }
    if (pathname === "/availability") {
      const { dateTime, technicians, until } = (await request.json()) as {
        dateTime: string;
        technicians?: number;
        until?: string;
      };
      const from = Date.parse(dateTime);
      const to = until === undefined ? from + 7 * DAY : Date.parse(until);
      // The technicians' visits, or the crew's, and the live holds, which take a place as a visit does.
      const whose = technicians ? "AND technician_id IN (SELECT value FROM json_each(?9))" : "";
      const { results } = await env.DB.prepare(
        `SELECT starts_at, occupied_until, technician_id FROM visits WHERE ${OVERLAPPING} ${whose}
          UNION ALL SELECT starts_at, occupied_until, technician_id FROM holds WHERE ${HELD} ${whose}
          ORDER BY starts_at`,
      )
        // D1 binds exactly as many values as the statement's highest ?N: ?9 only for technicians.
        .bind(
          ...[null, technicians ? "org_fleet" : "org_floor", null, null, from, to, started, HOUR],
          ...(technicians ? [technicianIds(technicians)] : []),
        )
        .all();
      logLine(request.method, pathname, started);
      return Response.json({ occupied: results.length });
    }
    if (pathname === "/board") {
      const [start, end] = [Number(searchParams.get("start")), Number(searchParams.get("end"))];
      const [visits, holds] = await env.DB.batch([
        env.DB.prepare(
          "SELECT * FROM visits WHERE org_id = ?1 AND starts_at >= ?2 AND starts_at < ?3 AND status <> 'cancelled' ORDER BY starts_at, id",
        ).bind("org_fleet", start, end),
        env.DB.prepare(
          "SELECT technician_id, starts_at, ends_at, expires_at, service_id FROM holds WHERE org_id = ?1 AND starts_at >= ?2 AND starts_at < ?3 AND expires_at > ?4 ORDER BY starts_at, id",
        ).bind("org_fleet", start, end, started),
      ]);
      logLine(request.method, pathname, started);
      return Response.json({ visits: visits!.results, holds: holds!.results });
    }
    if (pathname === "/write") {
      const lead = (await request.json()) as { firstName?: string; lastName?: string; email?: string };
      const id = crypto.randomUUID();
      const row = await env.DB.prepare(INSERT_LEAD)
        .bind("org_floor", id, lead.firstName ?? null, lead.lastName ?? null, lead.email ?? null, started)
        .first();
      logLine(request.method, pathname, started);
      return Response.json(row);
    }
    if (pathname === "/write-event") {
      const lead = (await request.json()) as { firstName?: string; lastName?: string; email?: string };
      const id = crypto.randomUUID();
      const data = {
        id,
        firstName: lead.firstName ?? null,
        lastName: lead.lastName ?? null,
        email: lead.email ?? null,
      };
      const contact = searchParams.get("of") === "contacts";
      const [inserted] = await env.DB.batch([
        env.DB.prepare(contact ? INSERT_CONTACT : INSERT_LEAD).bind(
          "org_floor",
          id,
          data.firstName,
          data.lastName,
          data.email,
          started,
        ),
        ...eventOf(env, contact ? "contact.created" : "lead.created", data, started),
      ]);
      logLine(request.method, pathname, started);
      return Response.json(inserted!.results[0]);
    }
    if (pathname === "/caller") {
      const { phone } = (await request.json()) as { phone: string };
      // Each lookup by one index (a branch of a UNION), as the API's own statements read them.
      const contactsWith =
        "SELECT * FROM caller_contacts WHERE org_id = ?1 AND mobile_e164 = ?2 UNION SELECT * FROM caller_contacts WHERE org_id = ?1 AND business_e164 = ?2";
      const accountsWith =
        "SELECT * FROM caller_accounts WHERE org_id = ?1 AND mobile_e164 = ?2 UNION SELECT * FROM caller_accounts WHERE org_id = ?1 AND business_e164 = ?2";
      const callerAccounts = `SELECT account_id FROM (${contactsWith}) UNION SELECT id FROM (${accountsWith})`;
      const upcoming = "org_id = ?1 AND starts_at > ?3 - 86400000 AND ends_at > ?3 AND status = 'scheduled'";
      const read = (query: string, ...values: unknown[]) => env.DB.prepare(query).bind("org_floor", phone, ...values);
      const [contacts, accounts, incidents, plans] = await env.DB.batch([
        read(`SELECT * FROM (${contactsWith}) ORDER BY created_at DESC, id DESC LIMIT 10`),
        read(
          `SELECT * FROM (${accountsWith} UNION SELECT * FROM caller_accounts WHERE id IN (SELECT account_id FROM (${contactsWith})))
           ORDER BY created_at DESC, id DESC LIMIT 10`,
        ),
        read(
          `SELECT * FROM incidents WHERE ${upcoming} AND phone = ?2
           UNION SELECT * FROM incidents WHERE ${upcoming} AND account_id IN (${callerAccounts})
           ORDER BY starts_at, id LIMIT 10`,
          started,
        ),
        read(
          `SELECT * FROM caller_plans WHERE org_id = ?1 AND phone = ?2 AND status = 'active'
           UNION SELECT * FROM caller_plans WHERE org_id = ?1 AND account_id IN (${callerAccounts}) AND status = 'active'
           ORDER BY created_at DESC, id DESC LIMIT 10`,
        ),
      ]);
      logLine(request.method, pathname, started);
      return Response.json({
        phone,
        contacts: contacts!.results,
        accounts: accounts!.results,
        upcomingIncidents: incidents!.results,
        plans: plans!.results,
      });
    }
    if (pathname === "/page") {
      const { results } = await env.DB.prepare(
        searchParams.get("of") === "incidents"
          ? "SELECT * FROM incidents WHERE org_id = ?1 ORDER BY starts_at, id LIMIT 51"
          : "SELECT * FROM contacts WHERE org_id = ?1 ORDER BY created_at, id LIMIT 51",
      )
        .bind("org_floor")
        .all();
      logLine(request.method, pathname, started);
      return Response.json({ data: results.slice(0, 50), nextCursor: results.length > 50 ? results[50]!.id : null });
    }
    const row = await env.DB.prepare("SELECT id, name, city FROM accounts WHERE org_id = ?1 AND id = ?2")
      .bind("org_floor", searchParams.get("id") ?? "acct_floor")
      .first();
    if (pathname === "/logged") logLine(request.method, pathname, started);
    return Response.json(row);
  },
} satisfies ExportedHandler<Env>;
