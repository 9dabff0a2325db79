// The holds of the benchmark's hold cases (docs/api.md, "Holding a slot"). An
// org keeps at most 100 live holds, so the holds go to the seeded hold orgs
// in turn, each org walking the slots in order: hold-slot's are released after
// each run, and create-incident books on holds made before its run.

import type { SlotTimes } from "../../src/scheduling/slots";
import { credentialsOf } from "../support/http";
import type { BenchOrg } from "./seed";

interface Held {
  org: BenchOrg;
  holdId: string;
  start: number;
}

/** A request of a hold case: its path, its body, and the org it is sent as. */
export interface HoldRequest {
  path: string;
  body: unknown;
  org: BenchOrg;
}

export class Holds {
  /** Holds made for create-incident to book on, oldest first. */
  private pool: Held[] = [];
  /** Holds hold-slot made in its run, to release. */
  private made: Held[] = [];
  private turn = 0;

  constructor(
    private readonly baseUrl: string,
    private readonly orgs: BenchOrg[],
    private readonly slots: SlotTimes[],
    private readonly connections: number,
  ) {}

  /** The next hold-slot request: the next org, at its next slot. */
  hold(minutes = 5): HoldRequest {
    const k = this.turn++;
    const start = this.slots[Math.floor(k / this.orgs.length) % this.slots.length]!.start;
    return {
      path: "/api/v1/ai-agent/hold-slot",
      body: { dateTime: new Date(start).toISOString(), holdMinutes: minutes },
      org: this.orgs[k % this.orgs.length]!,
    };
  }

  /** Keeps a hold-slot answer's hold, to release after the run. */
  held(org: BenchOrg, text: string) {
    const { holdId, slot } = JSON.parse(text) as { holdId?: string; slot?: { start: string } };
    if (holdId && slot) this.made.push({ org, holdId, start: Date.parse(slot.start) });
  }

  /** Releases every hold hold-slot made (so that no org reaches its 100). */
  async releaseMade() {
    const made = this.made.splice(0);
    await this.inParallel(made.length, async (i) => {
      const { org, holdId } = made[i]!;
      await this.send("/api/v1/ai-agent/release-hold", org, { holdId });
    });
  }

  /** Makes holds (15 minutes each) until `count` wait to be booked on. */
  async fill(count: number) {
    await this.inParallel(count - this.pool.length, async () => {
      const { path, body, org } = this.hold(15);
      const { holdId, slot } = (await this.send(path, org, body)) as { holdId: string; slot: { start: string } };
      this.pool.push({ org, holdId, start: Date.parse(slot.start) });
    });
  }

  /**
   * create-incident on the oldest waiting hold, for its visit. With none left,
   * on a hold that does not exist: a 422, which fails the run (fill more).
   */
  book(): HoldRequest {
    const held = this.pool.shift() ?? { org: this.orgs[0]!, holdId: "hold_none_left", start: this.slots[0]!.start };
    const body = {
      dateTime: new Date(held.start).toISOString(),
      clientName: "Bench Client",
      insectName: "Ants",
      holdId: held.holdId,
    };
    return { path: "/api/v1/ai-agent/create-incident", body, org: held.org };
  }

  private async send(path: string, org: BenchOrg, body: unknown): Promise<unknown> {
    const response = await fetch(this.baseUrl + path, {
      method: "POST",
      headers: { ...credentialsOf(org), "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
    return response.json();
  }

  /** Runs task(0 … count - 1), `connections` at a time. */
  private async inParallel(count: number, task: (i: number) => Promise<void>) {
    let next = 0;
    const worker = async () => {
      while (next < count) await task(next++);
    };
    await Promise.all(Array.from({ length: this.connections }, worker));
  }
}
