import { OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { assertConfigured, type Env } from "./env";
import { ApiError } from "./http/errors/api-error";
import { notFoundHandler, onError, validationHook } from "./http/errors/handler";
import { apiKeyAuth } from "./http/middleware/auth";
import { requestId } from "./http/middleware/request-id";
import { DOCS_HTML } from "./http/openapi/docs-page";
import { openApiDocument, registerDocument } from "./http/openapi/document";
import { defineRoute } from "./http/route";
import { companiesRoutes } from "./http/routes/companies";
import { usersRoutes } from "./http/routes/users";
import { certificatesRoutes } from "./http/routes/certificates";
import { enumerationRoutes } from "./http/routes/enumeration";
import { invoicesRoutes } from "./http/routes/invoices";
import { simulatorCafRoutes } from "./countries/cl/sii/simulator/caf-route";
import { simulatorApp } from "./countries/cl/sii/simulator/app";
import type { AppEnv } from "./http/types";

/** Largest request body accepted anywhere (a 1,000-line boleta fits comfortably). */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;

const health = defineRoute({
  method: "get",
  path: "/health",
  tags: ["Companies"],
  summary: "Liveness check",
  description: "Answers without an API key.",
  public: true,
  responses: { 200: { description: "Service is up", content: { "application/json": { schema: z.object({ status: z.literal("ok") }) } } } },
});

const logoFile = defineRoute({
  method: "get",
  path: "/files/logos/{company_id}/{file}",
  tags: ["Companies"],
  summary: "Download a company logo",
  description: "The `file_url` returned by the logo upload. Public (no key): the URL is unguessable. No longer served once the company is deleted.",
  public: true,
  request: {
    params: z.object({
      company_id: z.string().min(1).max(64).openapi({ param: { name: "company_id", in: "path" } }),
      file: z.string().regex(/^lgo_[0-9A-Z]{26}\.(png|jpg)$/, "A logo file name").openapi({ param: { name: "file", in: "path" } }),
    }),
  },
  responses: {
    200: {
      description: "The image",
      content: { "image/png": { schema: z.any().openapi({ type: "string", format: "binary" }) }, "image/jpeg": { schema: z.any().openapi({ type: "string", format: "binary" }) } },
    },
  },
  errors: ["VALIDATION_FAILED", "LOGO_NOT_FOUND"],
});

function executionCtxOf(c: Context) {
  try {
    return c.executionCtx;
  } catch {
    return undefined; // app.fetch called without a context (tests, in-process SII client)
  }
}

function buildApp() {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  registerDocument(app);
  app.use("*", requestId);
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
  app.use(
    "*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => {
        throw new ApiError("PAYLOAD_TOO_LARGE", `The request body is larger than ${MAX_BODY_BYTES} bytes.`);
      },
    }),
  );
  app.use("/api/*", apiKeyAuth);

  app.openapi(health, (c) => c.json({ status: "ok" as const }, 200));
  app.openapi(logoFile, async (c) => {
    const { company_id, file } = c.req.valid("param");
    // A deleted company's logo is no longer public (the object is kept with the company's data).
    const live = await c.env.DB.prepare("SELECT 1 FROM companies WHERE id = ? AND status = 'ACTIVE'").bind(company_id).first();
    if (!live) throw new ApiError("LOGO_NOT_FOUND", "No such logo.");
    const object = await c.env.FILES.get(`companies/${company_id}/logos/${file}`);
    if (!object) throw new ApiError("LOGO_NOT_FOUND", "No such logo.");
    return new Response(object.body, {
      headers: {
        "Content-Type": object.httpMetadata?.contentType ?? "application/octet-stream",
        // Not immutable: the file stops being served when the company is deleted.
        "Cache-Control": "public, max-age=3600",
        ETag: object.httpEtag,
        "X-Content-Type-Options": "nosniff",
      },
    }) as never;
  });
  app.route("/", companiesRoutes);
  app.route("/", usersRoutes);
  app.route("/", certificatesRoutes);
  app.route("/", enumerationRoutes);
  app.route("/", invoicesRoutes);
  app.route("/", simulatorCafRoutes);
  // The simulated SII (DECISIONS 15, 18): its own Hono app speaking the SII's XML/SOAP protocol,
  // kept out of the OpenAPI document (one catch-all route here, registered after the documented
  // POST /simulator/sii/caf so that one wins); 404 unless SII_MODE=simulator.
  app.all("/simulator/sii/*", (c) => simulatorApp.fetch(c.req.raw, c.env, executionCtxOf(c)));

  app.get("/openapi.json", (c) => c.json(openApiDocument(app, new URL(c.req.url).origin) as object));
  app.get("/docs", (c) => c.html(DOCS_HTML));

  app.onError(onError);
  app.notFound(notFoundHandler(app));
  return app;
}

export const app = buildApp();
export type App = typeof app;
export type { Env };
