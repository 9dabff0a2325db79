import { applyD1Migrations, env } from "cloudflare:test";

// Once per database: a no-op where the migrations are already applied (files
// of the shared "worker" project after the first).
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
