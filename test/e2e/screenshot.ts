// `npm run screenshot`: docs/board.png, the dispatch board of `npm run dev`'s
// demo, made as a fresh clone would show it — a throwaway local state
// migrated and seeded by the demo seed, `wrangler dev` on a free port, the
// page signed in with the demo's credentials on the next working day, in
// headless Chromium (test/e2e/browser.ts).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DEMO } from "../../src/db/demo";
import { launchChromium, signIn } from "./browser";
import { admin, applyMigrations, DevServer, freePort, jsonLine, ROOT } from "./harness";

const OUT = path.join(ROOT, "docs/board.png");

/** The first Monday to Friday after today in the demo's zone (the demo's schedule), as YYYY-MM-DD. */
function nextWorkingDay(now: number): string {
  const today = new Intl.DateTimeFormat("en-CA", { timeZone: DEMO.timeZone }).format(now);
  for (let t = Date.parse(`${today}T12:00:00Z`) + 86_400_000; ; t += 86_400_000) {
    const day = new Date(t).getUTCDay();
    if (day !== 0 && day !== 6) return new Date(t).toISOString().slice(0, 10);
  }
}

const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-screenshot-"));
let server: DevServer | undefined;
const browser = await launchChromium();
try {
  await applyMigrations(stateDir);
  jsonLine(await admin(stateDir, ["demo", "seed"]), "demo seed");
  server = await DevServer.start(stateDir, await freePort());
  const page = await browser.newPage({ viewport: { width: 1680, height: 560 } });
  await page.goto(`${server.baseUrl}/board`);
  await signIn(page, DEMO.orgId, DEMO.apiKey);
  const day = nextWorkingDay(Date.now());
  await page.locator("#date").fill(day);
  // The day drawn: its date shown, its visits listed.
  await page.locator("#day").filter({ hasNotText: "(today)" }).waitFor();
  await page.locator("#timeline li").first().waitFor();
  await page.locator("#date").blur();
  await page.screenshot({ path: OUT, fullPage: true });
  console.log(`${path.relative(ROOT, OUT)}: the demo's board of ${day}`);
} finally {
  await browser.close();
  await server?.stop();
  fs.rmSync(stateDir, { recursive: true, force: true });
}
