// The dispatch board's script, served as /board.js (src/board/routes.ts): plain
// JavaScript for the browser (no build step), held to its behaviour by
// test/e2e/board.e2e.test.ts. It asks once per tab for the org id and a key
// (sessionStorage only), draws GET /api/v1/board of a local date as a timeline
// in the org's zone (by the browser's Intl), and reloads the day every 30 s
// (`?refresh=N` seconds, for tests). `?date=YYYY-MM-DD` opens on that date
// (`npm run dev` prints the demo's). A refused key shows the problem's title
// and detail.
(() => {
"use strict";
const ORG = "board.orgId";
const KEY = "board.apiKey";
const DAY_MS = 86400000;
const query = new URLSearchParams(location.search);
const asked = Number(query.get("refresh"));
const EVERY = asked >= 1 && asked <= 300 ? asked * 1000 : 30000;
const $ = (id) => document.getElementById(id);
let date = /^\d{4}-\d{2}-\d{2}$/.test(query.get("date")) ? query.get("date") : null;
let shown = null;
let timer = 0;
let seq = 0;

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text != null) e.textContent = text;
  return e;
}

function saved() {
  const org = sessionStorage.getItem(ORG);
  const key = sessionStorage.getItem(KEY);
  return org && key ? { org, key } : null;
}

function showProblem(title, detail) {
  const box = $("problem");
  box.replaceChildren(el("strong", "", title));
  if (detail) box.append(" ", detail);
  box.hidden = false;
}

function clearProblem() {
  $("problem").hidden = true;
  $("problem").replaceChildren();
}

function askCredentials() {
  clearTimeout(timer);
  seq++;
  sessionStorage.removeItem(KEY);
  $("board").hidden = true;
  $("sign-in").hidden = false;
  $("org-id").value = sessionStorage.getItem(ORG) || $("org-id").value;
  $("api-key").value = "";
  ($("org-id").value ? $("api-key") : $("org-id")).focus();
}

async function get(path, who) {
  const res = await fetch(path, { headers: { "X-API-KEY": who.key, "X-ORG-ID": who.org }, cache: "no-store" });
  let body = null;
  try {
    body = await res.json();
  } catch {}
  return { status: res.status, body: body || {} };
}

async function load() {
  const who = saved();
  if (!who) return askCredentials();
  clearTimeout(timer);
  const mine = ++seq;
  let board;
  let services;
  try {
    [board, services] = await Promise.all([
      get("/api/v1/board" + (date ? "?date=" + date : ""), who),
      get("/api/v1/services", who),
    ]);
  } catch {
    if (mine !== seq) return;
    showProblem("The board could not be reached.", "It tries again shortly.");
    timer = setTimeout(load, EVERY);
    return;
  }
  if (mine !== seq) return;
  if (board.status === 401 || board.status === 403) {
    askCredentials();
    showProblem(board.body.title || "Refused", board.body.detail || "");
    return;
  }
  if (board.status !== 200) {
    showProblem(board.body.title || "The board could not be loaded (" + board.status + ").", board.body.detail || "");
  } else {
    clearProblem();
    draw(board.body, new Map((services.body.services || []).map((s) => [s.id, s])));
  }
  timer = setTimeout(load, EVERY);
}

const zones = new Map();
/** The local date and minutes after local midnight of an instant in the org's zone. */
function local(instant, timeZone) {
  let f = zones.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-CA", {
      timeZone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit",
    });
    zones.set(timeZone, f);
  }
  const p = {};
  for (const { type, value } of f.formatToParts(instant)) p[type] = value;
  return { date: p.year + "-" + p.month + "-" + p.day, minutes: Number(p.hour) * 60 + Number(p.minute) };
}

const pad = (n) => String(n).padStart(2, "0");
const hhmm = (m) => pad(Math.floor(m / 60)) + ":" + pad(m % 60);
const addDays = (d, n) => new Date(Date.parse(d + "T00:00:00Z") + n * DAY_MS).toISOString().slice(0, 10);
const STATUS = { scheduled: "Scheduled", completed: "Completed", no_show: "No show", cancelled: "Cancelled" };
const statusText = (s) => STATUS[s] || s.charAt(0).toUpperCase() + s.slice(1).replace(/_/g, " ");

function draw(b, services) {
  shown = b.date;
  $("date").value = b.date;
  const now = Date.now();
  const today = local(now, b.timeZone).date === b.date;
  const title = new Intl.DateTimeFormat(undefined, { timeZone: "UTC", dateStyle: "full" }).format(Date.parse(b.date + "T00:00:00Z"));
  $("day").textContent = title + (today ? " (today)" : "");
  $("updated").textContent = "Times in " + b.timeZone + ". Updated at " + hhmm(local(now, b.timeZone).minutes) + ".";
  // Minutes after the day's local midnight: 0 before the day, 1440 after it.
  const at = (iso, extra) => {
    const t = local(Date.parse(iso) + (extra || 0), b.timeZone);
    return t.date < b.date ? 0 : t.date > b.date ? 1440 : t.minutes;
  };
  const bufferOf = (serviceId) => ((services.get(serviceId) || {}).bufferMinutes || 0) * 60000;
  // The hours that hold something and one more each side (08:00–18:00 when nothing), eight at least.
  let from = 1440;
  let to = 0;
  for (const r of b.rows) {
    for (const s of [...r.duty, ...r.visits.map((v) => v.appointment), ...r.holds]) {
      from = Math.min(from, at(s.start));
      to = Math.max(to, at(s.end));
    }
  }
  if (from >= to) [from, to] = [480, 1080];
  from = Math.max(0, Math.floor(from / 60) * 60 - 60);
  to = Math.min(1440, Math.max(Math.ceil(to / 60) * 60 + 60, from + 480));
  from = Math.max(0, Math.min(from, to - 480));
  const left = (m) => ((Math.min(Math.max(m, from), to) - from) / (to - from)) * 100 + "%";
  const place = (e, a, z) => {
    e.style.left = left(a);
    e.style.width = "calc(" + left(z) + " - " + left(a) + ")";
  };
  const timeline = $("timeline");
  timeline.replaceChildren();
  const axis = el("div", "row");
  axis.setAttribute("aria-hidden", "true");
  const ticks = el("div", "track ticks");
  for (let m = from; m < to; m += 60) {
    const tick = el("span", "tick", hhmm(m % 1440));
    tick.style.left = left(m);
    ticks.append(tick);
  }
  axis.append(el("div", "who"), ticks);
  timeline.append(axis);
  const crews = b.rows.length === 1 && !b.rows[0].technician;
  for (const r of b.rows) {
    const name = r.technician ? r.technician.name : crews ? "Crews" : "Unassigned";
    const row = el("section", "row");
    const who = el("div", "who");
    const hours = r.duty.map((d) => hhmm(at(d.start)) + "–" + hhmm(at(d.end))).join(", ");
    who.append(el("h3", "", name), el("p", "", hours ? "On duty " + hours : r.technician || crews ? "Off duty" : "No one"));
    const track = el("div", "track");
    for (const d of r.duty) {
      const shade = el("div", "duty");
      place(shade, at(d.start), at(d.end));
      track.append(shade);
    }
    const items = [
      ...r.visits.map((v) => ({ v, start: v.appointment.start, end: v.appointment.end, serviceId: v.serviceId })),
      ...r.holds.map((h) => ({ h, start: h.start, end: h.end, serviceId: h.serviceId })),
    ].sort((x, y) => (x.start < y.start ? -1 : x.start > y.start ? 1 : 0));
    // Lanes, so that visits at the same time (crews) are drawn one under another.
    const lanes = [];
    const list = el("ul", "items");
    list.setAttribute("aria-label", name + ": " + r.visits.length + " visits, " + r.holds.length + " held");
    for (const item of items) {
      const a = at(item.start);
      const z = at(item.end);
      const zz = at(item.end, bufferOf(item.serviceId));
      let lane = lanes.findIndex((end) => end <= a);
      if (lane < 0) lane = lanes.push(zz) - 1;
      else lanes[lane] = zz;
      const service = services.get(item.serviceId);
      const li = el("li", "item " + (item.v ? item.v.status : "held"));
      const when = el("span", "when", hhmm(a) + " " + (item.v ? statusText(item.v.status) : "Held"));
      li.append(when, el("span", "", service ? service.name : item.v ? item.v.insectName : "Visit"));
      if (item.v) {
        li.append(el("span", "", item.v.clientName));
        if (item.v.postalCode) li.append(el("span", "", item.v.postalCode));
      } else li.append(el("span", "", "until " + hhmm(local(Date.parse(item.h.expiresAt), b.timeZone).minutes)));
      li.title = [...li.children].map((span) => span.textContent).join(" · ");
      place(li, a, z);
      li.style.top = lane * 4.8 + "rem";
      list.append(li);
      if (zz > z) {
        const buffer = el("div", "buffer");
        place(buffer, z, zz);
        buffer.style.top = lane * 4.8 + "rem";
        track.append(buffer);
      }
    }
    track.style.height = Math.max(1, lanes.length) * 4.8 + 0.4 + "rem";
    track.append(list);
    if (today) {
      const line = el("div", "now");
      line.style.left = left(local(now, b.timeZone).minutes);
      line.title = "Now";
      track.append(line);
    }
    row.append(who, track);
    timeline.append(row);
  }
}

function go(next) {
  date = next;
  $("updated").textContent = "Loading…";
  load();
}

document.addEventListener("DOMContentLoaded", () => {
  $("sign-in").addEventListener("submit", (event) => {
    event.preventDefault();
    const org = $("org-id").value.trim();
    const key = $("api-key").value.trim();
    if (!org || !key) return;
    sessionStorage.setItem(ORG, org);
    sessionStorage.setItem(KEY, key);
    $("api-key").value = "";
    $("sign-in").hidden = true;
    $("board").hidden = false;
    clearProblem();
    load().then(() => $("board").hidden || $("day").focus());
  });
  $("previous").addEventListener("click", () => shown && go(addDays(shown, -1)));
  $("next").addEventListener("click", () => shown && go(addDays(shown, 1)));
  $("today").addEventListener("click", () => go(null));
  $("date").addEventListener("change", () => /^\d{4}-\d{2}-\d{2}$/.test($("date").value) && go($("date").value));
  $("sign-out").addEventListener("click", () => {
    sessionStorage.removeItem(ORG);
    askCredentials();
  });
  if (saved()) {
    $("board").hidden = false;
    load();
  } else askCredentials();
});
})();
