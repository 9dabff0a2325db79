import { Hono } from "hono";
import type { AppEnv } from "./env";
import { ApiError, problemResponse, renderError } from "./http/problem";
import { auth } from "./middleware/auth";
import { database } from "./middleware/database";
import { requestId } from "./middleware/request-id";
import { requestLog } from "./middleware/request-log";
import { accounts } from "./routes/accounts";
import { aiAgent } from "./routes/ai-agent";
import { contacts } from "./routes/contacts";
import { docs } from "./routes/docs";
import { health } from "./routes/health";
import { leads } from "./routes/leads";
import { mcpRoutes } from "./routes/mcp";

const app = new Hono<AppEnv>();

app.use(requestId, requestLog, database);
app.route("/health", health);
// Public, so registered before the auth middleware below.
app.route("/", docs);

// Authentication runs before routing under /api/v1 (contract section 3), so an
// unauthenticated caller learns nothing, not even which paths exist.
app.use("/api/v1/*", auth);
app.use("/mcp", auth);
app.route("/api/v1/leads", leads);
app.route("/api/v1/contacts", contacts);
app.route("/api/v1/accounts", accounts);
app.route("/api/v1/ai-agent", aiAgent);
app.route(
  "/mcp",
  mcpRoutes((request, env, ctx) => app.fetch(request, env, ctx)),
);

app.notFound((c) => problemResponse(c, new ApiError(404, "not_found", `No route for ${c.req.method} ${c.req.path}`)));
app.onError(renderError);

export default app;
