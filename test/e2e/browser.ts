// A headless browser for the page tests and the board's screenshot: Debian's
// Chromium (`.ci/run` installs it when missing), driven by playwright-core,
// which never downloads a browser of its own; and axe-core's checks, run in
// the page.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { type Browser, chromium, type Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
}

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/**
 * axe-core's default rules on the page as it is now: the violations, each
 * with the elements it names. The script goes in through the DevTools
 * protocol, which the page's Content-Security-Policy does not govern.
 */
export async function axeViolations(
  page: Page,
): Promise<{ id: string; impact: string | null; help: string; targets: string[] }[]> {
  await page.evaluate(AXE);
  const violations = await page.evaluate(
    async () =>
      (await (globalThis as unknown as { axe: { run(): Promise<{ violations: unknown[] }> } }).axe.run()).violations,
  );
  return (violations as AxeViolation[]).map((v) => ({
    id: v.id,
    impact: v.impact,
    help: v.help,
    targets: v.nodes.map((n) => JSON.stringify(n.target)),
  }));
}

/** Signs in through the page's form, as a person would. */
export async function signIn(page: Page, orgId: string, apiKey: string) {
  await page.getByLabel("Organisation id").fill(orgId);
  await page.getByLabel("API key").fill(apiKey);
  await page.getByRole("button", { name: "Show the board" }).click();
}
