import type { OpenAPIHono } from "@hono/zod-openapi";
import { ERROR_CODES } from "../../errors";
import { RATE_LIMITS_DOC } from "../rate-limits";
import { openApiWebhooks } from "../../webhooks/catalog";

/** The specification's functional areas (§1), in its order; then ours (Operations: health, dead letters). */
export const TAGS = [
  "Certificates", "Legal Entities", "Tax Identification Documents", "Purchases (Receptions)", "Legal Activities",
  "Tax Information", "Additional Export Info", "Enumeration (CAF)", "Currencies", "Document Cancellation Reasons",
  "Document Types", "Companies", "Measurement Units", "Users", "Company Settings", "Item Code Types", "Invoices",
  "Countries", "Tax Types", "Taxpayers", "Webhooks", "Payment Types", "Operations",
] as const;

const ERROR_TABLE = Object.entries(ERROR_CODES)
  .map(([code, { status, description }]) => `| ${status} | \`${code}\` | ${description} |`)
  .join("\n");

const DESCRIPTION = `Issue, sign, send and receive Chilean electronic tax documents (DTE).

**Authentication.** Every operation except \`/health\`, \`/openapi.json\`, \`/docs\` and logo files needs an API key in the \`X-Api-Key\` header.
A missing or invalid key answers 401; a valid key without access to the company answers 403. An \`apiKey\` query parameter or form field is ignored.

**Errors.** Every error has the same body: \`{"error": {"code", "message", "request_id", "details": [{"field", "message"}]}}\`.
Every response carries \`X-Request-Id\`.

**Strict input.** An unknown query parameter, JSON field (at any depth) or multipart part is a 400 \`VALIDATION_FAILED\` naming each one in \`details[].field\` (e.g. \`items[0].discount_amout\`), with a close known name when there is one ("did you mean \`discount_amount\`?"). Nothing is silently dropped. The \`apiKey\` query parameter or form field is the exception: accepted and ignored.

| Status | Code | Meaning |
|---|---|---|
${ERROR_TABLE}

**Lists** answer \`{data, current_page, per_page, total, last_page}\`; \`page\` starts at 1, \`per_page\` defaults to 20 and is at most 100.

**Idempotency.** Creating POSTs accept an \`Idempotency-Key\` header: a repeat with the same body replays the first response (header \`Idempotent-Replayed: true\`); the same key with another body is 409.

${RATE_LIMITS_DOC}

**Request bodies** have a size limit per operation (stated in each one's description); above it the answer is 413 \`PAYLOAD_TOO_LARGE\`.

**Dates** without offset are in the company's time zone (default America/Santiago).`;

export function registerDocument(app: OpenAPIHono<any, any, any>) {
  openApiWebhooks(app.openAPIRegistry);
  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKey", {
    type: "apiKey",
    in: "header",
    name: "X-Api-Key",
    description: "API key, e.g. `dte_sk_…`. Obtain the first one with `npm run --silent apikey:create -- --client NAME --role OWNER`.",
  });
}

let cached: unknown;

export function openApiDocument(app: OpenAPIHono<any, any, any>, serverUrl?: string) {
  cached ??= app.getOpenAPI31Document({
    openapi: "3.1.0",
    info: { title: "DTE API", version: "1.0.0", description: DESCRIPTION },
    tags: TAGS.map((name) => ({ name })),
  });
  return serverUrl ? { ...(cached as object), servers: [{ url: serverUrl }] } : cached;
}
