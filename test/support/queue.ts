// A stand-in for the webhook delivery queue (the WEBHOOKS binding): it records
// each batch the app sends, or fails every send.
import { expect } from "vitest";
import type { DeliveryMessage } from "../../src/webhooks/queue";

export function fakeQueue({ failing = false } = {}) {
  const sends: DeliveryMessage[][] = [];
  const queue = {
    send: () => Promise.reject(new Error("the app sends in batches only")),
    sendBatch: async (messages: Iterable<MessageSendRequest<DeliveryMessage>>) => {
      const batch = [...messages];
      sends.push(batch.map((m) => m.body));
      if (failing) throw new Error("Queue sendBatch failed: fake outage");
      for (const m of batch) expect(m.contentType).toBe("json");
    },
  } as unknown as Queue<DeliveryMessage>;
  /** Every message sent so far, in order; `clear` forgets them. */
  return { queue, sends, messages: () => sends.flat(), clear: () => void sends.splice(0) };
}
