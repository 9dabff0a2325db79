// Deciding plans' due visits (docs/api.md, "Plans"): every Cron Trigger, and
// just after create-plan answers, each visit due within the look-ahead (14
// days, or the org's horizon when shorter) is decided once — booked where
// placeDueVisit (src/scheduling/plans.ts) says, or recorded unplaced. The
// reads of one decision are the plan's occupancy around its due date; the
// write is one batch that applies only while the plan is still at that
// visit (src/db/plan-visits.ts), so overlapping runs decide each visit once,
// and a run cut off leaves each visit decided or not, never half.
import { readCatalogue } from "../db/catalogue";
import type { Db } from "../db/client";
import type { RecordedEvent } from "../db/events";
import { occupantsOf } from "../db/occupancy";
import type { Org } from "../db/orgs";
import { bookDueVisit, type Decision, deferPlan, duePlans, recordUnplaced } from "../db/plan-visits";
import { getPlan, type PlanRow } from "../db/plans";
import { decidable, decideAtOf, dueWindow, placeDueVisit } from "../scheduling/plans";
import type { Catalogue } from "../scheduling/visits";
import { normalisePostalCode, visitOf } from "../scheduling/visits";

/**
 * The most visits one run decides. Each costs about three D1 round trips
 * (the occupancy around its due date, its batch, and its org's catalogue
 * once per run), so a run stays near 150 round trips — well inside a Worker
 * invocation's D1 query limit — and its wall time short enough that the
 * runs a minute apart seldom overlap; 50 a minute is 72,000 a day, more than
 * plans whose visits come at most weekly ever ask. What a run leaves, the
 * next takes up, soonest due first.
 */
export const VISITS_PER_RUN = 50;

/** How many times one visit is decided again after losing its place to a racing booking, within one run. */
const ATTEMPTS = 3;

export interface DecideOptions {
  /** That plan only (create-plan's look after its answer). */
  planId?: string;
  limit?: number;
  /** Sends a recorded event to the webhook queue (else the minute's sweep does, within a minute). */
  enqueue?: (event: RecordedEvent) => Promise<void>;
}

/** Decides the visits due at `now`, at most `limit`: how many were booked or recorded unplaced. */
export async function decideDueVisits(db: Db, now: number, options: DecideOptions = {}): Promise<number> {
  const { planId, limit = VISITS_PER_RUN, enqueue } = options;
  const due = await duePlans(db, now, limit, planId);
  const catalogues = new Map<string, Promise<Catalogue>>();
  let decided = 0;
  for (const { plan: first, org: bare } of due) {
    if (decided >= limit) break;
    const catalogue = catalogues.get(bare.id) ?? readCatalogue(db, bare.id);
    catalogues.set(bare.id, catalogue);
    const org: Org = { ...bare, catalogue: await catalogue };
    let plan: PlanRow | undefined = first;
    let attempts = 0;
    while (plan?.status === "active" && plan.nextDueDate !== null && decided < limit) {
      if (!decidable(plan.nextDueDate, org.schedule, now)) {
        // Read as due by a look-ahead longer than the org's horizon now allows: later, then.
        if (plan.decideAt !== null && plan.decideAt <= now)
          await deferPlan(db, plan, decideAtOf(plan.nextDueDate, org.schedule));
        break;
      }
      if (attempts++ >= ATTEMPTS) break;
      const outcome = await decideVisit(db, org, plan, now);
      if (outcome) {
        decided++;
        attempts = 0;
        plan = outcome.plan;
        if (outcome.event && outcome.event.endpoints.length > 0) await enqueue?.(outcome.event).catch(() => {});
      } else {
        // Another run decided it first (the plan moved on), or a racing booking took the place: read and go on.
        plan = await getPlan(db, org.id, plan.id);
      }
    }
  }
  return decided;
}

/** Decides the plan's next visit: where placeDueVisit puts it among the visits and holds around its due date, or unplaced. */
async function decideVisit(db: Db, org: Org, plan: PlanRow, now: number) {
  const { schedule, catalogue } = org;
  const dueDate = plan.nextDueDate!;
  // The plan's service as booked; one no longer active offers no start (as available-appointments would refuse it).
  const service = plan.serviceId === null ? null : catalogue.services.find((s) => s.id === plan.serviceId && s.active);
  const request = {
    schedule,
    visit: visitOf(schedule, service ?? null),
    technicians: catalogue.technicians,
    postalCode: plan.postalCode === null ? null : normalisePostalCode(plan.postalCode),
  };
  const decision: Decision = { org, plan, request, now };
  if (service === undefined) return recordUnplaced(db, decision);
  const window = dueWindow(dueDate, schedule.timeZone);
  const span = request.visit.durationMs + request.visit.bufferMs;
  const { visits, held } = await occupantsOf(db, { org, now }, { start: window.start, end: window.end + span });
  const placement = placeDueVisit({
    request,
    technicianId: plan.technicianId,
    dueDate,
    localTime: plan.localTime,
    now,
    visits,
    held,
    maxBookingMs: org.maxBookingMs,
  });
  return placement ? bookDueVisit(db, decision, placement) : recordUnplaced(db, decision);
}
