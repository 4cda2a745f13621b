import type { OpenAPIHono } from "@hono/zod-openapi";
import { ERROR_CODES } from "../../errors";
import { RATE_LIMITS_DOC } from "../rate-limits";
import { openApiWebhooks } from "../../webhooks/catalog";
import { idempotency } from "../middleware/idempotency";
import { REQUEST_ID_PATTERN } from "../middleware/request-id";
import { ROUTE_REGISTRY } from "../route";

/** The specification's functional areas (§1), in its order; then ours (Health; Operations: dead letters). */
export const TAGS = [
  "Certificates", "Legal Entities", "Tax Identification Documents", "Purchases (Receptions)", "Legal Activities",
  "Tax Information", "Additional Export Info", "Enumeration (CAF)", "Currencies", "Document Cancellation Reasons",
  "Document Types", "Companies", "Measurement Units", "Users", "Company Settings", "Item Code Types", "Invoices",
  "Countries", "Tax Types", "Taxpayers", "Webhooks", "Payment Types", "Health", "Operations",
] as const;

const ERROR_TABLE = Object.entries(ERROR_CODES)
  .map(([code, { status, description }]) => `| ${status} | \`${code}\` | ${description} |`)
  .join("\n");

const DESCRIPTION = `Issue, sign, send and receive Chilean electronic tax documents (DTE).

**Test and live mode.** API keys are test keys (\`dte_test_…\`) or live keys (\`dte_live_…\`). Test keys always talk to the built-in SII simulator, in every deployment; live keys talk to the SII environment the deployment is configured for. Everything a key creates (companies and all below them: certificates, CAFs, documents, received documents, webhooks and their events) belongs to its mode and is invisible to the other mode (403, as another client's company); the same RUT can exist in both. Every successful JSON answer carries \`livemode\`, and so does every webhook delivery.

**Authentication.** Every operation except \`/health\`, \`/openapi.json\`, \`/docs\` and logo files needs an API key in the \`X-Api-Key\` header.
A missing or invalid key answers 401; a valid key without access to the company answers 403. Under \`/api/\` the key is checked before the path: without a valid key a path that is no operation also answers 401 (with one, 404 \`ROUTE_NOT_FOUND\`), so the paths that exist are not told to a caller without a key. An \`apiKey\` query parameter or form field is ignored.

**Errors.** Every error has the same body: \`{"error": {"code", "message", "request_id", "details": [{"field", "message"}]}}\`.
Every response carries \`X-Request-Id\`: yours if you send one matching \`${REQUEST_ID_PATTERN.source}\` (8 to 128 letters, digits, \`.\`, \`_\`, \`:\` or \`-\`), otherwise a new \`req_…\` id.

**Strict input.** An unknown query parameter, JSON field (at any depth) or multipart part is a 400 \`VALIDATION_FAILED\` naming each one in \`details[].field\` (e.g. \`items[0].discount_amout\`), with a close known name when there is one ("did you mean \`discount_amount\`?"). Nothing is silently dropped. The \`apiKey\` query parameter or form field is the exception: accepted and ignored.

| Status | Code | Meaning |
|---|---|---|
${ERROR_TABLE}

**Lists** answer \`{data, current_page, per_page, total, last_page}\`; \`page\` starts at 1, \`per_page\` defaults to 20 and is at most 100.

**Idempotency.** Creating POSTs accept an \`Idempotency-Key\` header: a repeat with the same body replays the first response for 24 hours (header \`Idempotent-Replayed: true\`); a JSON body is compared by meaning (key order and spacing do not count); the same key with another body is 409. Keys are per client and mode. A refused request (any 4xx) gives its key back, so the corrected request may use the same key. After a 5xx or a lost connection, retry with the same key and body: what the first attempt created is answered again (same id), never created twice; while an earlier attempt is still running the answer is 409 \`IDEMPOTENCY_KEY_IN_USE\` with \`Retry-After\` (1 s while the attempt is young; once it has held the key 5 s, most likely dead, the seconds until a retry takes it over: a claim left by an attempt that died is taken over 60 seconds after it started).

${RATE_LIMITS_DOC}

**Request bodies** have a size limit per operation (stated in each one's description); above it the answer is 413 \`PAYLOAD_TOO_LARGE\`.

**Dates** without offset are in the company's time zone (default America/Santiago).`;

export function registerDocument(app: OpenAPIHono<any, any, any>) {
  openApiWebhooks(app.openAPIRegistry);
  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKey", {
    type: "apiKey",
    in: "header",
    name: "X-Api-Key",
    description: "API key, e.g. `dte_test_…`. Obtain the first one with `npm run --silent apikey:create -- --client NAME --role OWNER`.",
  });
}

let cached: unknown;

export function openApiDocument(app: OpenAPIHono<any, any, any>, serverUrl?: string) {
  cached ??= withConventions(
    app.getOpenAPI31Document({
      openapi: "3.1.0",
      info: { title: "DTE API", version: "1.0.0", description: DESCRIPTION },
      tags: TAGS.map((name) => ({ name })),
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
        if (secured && Number(status) < 300 && media?.schema) media.schema = withLivemode(media.schema);
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
