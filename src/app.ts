import { OpenAPIHono } from "@hono/zod-openapi";
import type { Env } from "./env";

export const app = new OpenAPIHono<{ Bindings: Env }>();
app.get("/health", (c) => c.json({ status: "ok" }));
