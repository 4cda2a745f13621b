import type { OpenAPIHono } from "@hono/zod-openapi";
import { ERROR_CODES } from "../../lib/errors";
import { RATE_LIMITS_DOC } from "../rate-limits";
import { openApiWebhooks } from "../../webhooks/catalog";
import { idempotency } from "../middleware/idempotency";
import { REQUEST_ID_PATTERN } from "../middleware/request-id";
import { ROUTE_REGISTRY } from "../route";

/**
 * The specification's functional areas (§1), in its order; then ours (Catalogs: the catalogs' index;
 * Health; Operations: dead letters; Simulator: the built-in SII simulator's own operations).
 */
export const TAGS = [
  "Certificates", "Legal Entities", "Tax Identification Documents", "Purchases (Receptions)", "Legal Activities",
  "Tax Information", "Additional Export Info", "Enumeration (CAF)", "Currencies", "Document Cancellation Reasons",
  "Document Types", "Companies", "Measurement Units", "Users", "Company Settings", "Item Code Types", "Invoices", "Cessions",
  "Countries", "Tax Types", "Taxpayers", "Webhooks", "Payment Types", "Catalogs", "Health", "Operations", "Simulator",
] as const;

const TAG_DESCRIPTIONS: Partial<Record<(typeof TAGS)[number], string>> = {
  Simulator:
    "Test mode and local development only: the built-in SII simulator's portal and controls (a CAF as the SII portal grants one, scenarios that make the simulated SII reject, object, delay or fail, a supplier's envelope registered for its recipient). Open without a key in local development (`npm start`); elsewhere they answer only a test key (`dte_test_…`) and are 404 for a live key or none. They never touch the real SII. The scenario and inject operations are answered by the simulator itself, with its own checks and messages (an unknown query parameter is ignored there, not refused). Guide: `docs/simulator.md`.",
};

const ERROR_TABLE = Object.entries(ERROR_CODES)
  .map(([code, { status, description }]) => `| ${status} | \`${code}\` | ${description} |`)
  .join("\n");

/**
 * The reference's introduction: one paragraph that points at the guides (docs/ in the repository),
 * then the rate limits, which no operation states on its own. Every field, parameter and error of
 * an operation is in the operation itself; the table of every error code is the ErrorCode schema.
 */
const DESCRIPTION = `Issue, sign, send and receive Chilean electronic tax documents (DTE). Every operation but \`/health\`, \`/openapi.json\` and \`/docs\` takes an API key in \`X-Api-Key\`: a test key (\`dte_test_…\`) works against the built-in SII simulator, a live key (\`dte_live_…\`) against the SII, and each mode sees only its own data. Errors share one envelope, \`{"error": {"code", "message", "request_id", "details"}}\` (every code: the \`ErrorCode\` schema); unknown fields are refused; lists page with \`page\` and \`per_page\`; creating POSTs take an \`Idempotency-Key\`; dates without offset are in the company's time zone. The guides in the repository's \`docs/\` folder explain each part: \`docs/api-guide.md\` (conventions, errors, pagination, idempotency, test and live mode), \`docs/issuing.md\`, \`docs/folios-and-caf.md\`, \`docs/reception.md\`, \`docs/webhooks.md\`, \`docs/catalogs.md\` and \`docs/simulator.md\`.

${RATE_LIMITS_DOC}`;

/** Every error code with its status and meaning, as one schema of the reference. */
const ERROR_CODE_SCHEMA = {
  type: "string",
  enum: Object.keys(ERROR_CODES),
  description: `The \`error.code\` of an error answer. Each operation lists the codes it can answer; this is all of them.

| Status | Code | Meaning |
|---|---|---|
${ERROR_TABLE}`,
};

export function registerDocument(app: OpenAPIHono<any, any, any>) {
  openApiWebhooks(app.openAPIRegistry);
  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKey", {
    type: "apiKey",
    in: "header",
    name: "X-Api-Key",
    description: "API key, e.g. `dte_test_…` or `dte_live_…`. Obtain the first one with `npm run --silent apikey:create -- --client NAME --role OWNER`.",
  });
}

let cached: unknown;

export function openApiDocument(app: OpenAPIHono<any, any, any>, serverUrl?: string) {
  cached ??= withConventions(
    app.getOpenAPI31Document({
      openapi: "3.1.0",
      info: { title: "DTE API", version: "1.0.0", description: DESCRIPTION },
      tags: TAGS.map((name) => ({ name, ...(TAG_DESCRIPTIONS[name] ? { description: TAG_DESCRIPTIONS[name] } : {}) })),
    }) as unknown as OpenApiDoc,
  );
  return serverUrl ? { ...(cached as object), servers: [{ url: serverUrl, description: "This service (try requests here)" }] } : cached;
}

type Json = Record<string, any>;
type OpenApiDoc = Json & { paths: Record<string, Record<string, Json>>; components?: Json };

const METHODS = new Set(["get", "post", "put", "patch", "delete"]);

/**
 * The conventions every operation shares, written once into the document: the `X-Request-Id`
 * request and response header, `Idempotency-Key` / `Idempotent-Replayed` on the operations that
 * take it, and `livemode` in every successful JSON answer of an authenticated operation.
 */
function withConventions(doc: OpenApiDoc): OpenApiDoc {
  const idempotent = new Set(
    ROUTE_REGISTRY.filter((r) => (r.route.middleware as unknown[] | undefined)?.includes(idempotency)).map((r) => `${r.route.method} ${r.route.path}`),
  );
  doc.components = {
    ...doc.components,
    schemas: { ...doc.components?.schemas, ErrorCode: ERROR_CODE_SCHEMA },
    parameters: {
      ...doc.components?.parameters,
      RequestId: {
        name: "X-Request-Id", in: "header", required: false,
        description: "Your id for this request, echoed in the `X-Request-Id` response header and in error bodies; ignored unless it matches the pattern.",
        schema: { type: "string", pattern: REQUEST_ID_PATTERN.source, example: "erp-7f3a9c01" },
      },
      IdempotencyKey: {
        name: "Idempotency-Key", in: "header", required: false,
        description: "Makes this creation safe to retry for 24 hours: the same key with the same body (JSON compared by meaning) replays the first answer; with another body it is 409 `IDEMPOTENCY_KEY_REUSED`; a refused request (4xx) gives the key back. After a 5xx or a lost connection, retry with the same key and body: what an earlier attempt created is answered (same id), never created twice; 409 `IDEMPOTENCY_KEY_IN_USE` while an earlier attempt is still running (retry after `Retry-After`).",
        schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7e]+$", example: "order-1001" },
      },
    },
    headers: {
      ...doc.components?.headers,
      RequestId: { description: "The request's id (yours when acceptable, otherwise `req_…`).", schema: { type: "string" } },
      IdempotentReplayed: { description: "`true` when this answer is the stored answer of an earlier request with the same Idempotency-Key.", schema: { type: "string", enum: ["true"] } },
    },
  };
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.has(method)) continue;
      const withKey = idempotent.has(`${method} ${path}`);
      op.parameters = [...(op.parameters ?? []), { $ref: "#/components/parameters/RequestId" }, ...(withKey ? [{ $ref: "#/components/parameters/IdempotencyKey" }] : [])];
      const secured = (op.security ?? []).length > 0;
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        response.headers = {
          ...response.headers,
          "X-Request-Id": { $ref: "#/components/headers/RequestId" },
          ...(withKey && Number(status) < 300 ? { "Idempotent-Replayed": { $ref: "#/components/headers/IdempotentReplayed" } } : {}),
        };
        const media = response.content?.["application/json"];
        if (secured && Number(status) < 300 && media?.schema) {
          media.schema = withLivemode(media.schema);
          if (media.example && typeof media.example === "object") media.example = { ...media.example, livemode: false };
        }
      }
    }
  }
  return doc;
}

function withLivemode(schema: Json): Json {
  return {
    allOf: [
      schema,
      {
        type: "object",
        properties: { livemode: { type: "boolean", description: "false: test mode (the key and its data use the SII simulator); true: live mode." } },
        required: ["livemode"],
      },
    ],
  };
}
