// The dispatch board's page in a browser (docs/api.md, "The dispatch board"):
// headless Chromium against a real `wrangler dev`, an org in New York with
// three technicians (one with their own hours, one off that day), visits and
// a live hold stored two days ahead. Checked as a person sees the page:
// refused keys answered with the problem's title and detail, each visit and
// hold in its technician's row at its local time (its block's left edge on
// the axis's mark of that time), day navigation by buttons, date input and
// keyboard, a booking made through the API appearing without a reload, the
// key never in a URL or localStorage, no console error, and axe-core's
// default rules without a violation.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { Temporal } from "temporal-polyfill";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateApiKey, hashApiKey } from "../../src/lib/api-keys";
import { axeViolations, launchChromium, signIn } from "./browser";
import { applyMigrations, DevServer, d1Execute, freePort, request } from "./harness";

const ZONE = "America/New_York";
const ORG = "org_boardpage00000000000000001";
const SERVICE = "svc_boardpage00000000000000001";
const ANA = "tech_boardpage0000000000000001";
const BO = "tech_boardpage0000000000000002";
const CY = "tech_boardpage0000000000000003";
const keys = { office: generateApiKey(), read: generateApiKey(), agent: generateApiKey() };

const today = Temporal.Now.plainDateISO(ZONE);
const DAY = today.add({ days: 2 }).toString();
const NEXT_DAY = today.add({ days: 3 }).toString();
/** The instant of local `hhmm` on `date` in New York. */
const at = (date: string, hhmm: string) =>
  Temporal.PlainDate.from(date).toZonedDateTime({ timeZone: ZONE, plainTime: hhmm }).epochMilliseconds;

let stateDir: string;
let server: DevServer | undefined;
let browser: Browser | undefined;
let page: Page;
/** Console errors and uncaught exceptions of the page; each test takes those it expects. */
const problems: string[] = [];
const requested: string[] = [];

beforeAll(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-e2e-board-"));
  await applyMigrations(stateDir);
  const now = Date.now();
  const week = Object.fromEntries(
    ["mon", "tue", "wed", "thu", "fri", "sat", "sun"].map((d) => [d, [["08:00", "18:00"]]]),
  );
  const schedule = {
    slotMinutes: 60,
    capacity: 1,
    minNoticeMinutes: 0,
    horizonDays: 30,
    weeklyHours: week,
    closedDates: [],
  };
  const anaHours = Object.fromEntries(Object.keys(week).map((d) => [d, [["07:00", "15:00"]]]));
  const visit = (id: string, technician: string, date: string, hhmm: string, client: string, status = "scheduled") =>
    `INSERT INTO incidents (id, org_id, status, client_name, insect_name, postal_code, service_id, technician_id, starts_at, ends_at, occupied_until, created_at, updated_at) VALUES ('${id}', '${ORG}', '${status}', '${client}', 'ants', '10001', '${SERVICE}', '${technician}', ${at(date, hhmm)}, ${at(date, hhmm) + 3_600_000}, ${at(date, hhmm) + 5_400_000}, ${now}, ${now})`;
  const technician = (id: string, name: string, hours: unknown, daysOff: string[]) =>
    `INSERT INTO technicians (id, org_id, name, skills, postal_codes, weekly_hours, days_off, active, created_at, updated_at) VALUES ('${id}', '${ORG}', '${name}', '[]', '[]', ${hours ? `'${JSON.stringify(hours)}'` : "NULL"}, '${JSON.stringify(daysOff)}', 1, ${now}, ${now})`;
  await d1Execute(
    stateDir,
    [
      `INSERT INTO orgs (id, name, time_zone, country, schedule, max_slot_minutes, cursor_secret, created_at) VALUES ('${ORG}', 'Board Page Pest', '${ZONE}', 'US', '${JSON.stringify(schedule)}', 90, '${"ab".repeat(32)}', ${now})`,
      ...(await Promise.all(
        Object.entries(keys).map(
          async ([role, key], i) =>
            `INSERT INTO api_keys (id, org_id, key_hash, role, created_at) VALUES ('key_boardpage00000000000000${i}', '${ORG}', '${await hashApiKey(key)}', '${role}', ${now})`,
        ),
      )),
      `INSERT INTO services (id, org_id, name, name_lower, duration_minutes, buffer_minutes, arrival_window_minutes, skills, keywords, is_default, active, created_at, updated_at) VALUES ('${SERVICE}', '${ORG}', 'General pest control', 'general pest control', 60, 30, 0, '[]', '["ants"]', 1, 1, ${now}, ${now})`,
      technician(ANA, "Ana Ruiz", anaHours, []),
      technician(BO, "bo Chen", null, []),
      technician(CY, "Cy Dale", null, [DAY]),
      visit("inc_boardpage00000000000000001", ANA, DAY, "09:00", "Ada Client"),
      visit("inc_boardpage00000000000000002", BO, DAY, "13:00", "Done Client", "completed"),
      visit("inc_boardpage00000000000000003", BO, NEXT_DAY, "08:00", "Tomorrow Client"),
      `INSERT INTO holds (id, org_id, starts_at, ends_at, occupied_until, service_id, technician_id, postal_code, expires_at, created_at) VALUES ('hold_boardpage0000000000000001', '${ORG}', ${at(DAY, "11:00")}, ${at(DAY, "12:00")}, ${at(DAY, "12:30")}, '${SERVICE}', '${ANA}', NULL, ${now + 3_600_000}, ${now})`,
    ].join("; "),
  );
  server = await DevServer.start(stateDir, await freePort());
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(message.text());
  });
  page.on("pageerror", (error) => problems.push(error.message));
  page.on("request", (r) => requested.push(r.url()));
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

const row = (name: string) =>
  page.locator("#timeline section.row").filter({ has: page.getByRole("heading", { name }) });
interface Drawn {
  /** The horizontal centre of each of the axis's "HH:MM" marks. */
  ticks: Record<string, number>;
  /** Each block: its row's heading, its lines, its left edge and width. */
  blocks: { row: string; lines: string[]; left: number; width: number }[];
  /** The buffers drawn in each row. */
  buffers: Record<string, number>;
}
/**
 * The timeline as drawn, read in one evaluation: the page redraws the day
 * each second here (?refresh=1), and an element read across two calls may be
 * gone by the second.
 */
const drawn = () =>
  inPage<Drawn>(`(() => {
    const ticks = {};
    for (const tick of document.querySelectorAll(".tick")) {
      const box = tick.getBoundingClientRect();
      ticks[tick.textContent] = box.x + box.width / 2;
    }
    const blocks = [];
    const buffers = {};
    for (const row of document.querySelectorAll("#timeline section.row")) {
      const name = row.querySelector("h3").textContent;
      buffers[name] = row.querySelectorAll(".buffer").length;
      for (const li of row.querySelectorAll("li")) {
        const box = li.getBoundingClientRect();
        blocks.push({ row: name, lines: [...li.querySelectorAll("span")].map((s) => s.textContent), left: box.x, width: box.width });
      }
    }
    return { ticks, blocks, buffers };
  })()`);
/** The block of `row` whose lines hold `text`. */
const blockOf = (d: Drawn, row: string, text: string) =>
  d.blocks.find((b) => b.row === row && b.lines.some((line) => line.includes(text)))!;
const axeClean = async () => expect(await axeViolations(page)).toEqual([]);
const takeProblems = () => problems.splice(0);
/** What the page shows once it has caught up (a machine under load may take seconds to answer). */
const eventually = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 15_000, interval: 50 });
/** An expression evaluated in the page (a string: this project's types know no DOM). */
const inPage = <T>(expression: string) => page.evaluate(expression) as Promise<T>;
/** The lines of a block: its spans' texts. */
const lines = (locator: ReturnType<Page["locator"]>) => locator.locator("span").allTextContents();

describe("GET /board in a browser", () => {
  it("asks for credentials; a wrong key, then a key of a role that may not read the board, show the problem's title and detail", async () => {
    await page.goto(`${server!.baseUrl}/board?refresh=1`);
    await eventually(() => page.getByLabel("API key").isVisible()).toBe(true);
    expect(await page.locator("#board").isVisible()).toBe(false);
    await axeClean();

    await signIn(page, ORG, `fsk_${"x".repeat(40)}`);
    const alert = page.getByRole("alert");
    await eventually(() => alert.textContent()).toMatch(/^Authentication required .+/);
    expect(await page.getByLabel("API key").isVisible()).toBe(true);
    expect(await page.getByLabel("Organisation id").inputValue()).toBe(ORG);
    await axeClean();

    await signIn(page, ORG, keys.agent);
    await eventually(() => alert.textContent()).toMatch(/^Forbidden for this key's role .+/);
    expect(await page.getByLabel("API key").isVisible()).toBe(true);
    // The browser's own line for each refused request (the board's and the services'), and nothing else.
    const refused = takeProblems();
    for (const line of refused) expect(line).toMatch(/status of (401|403)/);
    expect(refused.join()).toMatch(/401[\s\S]*403/);
  });

  it("signed in with a read key: today in the org's zone, a line at now, the key in sessionStorage only", async () => {
    await signIn(page, ORG, keys.read);
    await eventually(() => page.locator("#date").inputValue()).toBe(today.toString());
    expect(await page.getByRole("alert").isVisible()).toBe(false);
    expect(await page.locator("#day").textContent()).toMatch(/\(today\)$/);
    expect(await page.locator(".now").count()).toBe(3);
    expect(await inPage("({ ...sessionStorage })")).toEqual({ "board.orgId": ORG, "board.apiKey": keys.read });
    expect(await inPage("localStorage.length")).toBe(0);
    expect(page.url()).toBe(`${server!.baseUrl}/board?refresh=1`);
  });

  it("a day's rows by name, each visit and hold in its row at its local time, duty and days off said; axe-clean", async () => {
    await page.locator("#date").fill(DAY);
    await eventually(() => page.locator("#day").textContent()).not.toMatch(/\(today\)/);
    await eventually(() => page.locator("#timeline h3").allTextContents()).toEqual(["Ana Ruiz", "bo Chen", "Cy Dale"]);
    expect(await row("Ana Ruiz").locator(".who p").textContent()).toBe("On duty 07:00–15:00");
    expect(await row("bo Chen").locator(".who p").textContent()).toBe("On duty 08:00–18:00");
    expect(await row("Cy Dale").locator(".who p").textContent()).toBe("Off duty");

    const d = await drawn();
    const ada = blockOf(d, "Ana Ruiz", "Ada Client");
    expect(ada.lines).toEqual(["09:00 Scheduled", "General pest control", "Ada Client", "10001"]);
    const held = blockOf(d, "Ana Ruiz", "Held");
    expect(held.lines.slice(0, 2)).toEqual(["11:00 Held", "General pest control"]);
    const done = blockOf(d, "bo Chen", "Done Client");
    expect(done.lines[0]).toBe("13:00 Completed");
    expect(d.blocks.map((b) => b.row).sort()).toEqual(["Ana Ruiz", "Ana Ruiz", "bo Chen"]);
    // Drawn where the axis says those local times are: a block from its start to its end.
    expect(Math.abs(ada.left - d.ticks["09:00"]!)).toBeLessThan(3);
    expect(Math.abs(held.left - d.ticks["11:00"]!)).toBeLessThan(3);
    expect(Math.abs(done.left - d.ticks["13:00"]!)).toBeLessThan(3);
    expect(Math.abs(ada.width - (d.ticks["10:00"]! - d.ticks["09:00"]!))).toBeLessThan(3);
    // The visits' 30-minute buffers (and the hold's), lighter, after them.
    expect(d.buffers).toEqual({ "Ana Ruiz": 2, "bo Chen": 1, "Cy Dale": 0 });
    await axeClean();
  });

  it("Next, Previous and Today, with the mouse and with the keyboard alone", async () => {
    await page.getByRole("button", { name: "Next" }).click();
    await eventually(() => page.locator("#date").inputValue()).toBe(NEXT_DAY);
    await eventually(() => lines(row("bo Chen").locator("li"))).toEqual([
      "08:00 Scheduled",
      "General pest control",
      "Tomorrow Client",
      "10001",
    ]);
    await page.getByRole("button", { name: "Previous" }).click();
    await eventually(() => page.locator("#date").inputValue()).toBe(DAY);

    // From the day's heading, Shift+Tab goes back through every control (the date input's fields one by
    // one), each with a visible focus ring; Tab comes forward to the timeline.
    await page.locator("#day").focus();
    const focused = () =>
      inPage<{ name: string; outline: string }>(`(() => {
        const e = document.activeElement;
        const name = e.id === "date" || e.id === "timeline" ? e.id : e.textContent.trim();
        return { name, outline: getComputedStyle(e).outlineStyle };
      })()`);
    const walk = async (key: string, last: string) => {
      const order: string[] = [];
      for (let i = 0; i < 12 && order.at(-1) !== last; i++) {
        await page.keyboard.press(key);
        const now = await focused();
        expect(now.outline, now.name).not.toBe("none");
        if (order.at(-1) !== now.name) order.push(now.name);
      }
      return order;
    };
    expect(await walk("Shift+Tab", "Previous")).toEqual(["Sign out", "date", "Next", "Today", "Previous"]);
    expect(await walk("Tab", "timeline")).toEqual(["Today", "Next", "date", "Sign out", "timeline"]);
    await page.getByRole("button", { name: "Next" }).focus();
    await page.keyboard.press("Enter");
    await eventually(() => page.locator("#date").inputValue()).toBe(NEXT_DAY);
    await page.getByRole("button", { name: "Today" }).focus();
    await page.keyboard.press("Space");
    await eventually(() => page.locator("#date").inputValue()).toBe(today.toString());
  });

  it("a booking made through the API appears without a reload", async () => {
    await page.locator("#date").fill(DAY);
    await eventually(() => page.locator("#timeline h3").count()).toBe(3);
    await inPage("window.kept = true");
    const booked = await request(
      server!.baseUrl,
      { orgId: ORG, apiKey: keys.office },
      "/api/v1/ai-agent/create-incident",
      {
        body: {
          dateTime: new Date(at(DAY, "15:00")).toISOString(),
          clientName: "Booked Live",
          insectName: "ants",
          postalCode: "10002",
        },
      },
    );
    expect(booked.status, booked.text).toBe(200);
    // Ana's hours end at 15:00 and Cy is off: bo Chen takes it.
    expect(booked.body.technicianId).toBe(BO);
    await eventually(async () => blockOf(await drawn(), "bo Chen", "Booked Live")?.lines).toEqual([
      "15:00 Scheduled",
      "General pest control",
      "Booked Live",
      "10002",
    ]);
    const d = await drawn();
    expect(Math.abs(blockOf(d, "bo Chen", "Booked Live").left - d.ticks["15:00"]!)).toBeLessThan(3);
    expect(await inPage("window.kept")).toBe(true);
  });

  it("?date= opens on that date; a reload in the same tab asks for no key again", async () => {
    await page.goto(`${server!.baseUrl}/board?date=${NEXT_DAY}&refresh=1`);
    await eventually(() => page.locator("#date").inputValue()).toBe(NEXT_DAY);
    expect(await page.getByLabel("API key").isVisible()).toBe(false);
    await eventually(async () => blockOf(await drawn(), "bo Chen", "Tomorrow Client")?.lines[0]).toBe(
      "08:00 Scheduled",
    );
  });

  it("the key never went into a URL or localStorage; no console error; signing out forgets it", async () => {
    for (const key of Object.values(keys)) expect(requested.filter((url) => url.includes(key))).toEqual([]);
    expect(requested.some((url) => url.includes("/api/v1/board"))).toBe(true);
    expect(await inPage("JSON.stringify({ ...localStorage })")).toBe("{}");
    expect(takeProblems()).toEqual([]);
    await page.getByRole("button", { name: "Sign out" }).click();
    expect(await inPage("({ ...sessionStorage })")).toEqual({});
    expect(await page.getByLabel("Organisation id").isVisible()).toBe(true);
  });
});
