// The dispatch board (docs/api.md, "The dispatch board"): one local day of the
// organisation in one D1 round trip; its technicians and hours come from what
// authentication read with the key.
import { readDay } from "../db/board";
import { defineOperation } from "../http/operation";
import { boardRows } from "../scheduling/board";
import { timesView } from "../scheduling/slots";
import { dateString, localDateOf, localToInstant } from "../scheduling/zone";
import { board, boardQuery } from "../schemas/board";

export const boardOperations = [
  defineOperation({
    operationId: "getBoard",
    tool: "get_board",
    method: "get",
    path: "/api/v1/board",
    tag: "Board",
    effect: "read",
    roles: ["office", "read"],
    summary: "The dispatch board of a day",
    description:
      "One local date of the organisation (`date`, default its today): a row per active technician, by name, with their hours that day (`duty`), their visits (every incident of that date but cancelled ones, by start) and live holds; then a row without a technician for visits no active technician has. With no technician (crew mode), one row with the opening hours. The page at /board draws it.",
    query: boardQuery,
    response: board,
    handler: async (c, { query }) => {
      const { db, org } = c.var;
      const { schedule } = org;
      const now = Date.now();
      const date = query.date ?? localDateOf(now, schedule.timeZone);
      const start = localToInstant(date, 0, schedule.timeZone);
      const end = localToInstant(date + 1, 0, schedule.timeZone);
      const { visits, holds } = await readDay(db, { org, now, start, end });
      const rows = boardRows({ schedule, technicians: org.catalogue.technicians, date, visits, holds });
      return c.json(
        {
          date: dateString(date),
          timeZone: schedule.timeZone,
          rows: rows.map((row) => ({
            technician: row.technician && { id: row.technician.id, name: row.technician.name },
            duty: row.duty.map((d) => timesView(d.start, d.end, schedule.timeZone)),
            visits: row.visits,
            holds: row.holds.map((h) => h.view),
          })),
        },
        200,
      );
    },
  }),
];
