import { Hono } from "hono";
import type { AppEnv } from "./env";
import { ApiError, problemResponse, renderError } from "./http/problem";
import { auth } from "./middleware/auth";
import { database } from "./middleware/database";
import { requestId } from "./middleware/request-id";
import { requestLog } from "./middleware/request-log";
import { OPERATIONS } from "./routes";
import { docs } from "./routes/docs";
import { health } from "./routes/health";
import { mcpRoutes } from "./routes/mcp";
import { mountOperations } from "./routes/operation";

const app = new Hono<AppEnv>();

app.use(requestId, requestLog, database);
app.route("/health", health);
// Public, so registered before the auth middleware below.
app.route("/", docs);

// Authentication runs before routing under /api/v1 (contract section 3), so an
// unauthenticated caller learns nothing, not even which paths exist.
app.use("/api/v1/*", auth);
app.use("/mcp", auth);
mountOperations(app, OPERATIONS);
app.route(
  "/mcp",
  mcpRoutes((request, env, ctx) => app.fetch(request, env, ctx)),
);

app.notFound((c) => problemResponse(c, new ApiError("not_found", `No route for ${c.req.method} ${c.req.path}`)));
app.onError(renderError);

export default app;
