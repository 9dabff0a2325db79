import { Hono } from "hono";
import { boardRoutes } from "./board/routes";
import type { AppEnv } from "./env";
import { methodNotAllowed } from "./http/method-not-allowed";
import { ApiError, problemResponse, renderError } from "./http/problem";
import { integrationRoutes } from "./integrations/routes";
import { once } from "./lib/once";
import { mcpRoutes } from "./mcp/routes";
import { auth } from "./middleware/auth";
import { database } from "./middleware/database";
import { mountOperations, toolOperations } from "./middleware/mount";
import { requestId } from "./middleware/request-id";
import { requestLog } from "./middleware/request-log";
import { docsRoutes } from "./openapi/routes";
import { OPERATIONS } from "./routes";

const app = new Hono<AppEnv>();

app.use(requestId, requestLog, database);
// Public, so registered before the auth middleware below.
app.get("/health", (c) => c.json({ status: "ok" })).all("/health", methodNotAllowed("GET"));
app.route("/", docsRoutes());
app.route("/", boardRoutes());

// Authentication runs before routing under /api/v1 (docs/api.md,
// "Authentication"), so an unauthenticated caller learns nothing, not even
// which paths exist.
app.use("/api/v1/*", auth);
app.use("/mcp", auth);
mountOperations(app, OPERATIONS);
// A tool call runs its operation's chain on an app of its own, built by the first call.
const tools = once(() => toolOperations(OPERATIONS));
const runOperation = (request: Request, env: AppEnv["Bindings"], ctx: ExecutionContext) =>
  tools().fetch(request, env, ctx);
app.route("/mcp", mcpRoutes(runOperation, OPERATIONS));
app.route("/api/v1/integrations", integrationRoutes(runOperation, OPERATIONS));

app.notFound((c) => problemResponse(c, new ApiError("not_found", `No route for ${c.req.method} ${c.req.path}`)));
app.onError(renderError);

export default app;
