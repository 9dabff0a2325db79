import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

const workers = () =>
  cloudflareTest(async () => ({
    main: "./src/index.ts",
    wrangler: { configPath: "./wrangler.toml" },
    miniflare: {
      bindings: { TEST_MIGRATIONS: await readD1Migrations(path.join(import.meta.dirname, "migrations")) },
      // A database no migration has reached: what a request meets before a deploy's migrations.
      // And one a step behind: every migration but the newest (a deploy's new code before its migration).
      d1Databases: { UNMIGRATED_DB: "unmigrated", BEHIND_DB: "behind" },
    },
  }));

const WORKER_TESTS = ["test/unit/**/*.test.ts", "test/integration/**/*.test.ts", "test/security/**/*.test.ts"];
const ALONE = [
  "test/integration/plans/*.test.ts",
  "test/integration/events/list.test.ts",
  "test/integration/events/outbox.test.ts",
  "test/integration/http/unmigrated.test.ts",
  "test/integration/board/demo.test.ts",
];

export default defineConfig({
  test: {
    // Request log lines of passing tests are noise; failing tests keep theirs.
    silent: "passed-only",
    // Two files at a time even on 2 cores (vitest's default is cores - 1): an
    // e2e file spends most of its time waiting on wrangler dev and CLI
    // processes, which leaves a core to a workerd file beside it.
    maxWorkers: 2,
    projects: [
      {
        // Unit and integration tests run inside workerd against a real local D1,
        // one workerd per vitest worker for all of them (isolate: false): a
        // runtime per file cost 3 to 8 s of start-up each. Files share its
        // database, so each test works in orgs of its own; what reads or
        // changes every org's rows runs alone (below).
        plugins: [workers()],
        test: {
          name: "worker",
          isolate: false,
          include: WORKER_TESTS,
          exclude: ["**/*.node.test.ts", ...ALONE],
          setupFiles: ["./test/support/apply-migrations.ts"],
        },
      },
      {
        // Files whose assertions count across every org (the cron's due
        // visits, the event sweep, the unmigrated databases) or that seed the
        // demo org (which the auth matrix expects absent): a runtime and a
        // database of their own each.
        plugins: [workers()],
        test: {
          name: "worker-alone",
          include: ALONE,
          setupFiles: ["./test/support/apply-migrations.ts"],
        },
      },
      {
        // Node-side checks that need no server (ajv-based validators cannot run in workerd): *.node.test.ts.
        test: { name: "node", include: ["test/**/*.node.test.ts"], environment: "node" },
      },
      {
        // End-to-end tests drive a real `wrangler dev` and the admin CLI from Node.
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          environment: "node",
          testTimeout: 60_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
