// The served document and docs page, and real responses checked against the
// documented response schemas (strictly: an undocumented field fails).
import { beforeAll, describe, expect, it } from "vitest";
import { health, incidentNotChangeable, problem, slotUnavailable } from "../../../src/openapi/problems";
import { account } from "../../../src/schemas/accounts";
import { availableAppointments, bookingCheck, caller } from "../../../src/schemas/ai-agent";
import { contact, contactPage } from "../../../src/schemas/contacts";
import { bookedIncident, incident, incidentPage } from "../../../src/schemas/incidents";
import { lead } from "../../../src/schemas/leads";
import { bookIncident } from "../../support/incidents";
import { call } from "../../support/request";
import { strict } from "../../support/strict";
import { addAccount, openTenant, type Tenant } from "../../support/tenants";
import { slotAt } from "../../support/time";

let t: Tenant;
const slotTime = slotAt(2, 15);

beforeAll(async () => {
  t = await openTenant();
});

describe("GET /api/v1/openapi.json and /docs", () => {
  it("serves the document without credentials", async () => {
    const res = await call(null, "/api/v1/openapi.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(res.body.openapi).toBe("3.1.0");
  });

  it("renders a page naming every operation, without scripts", async () => {
    const res = await call(null, "/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^text\/html/);
    const text = res.text;
    for (const path of [
      "/api/v1/leads",
      "/api/v1/contacts",
      "/api/v1/accounts/{id}",
      "/api/v1/ai-agent/create-incident",
      "/api/v1/ai-agent/find-caller",
      "/api/v1/incidents",
      "/api/v1/incidents/{id}",
      "/api/v1/incidents/{id}/cancel",
      "/api/v1/incidents/{id}/reschedule",
    ])
      expect(text).toContain(path);
    expect(text).not.toMatch(/<script/i);
  });
});

describe("responses match the documented schemas", () => {
  it.each([
    ["lead", lead, () => call(t, "/api/v1/leads", { body: { firstName: "A", estimatedCloseDate: "2026-12-01" } })],
    ["contact", contact, () => call(t, "/api/v1/contacts", { body: { firstName: "A" } })],
    ["contact page", contactPage, () => call(t, "/api/v1/contacts?limit=1")],
    ["account", account, async () => call(t, `/api/v1/accounts/${(await addAccount(t, "Doc Co")).id}`)],
    [
      "appointments",
      availableAppointments,
      () => call(t, "/api/v1/ai-agent/available-appointments", { body: { dateTime: slotTime, limit: 2 } }),
    ],
    [
      "booking check",
      bookingCheck,
      () => call(t, "/api/v1/ai-agent/is-booking-available", { body: { dateTime: slotTime } }),
    ],
    [
      "booked incident",
      bookedIncident,
      () =>
        call(t, "/api/v1/ai-agent/create-incident", {
          body: { dateTime: slotTime, clientName: "Doc Co", insectName: "Ants", phone: "917 555 0134" },
        }),
    ],
    ["incident", incident, async () => call(t, `/api/v1/incidents/${(await bookIncident(t)).id}`)],
    ["incident page", incidentPage, () => call(t, "/api/v1/incidents?limit=1")],
    [
      "cancelled incident",
      incident,
      async () => call(t, `/api/v1/incidents/${(await bookIncident(t)).id}/cancel`, { body: { reason: "gone" } }),
    ],
    ["caller", caller, () => call(t, "/api/v1/ai-agent/find-caller", { body: { phone: "917 555 0134" } })],
    [
      "incident not changeable",
      incidentNotChangeable,
      async () => {
        const { id } = await bookIncident(t);
        await call(t, `/api/v1/incidents/${id}/cancel`, { body: {} });
        return call(t, `/api/v1/incidents/${id}/reschedule`, { body: { dateTime: slotTime } });
      },
    ],
    [
      "slot unavailable",
      slotUnavailable,
      () =>
        call(t, "/api/v1/ai-agent/create-incident", {
          body: { dateTime: "2020-01-01T00:00:00Z", clientName: "X", insectName: "Y" },
        }),
    ],
    ["problem", problem, () => call(t, "/api/v1/leads", { body: { email: "bad" } })],
    ["health", health, () => call(null, "/health")],
  ] as const)("%s", async (_name, schema, request) => {
    const res = await request();
    const result = strict(schema()).safeParse(res.body);
    expect(result.error?.issues ?? []).toEqual([]);
  });
});
