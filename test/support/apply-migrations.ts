import { applyD1Migrations, env } from "cloudflare:test";

// Storage is isolated per test file; applying is a no-op once done.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
