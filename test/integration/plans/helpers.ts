// Shared by the plan tests (docs/api.md, "Plans"): calls to the plan
// operations, the org's events and visits, and the cron run at a chosen now.
import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { asc, eq } from "drizzle-orm";
import { expect } from "vitest";
import { events, incidents } from "../../../drizzle/schema";
import type { Bindings as WorkerBindings } from "../../../src/env";
import worker from "../../../src/index";
import type { ReadResponse } from "../../support/http";
import { call } from "../../support/request";
import { db, type Tenant } from "../../support/tenants";
import { iso } from "../../support/time";

export const CREATE_PLAN = "/api/v1/ai-agent/create-plan";
export const PLANS = "/api/v1/plans";

export interface PlanView {
  id: string;
  status: "active" | "completed" | "cancelled";
  every: { count: number; unit: "week" | "month" };
  visits: number | null;
  technicianId: string | null;
  localTime: string;
  firstVisitDate: string;
  nextDueDate: string | null;
  visitsMade: number;
  phone: string | null;
  accountId: string | null;
  updatedAt: string;
  [key: string]: unknown;
}

export const planBody = (at: number, extra: Record<string, unknown> = {}) => ({
  dateTime: iso(at),
  clientName: "Pat Planner",
  insectName: "ants",
  phone: "+19175550111",
  every: { count: 1, unit: "week" },
  ...extra,
});

/** create-plan's raw answer. */
export const createPlanCall = (t: Tenant, body: Record<string, unknown>, headers?: Record<string, string>) =>
  call(t, CREATE_PLAN, { body, headers });

/** Creates a plan (the visits already due decided after the answer, as the app's waitUntil does); fails unless 200. */
export async function createPlan(t: Tenant, at: number, extra: Record<string, unknown> = {}) {
  const res = await createPlanCall(t, planBody(at, extra));
  expect(res.status, res.text).toBe(200);
  return res.body as {
    plan: PlanView;
    incident: Record<string, unknown> & { id: string; technicianId: string | null };
  };
}

export async function getPlan(t: Tenant, id: string): Promise<PlanView> {
  const res = await call(t, `${PLANS}/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

export const cancelPlanCall = (t: Tenant, id: string, body: Record<string, unknown> = {}): Promise<ReadResponse> =>
  call(t, `${PLANS}/${id}/cancel`, { body });

/** The plan's visits as stored, by start. */
export const visitsOf = (planId: string) =>
  db().select().from(incidents).where(eq(incidents.planId, planId)).orderBy(asc(incidents.startsAt));

/** The org's events as stored, in commit order. */
export async function eventsOf(t: Tenant) {
  const rows = await db().select().from(events).where(eq(events.orgId, t.orgId)).orderBy(asc(events.seq));
  return rows.map((row) => JSON.parse(row.body) as { type: string; data: Record<string, unknown>; actor: unknown });
}

/** Runs the worker's Cron Trigger (the minute's) as the runtime would, at `now`, and waits for its work. */
export async function runCron(now = Date.now(), cron = "* * * * *") {
  const controller = createScheduledController({ scheduledTime: now, cron });
  const ctx = createExecutionContext();
  await worker.scheduled!(controller, env as unknown as WorkerBindings, ctx);
  await waitOnExecutionContext(ctx);
}
