// The floor the benchmark measures the API against (npm run bench): the least
// a worker can do to answer a read — one indexed D1 read — with and without
// the one JSON log line per request the API writes. It is served beside the
// API by its own `wrangler dev`, so both meet the same machine.
interface Env {
  DB: D1Database;
}

export default {
  async fetch(request, env) {
    const started = Date.now();
    const { pathname, searchParams } = new URL(request.url);
    const row = await env.DB.prepare("SELECT id, name, city FROM accounts WHERE org_id = ?1 AND id = ?2")
      .bind("org_floor", searchParams.get("id") ?? "acct_floor")
      .first();
    if (pathname === "/logged") {
      console.log(JSON.stringify({ route: pathname, status: 200, durationMs: Date.now() - started }));
    }
    return Response.json(row);
  },
} satisfies ExportedHandler<Env>;
