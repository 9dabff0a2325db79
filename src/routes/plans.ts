// Service plans (docs/api.md, "Plans"): create-plan books the first visit as
// create-incident does, in the batch that stores the plan; the next visits
// are decided after the answer (waitUntil) and by the cron
// (src/availability/due-visits.ts). Read, list and cancel are bound to the
// caller for agent keys, as the incident operations are.

import { decideDueVisits } from "../availability/due-visits";
import { zoneTable } from "../db/local-times";
import { cancelPlanInOneTrip } from "../db/plan-cancel";
import { cancelPlan, createPlan, getPlan, listPlans, planView, planWithFutureVisits } from "../db/plans";
import { boundCaller, callerMismatch } from "../http/caller";
import { decodeCursor, encodeCursor } from "../http/cursor";
import { defineOperation } from "../http/operation";
import { ApiError } from "../http/problem";
import { e164OrFail } from "../http/validate";
import { writtenResponse } from "../http/written";
import {
  cancelPlanBody,
  createdPlan,
  createPlanBody,
  listPlansQuery,
  plan,
  planIdParam,
  planPage,
} from "../schemas/plans";
import { enqueueEvent } from "../webhooks/queue";
import { bookOrRefuse } from "./ai-agent";

/** How many times a cancel is decided again when the plan or its visits keep changing first. */
const CHANGE_ATTEMPTS = 5;

const notFound = () => new ApiError("plan_not_found", "No plan with this id");

export const planOperations = [
  defineOperation({
    operationId: "createPlan",
    tool: "create_plan",
    method: "post",
    path: "/api/v1/ai-agent/create-plan",
    tag: "ai-agent",
    effect: "create",
    roles: ["office", "agent"],
    summary: "Put a caller on regular service: a plan, and its first visit booked",
    description:
      "Takes everything create-incident takes (the first visit's `dateTime`, `clientName`, `insectName`, …, `holdId`) plus `every` (`count` 1–12 of `week` or `month`) and optional `visits` (2–52 in all; absent: until cancelled). The first visit is booked exactly as create-incident books it (409 slot_unavailable, holds, holdExpired), in the same batch as the plan: both or neither. Each next visit is due on the first visit's local date plus k × every, at its local time, and is booked by the service itself once it is within 14 days (the same technician when free, else the nearest bookable start within 3 days), or reported as plan.visit_unplaced.",
    body: createPlanBody,
    response: createdPlan,
    errors: ["slot_unavailable"],
    handler: async (c, { body: { every, visits, ...visit } }) => {
      const db = c.get("db");
      let due: string | undefined;
      const response = await bookOrRefuse(c, visit, async (request) => {
        const created = await createPlan(db, { ...request, every, visits });
        if (created.written && created.decideAt !== null && created.decideAt <= request.now) due = created.planId;
        return created;
      });
      // After the answer, and only when its next visit is due within the look-ahead already (a
      // weekly plan's second): the answer itself stays one round trip.
      if (due !== undefined) {
        const id = due;
        c.executionCtx.waitUntil(
          decideDueVisits(db, Date.now(), {
            planId: id,
            enqueue: (event) => enqueueEvent(c.env, db, event, Date.now()),
          }).catch((error) =>
            console.error(
              JSON.stringify({ plan: "deciding after create-plan failed", planId: id, error: String(error) }),
            ),
          ),
        );
      }
      return response;
    },
  }),
  defineOperation({
    operationId: "getPlan",
    tool: "get_plan",
    method: "get",
    path: "/api/v1/plans/{id}",
    tag: "Plans",
    effect: "read",
    roles: ["office", "agent", "read"],
    summary: "Get a plan",
    description:
      "One plan of your organisation: how often, how many visits, the technician and local time its visits keep, the visits decided so far and the next one's due date. An unknown or another organisation's id is 404 plan_not_found.",
    params: planIdParam,
    response: plan,
    errors: ["plan_not_found", "caller_unknown"],
    handler: async (c, { params }) => {
      const { db, org } = c.var;
      const row = await getPlan(db, org.id, params.id, boundCaller(c));
      if (!row) throw notFound();
      return c.json(planView(row), 200);
    },
  }),
  defineOperation({
    operationId: "listPlans",
    tool: "list_plans",
    method: "get",
    path: "/api/v1/plans",
    tag: "Plans",
    effect: "read",
    roles: ["office", "agent", "read"],
    summary: "List plans",
    description:
      "Plans newest first, read by keyset: pass `nextCursor` as `cursor` for the next page (null on the last). Filters: status, phone (any spelling), accountId.",
    query: listPlansQuery,
    response: planPage,
    errors: ["caller_mismatch", "caller_unknown"],
    handler: async (c, { query }) => {
      const { limit, cursor, phone, ...rest } = query;
      const { db, org } = c.var;
      const filters = { ...rest, ...(phone === undefined ? {} : { phone: e164OrFail(phone, org.country) }) };
      const caller = boundCaller(c);
      if (caller !== undefined && filters.phone !== undefined && filters.phone !== caller) throw callerMismatch();
      const scope = {
        secret: org.cursorSecret,
        filters: ["plans", filters.status ?? null, filters.phone ?? null, filters.accountId ?? null, caller ?? null],
      };
      const after = cursor === undefined ? undefined : await decodeCursor(cursor, scope);
      const page = await listPlans(db, { orgId: org.id, filters, caller, after, limit });
      const last = page.rows.at(-1);
      return c.json(
        {
          data: page.rows.map(planView),
          hasMore: page.hasMore,
          nextCursor: page.hasMore && last ? await encodeCursor({ at: last.createdAt, id: last.id }, scope) : null,
        },
        200,
      );
    },
  }),
  defineOperation({
    operationId: "cancelPlan",
    tool: "cancel_plan",
    method: "post",
    path: "/api/v1/plans/{id}/cancel",
    tag: "Plans",
    effect: "change",
    roles: ["office", "agent"],
    summary: "Cancel a plan, and its visits not started",
    description:
      "The plan becomes `cancelled` and books nothing more; with `cancelVisits` (the default) its scheduled visits that have not started are cancelled too, in the same change, each with its incident.cancelled event. Cancelling a cancelled plan is 200 unchanged; a completed plan can be cancelled.",
    params: planIdParam,
    body: cancelPlanBody,
    response: plan,
    errors: ["plan_not_found", "caller_unknown"],
    handler: async (c, { params, body: { reason, cancelVisits } }) => {
      const { db, org, idempotencyKey, actor } = c.var;
      const caller = boundCaller(c);
      // First in one round trip; a plan the batch cannot cancel alone is read, then cancelled.
      const start = Date.now();
      const offsets = zoneTable(org.schedule, start, 0);
      const first = await cancelPlanInOneTrip(db, {
        orgId: org.id,
        id: params.id,
        caller,
        reason,
        cancelVisits,
        now: start,
        offsets,
        idempotencyKey,
        actor,
      });
      if (first.written) return writtenResponse(c, first.written);
      if (!first.current) throw notFound();
      if (first.current.status === "cancelled") return c.json(planView(first.current), 200);
      for (let attempt = 1; attempt <= CHANGE_ATTEMPTS; attempt++) {
        const now = Date.now();
        const { plan: seen, visits } = await planWithFutureVisits(db, org.id, params.id, now, caller);
        if (!seen) throw notFound();
        if (seen.status === "cancelled") return c.json(planView(seen), 200);
        const written = await cancelPlan(db, {
          org,
          seen,
          visits: cancelVisits ? visits : [],
          reason,
          cancelVisits,
          now,
          idempotencyKey,
          actor,
        });
        if (written) return writtenResponse(c, written);
      }
      throw new ApiError("unavailable", "The plan is changing too often; retry shortly", {
        headers: { "Retry-After": "1" },
      });
    },
  }),
];
