// `npm run screenshot`: docs/board.png, the dispatch board of `npm run dev`'s
// demo, made as a fresh clone would show it — a throwaway local state
// migrated and seeded by the demo seed, `wrangler dev` on a free port, the
// page `npm run dev` prints (the next working day) signed in with the demo's
// credentials, in headless Chromium (test/e2e/browser.ts).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DEMO, demoDate } from "../../src/db/demo";
import { dateString } from "../../src/scheduling/zone";
import { launchChromium, signIn } from "./browser";
import { admin, applyMigrations, DevServer, freePort, jsonLine, ROOT } from "./harness";

const OUT = path.join(ROOT, "docs/board.png");

const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-screenshot-"));
let server: DevServer | undefined;
const browser = await launchChromium();
try {
  await applyMigrations(stateDir);
  jsonLine(await admin(stateDir, ["demo", "seed"]), "demo seed");
  server = await DevServer.start(stateDir, await freePort());
  const page = await browser.newPage({ viewport: { width: 1680, height: 560 } });
  // As `npm run dev` prints it: the demo's day.
  const day = dateString(demoDate(Date.now()));
  await page.goto(`${server.baseUrl}/board?date=${day}`);
  await signIn(page, DEMO.orgId, DEMO.apiKey);
  await page.locator("#timeline li").first().waitFor();
  await page.screenshot({ path: OUT, fullPage: true });
  console.log(`${path.relative(ROOT, OUT)}: the demo's board of ${day}`);
} finally {
  await browser.close();
  await server?.stop();
  fs.rmSync(stateDir, { recursive: true, force: true });
}
