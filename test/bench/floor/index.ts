// The floors the benchmark measures the API against (npm run bench): the least
// a worker can do to answer a request, served beside the API by its own
// `wrangler dev`, so that both meet the same machine.
// - the read floor (`/?id=…`): one indexed D1 read;
// - the logged read floor (`/logged?id=…`): the same read and the one JSON
//   log line per request the API writes; every API read is compared with it;
// - the write floor (POST `/write`): the JSON body read, one INSERT of a lead
//   with a new id, and the log line; every API write is compared with it;
// - the page floor (`/page`): one indexed read of 51 contacts (a page of 50
//   and the one that says more follow), answered as they come, and the log
//   line: what a page costs before any code of the API's (the pages are
//   also printed against it);
// - the outbox floor (POST `/write-event`): the write floor's INSERT with the
//   event every create must record in the same batch (docs/webhooks.md,
//   "Events": the event row and the read of the endpoints subscribed to it),
//   and the log line: what a create costs before any code of the API's (the
//   creates are also printed against it).
// - the caller floor (POST `/caller`): the JSON body read, then one batch of
//   three reads by phone, as find-caller's contract asks (docs/api.md, "Find a
//   caller"): the contacts with the number, the accounts with it or of those
//   contacts, and the upcoming scheduled visits by the number or of those
//   accounts, 10 at most each, answered as they come, and the log line.
// The tables (accounts with one row, leads, contacts, the caller's contacts,
// accounts and visits, events, endpoints) are created by start.ts.
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

/** The write floor's one INSERT, which the outbox floor also runs. */
const INSERT_LEAD =
  "INSERT INTO leads (org_id, id, first_name, last_name, email, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";

export default {
  async fetch(request, env) {
    const started = Date.now();
    const { pathname, searchParams } = new URL(request.url);
    if (pathname === "/write") {
      const lead = (await request.json()) as { firstName?: string; lastName?: string; email?: string };
      const id = crypto.randomUUID();
      await env.DB.prepare(INSERT_LEAD)
        .bind("org_floor", id, lead.firstName ?? null, lead.lastName ?? null, lead.email ?? null, started)
        .run();
      logLine(request.method, pathname, started);
      return Response.json({ id });
    }
    if (pathname === "/write-event") {
      const lead = (await request.json()) as { firstName?: string; lastName?: string; email?: string };
      const id = crypto.randomUUID();
      const event = crypto.randomUUID();
      const data = {
        id,
        firstName: lead.firstName ?? null,
        lastName: lead.lastName ?? null,
        email: lead.email ?? null,
      };
      const body = { id: event, type: "lead.created", timestamp: new Date(started).toISOString(), data };
      await env.DB.batch([
        env.DB.prepare(INSERT_LEAD).bind("org_floor", id, data.firstName, data.lastName, data.email, started),
        env.DB.prepare(
          "INSERT INTO events (id, org_id, type, created_at, body, enqueued_at) VALUES (?1, ?2, 'lead.created', ?3, ?4, ?3)",
        ).bind(event, "org_floor", started, JSON.stringify(body)),
        env.DB.prepare("SELECT id FROM webhook_endpoints WHERE org_id = ?1 AND status = 'enabled'").bind("org_floor"),
      ]);
      logLine(request.method, pathname, started);
      return Response.json({ id });
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
      const [contacts, accounts, incidents] = await env.DB.batch([
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
      ]);
      logLine(request.method, pathname, started);
      return Response.json({
        phone,
        contacts: contacts!.results,
        accounts: accounts!.results,
        upcomingIncidents: incidents!.results,
      });
    }
    if (pathname === "/page") {
      const { results } = await env.DB.prepare(
        "SELECT * FROM contacts WHERE org_id = ?1 ORDER BY created_at, id LIMIT 51",
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
