import { Hono } from "hono";
import { methodNotAllowed } from "../http/method-not-allowed";

export const health = new Hono().get("/", (c) => c.json({ status: "ok" })).all("/", methodNotAllowed("GET"));
