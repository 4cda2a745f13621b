import { OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { assertConfigured } from "./config";
import { AppError } from "./lib/errors";
import { notFoundHandler, onError, validationHook } from "./http/errors/handler";
import { apiKeyAuth } from "./http/middleware/auth";
import { requestId } from "./http/middleware/request-id";
import { livemodeInResponses } from "./http/middleware/livemode";
import { requestLog } from "./http/middleware/request-log";
import { openApiDocument, registerDocument } from "./http/openapi/document";
import { defineRoute, MAX_BODY_BYTES } from "./http/route";
import { apiKeyRateLimit } from "./http/middleware/rate-limit";
import { companiesRoutes } from "./http/routes/companies";
import { filesRoutes } from "./http/routes/files";
import { usersRoutes } from "./http/routes/users";
import { certificatesRoutes } from "./http/routes/certificates";
import { enumerationRoutes } from "./http/routes/enumeration";
import { invoicesRoutes } from "./http/routes/invoices";
import { BATCH_BODY_BYTES, invoiceBatchesRoutes } from "./http/routes/invoice-batches";
import { buyerRepliesRoutes } from "./http/routes/invoices/buyer-replies";
import { cessionsRoutes } from "./http/routes/cessions";
import { receivedCessionRoutes } from "./http/routes/cessions/received";
import { buyerDeliveryRoutes } from "./http/routes/invoices/buyer-delivery";
import { webhooksRoutes } from "./http/routes/webhooks";
import { catalogsRoutes } from "./http/routes/catalogs";
import { receptionRoutes } from "./http/routes/reception";
import { operationsRoutes } from "./http/routes/operations";
import { healthReport } from "./operations/health";
import { simulatorCafRoutes } from "./countries/cl/simulator/caf-route";
import { simulatorControlRoutes } from "./countries/cl/simulator/control-routes";
import { simulatorApp } from "./countries/cl/simulator/app";
import type { AppEnv } from "./http/types";


const CheckSchema = z.object({ status: z.enum(["ok", "error"]), error: z.string().optional() });
const HealthSchema = z
  .object({
    status: z.enum(["ok", "degraded"]),
    environment: z.string(),
    sii_mode: z.enum(["simulator", "certification", "production"]).describe("Which tax authority documents go to: the built-in simulator, the SII certification or production hosts."),
    checks: z
      .object({ d1: CheckSchema, r2: CheckSchema, issuance_queue: CheckSchema, webhook_queue: CheckSchema, email_events_queue: CheckSchema.describe("The producer that sends dead-lettered Email Sending events back to their queue."), folio_allocator: CheckSchema, document_store: CheckSchema, control_directory: CheckSchema })
      .describe("D1 answers a query, R2 a HEAD, the folio allocator and the document store Durable Objects an RPC each; queue producers are reported as bound (they cannot be probed without sending)."),
  })
  .openapi("Health");

const health = defineRoute({
  method: "get",
  path: "/health",
  tags: ["Health"],
  summary: "Health of the service and each binding",
  description: "Answers without an API key: 200 when every binding answers, 503 when one does not (the body says which).",
  public: true,
  responses: {
    200: {
      description: "Service and bindings are up",
      content: { "application/json": { schema: HealthSchema, example: { status: "ok", environment: "production", sii_mode: "production", checks: Object.fromEntries(Object.keys(HealthSchema.shape.checks.shape).map((k) => [k, { status: "ok" }])) } } },
    },
    503: { description: "A binding does not answer", content: { "application/json": { schema: HealthSchema } } },
  },
});

function executionCtxOf(c: Context) {
  try {
    return c.executionCtx;
  } catch {
    return undefined; // app.fetch called without a context (tests, in-process SII client)
  }
}

/** A static asset, with headers this app may still add to (X-Request-Id, nosniff). */
async function asset(env: Env, request: Request): Promise<Response> {
  const res = await env.ASSETS.fetch(request);
  return new Response(res.body, res);
}

function buildApp() {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  registerDocument(app);
  app.use("*", requestId);
  app.use("*", requestLog);
  // Browsers must never sniff a served file (logos, PDFs, XML) into another type: on every response.
  app.use("*", async (c, next) => {
    await next();
    c.res.headers.set("X-Content-Type-Options", "nosniff");
  });
  // Refuse to serve anything (the simulator included) while misconfigured, e.g. production in
  // simulator mode or without its secrets: every request answers 500 INTERNAL and logs why.
  app.use("*", async (c, next) => {
    assertConfigured(c.env);
    await next();
  });
  // The app-wide limit; each operation has its own, and batches (BATCH_BODY_BYTES) the largest.
  app.use(
    "*",
    bodyLimit({
      maxSize: Math.max(MAX_BODY_BYTES, BATCH_BODY_BYTES),
      onError: () => {
        throw new AppError("PAYLOAD_TOO_LARGE", `The request body is larger than ${Math.max(MAX_BODY_BYTES, BATCH_BODY_BYTES)} bytes.`);
      },
    }),
  );
  app.use("/api/*", apiKeyAuth);
  app.use("/api/*", livemodeInResponses);
  app.use("/api/*", apiKeyRateLimit);

  app.openapi(health, async (c) => {
    const report = await healthReport(c.env);
    return c.json(report, report.status === "ok" ? 200 : 503);
  });
  app.route("/", filesRoutes);
  app.route("/", companiesRoutes);
  app.route("/", usersRoutes);
  app.route("/", certificatesRoutes);
  app.route("/", enumerationRoutes);
  app.route("/", invoicesRoutes);
  app.route("/", invoiceBatchesRoutes);
  app.route("/", buyerRepliesRoutes);
  app.route("/", cessionsRoutes);
  app.route("/", receivedCessionRoutes);
  app.route("/", buyerDeliveryRoutes);
  app.route("/", webhooksRoutes);
  app.route("/", catalogsRoutes);
  app.route("/", receptionRoutes);
  app.route("/", operationsRoutes);
  app.route("/", simulatorCafRoutes);
  app.route("/", simulatorControlRoutes);
  // The simulated SII (DECISIONS 15, 18): its own Hono app speaking the SII's XML/SOAP protocol,
  // kept out of the OpenAPI document but for the documented POST /simulator/sii/caf and the
  // scenario and reception/inject routes above (one catch-all route here, registered after them);
  // 404 unless SII_MODE=simulator.
  app.all("/simulator/sii/*", (c) => simulatorApp.fetch(c.req.raw, c.env, executionCtxOf(c)));

  app.get("/openapi.json", (c) => c.json(openApiDocument(app, new URL(c.req.url).origin) as object));
  // The API reference (Scalar) and its script are static assets (public/, wrangler.toml [assets]).
  app.get("/docs", (c) => asset(c.env, new Request(new URL("/docs", c.req.url), c.req.raw)));
  app.get("/docs-assets/*", (c) => asset(c.env, c.req.raw));

  app.onError(onError);
  app.notFound(notFoundHandler(app));
  return app;
}

export const app = buildApp();
export type App = typeof app;
