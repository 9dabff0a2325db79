declare namespace Cloudflare {
  interface Env {
    DB: D1Database;
    UNMIGRATED_DB: D1Database;
    BEHIND_DB: D1Database;
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
  }
}
