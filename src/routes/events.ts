// The events list (docs/api.md, "Events"): commit order, and a cursor that is never
// null, so a poller keeps the last one and calls again with it later.
import { listEvents } from "../db/events";
import { decodeCursor, encodeCursor } from "../http/cursor";
import { defineOperation } from "../http/operation";
import { eventPage, listEventsQuery } from "../schemas/events";

/** The position before the first event (seq 0); cursors carry an id, which the events list does not use. */
const START = { at: 0, id: "evt_00000000000000000000000000" };

export const eventOperations = [
  defineOperation({
    operationId: "listEvents",
    tool: "list_events",
    method: "get",
    path: "/api/v1/events",
    tag: "Events",
    effect: "read",
    roles: ["office", "read"],
    summary: "List events",
    description:
      "Every change (lead.created, contact.created, incident.created, incident.rescheduled, incident.cancelled), oldest first in commit order, kept 30 days. `nextCursor` is never null: at the end it points after the last event, so poll again later with it and no event is ever missed. Filter: type. The same events are pushed as signed webhooks to the endpoints the admin CLI adds.",
    query: listEventsQuery,
    response: eventPage,
    handler: async (c, { query }) => {
      const { limit, cursor, type } = query;
      const { db, orgId, org } = c.var;
      const scope = { secret: org.cursorSecret, filters: ["events", type ?? null] };
      const after = cursor === undefined ? START : await decodeCursor(cursor, scope);
      const page = await listEvents(db, { orgId, type, after: after.at, limit });
      const last = page.rows.at(-1);
      const position = last ? { at: last.seq, id: last.id } : after;
      // The stored bodies are JSON already: spliced in, not parsed and serialised again.
      const body = `{"data":[${page.rows.map((row) => row.body).join(",")}],"hasMore":${page.hasMore},"nextCursor":${JSON.stringify(await encodeCursor(position, scope))}}`;
      return c.body(body, 200, { "Content-Type": "application/json" });
    },
  }),
];
