import { createRoute, type RouteConfig } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { can, ROLES, type Permission } from "../accounts/access/roles";
import { AppError, ERROR_CODES, type ErrorCode } from "../lib/errors";
import { bodyLimit } from "hono/body-limit";
import { requireCompany, requirePermission } from "./middleware/auth";
import { companyRateLimit, issuanceRateLimit } from "./middleware/rate-limit";
import { RATE_LIMITS } from "./rate-limits";
import { errorSchema } from "./openapi/common";
import { deepStrict, withIgnoredApiKey } from "./strict";

/** Codes every authenticated route can answer. */
const AUTH_ERRORS: ErrorCode[] = ["AUTH_MISSING_API_KEY", "AUTH_INVALID_API_KEY", "AUTH_ROLE_FORBIDDEN", "RATE_LIMITED", "INTERNAL", "SERVICE_UNAVAILABLE"];
const COMPANY_ERRORS: ErrorCode[] = ["AUTH_COMPANY_ACCESS_DENIED", "COMPANY_NOT_FOUND"];
const COMPANY_PARAM = /\{(idCompany|company_id)\}/;

type Config = Omit<RouteConfig, "responses" | "middleware"> & {
  responses: RouteConfig["responses"];
  middleware?: readonly MiddlewareHandler<any>[];
  /** Error codes this operation can answer, besides the authentication and company-access ones. */
  errors?: ErrorCode[];
  /** What the key's role must allow; routes under a company also check access to that company. */
  permission?: Permission;
  /** Public operations (no X-Api-Key). */
  public?: boolean;
  /** For a public route: what it asks instead of a key, in place of "No API key needed." in its description. */
  keyNote?: string;
  /** The company comes from a required `company_id` query parameter (the §4.10 reception paths). */
  companyInQuery?: boolean;
  /** Largest request body accepted (413 PAYLOAD_TOO_LARGE above it); default DEFAULT_BODY_BYTES for operations with a body. */
  maxBodyBytes?: number;
  /** An extra rate limit of its own (document issuance), on top of the per-key and per-company ones. */
  rateLimit?: "issuance";
};

/** Body limit of an operation that names none: JSON bodies of settings, webhooks, users... */
export const DEFAULT_BODY_BYTES = 64 * 1024;
/** Largest request body accepted anywhere (app-wide limit; issuance and reception uploads use it). */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;
/** Room for the multipart framing and small text parts around an uploaded file. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

export interface RegisteredRoute {
  route: RouteConfig;
  permission?: Permission;
  public: boolean;
  underCompany: boolean;
  /** The company is named by the `company_id` query parameter instead of the path. */
  companyInQuery: boolean;
  /** Largest accepted request body in bytes (null: the operation takes no body). */
  maxBodyBytes: number | null;
  rateLimit?: "issuance";
}

/** Every route definition: the contract and security tests walk this list. */
export const ROUTE_REGISTRY: RegisteredRoute[] = [];

/**
 * createRoute plus our conventions:
 * - `permission` adds the role check (and the company-access check for routes under a company) and
 *   documents the allowed roles;
 * - error responses are generated from the error-code list, grouped by status, so the document names
 *   exactly the codes the runtime can send.
 */
export function defineRoute<const C extends Config>(config: C) {
  const { errors = [], public: isPublic = false, keyNote, permission, middleware = [], companyInQuery = false, maxBodyBytes: bodyBytes, rateLimit, ...rest } = config;
  const underCompany = COMPANY_PARAM.test(rest.path) || companyInQuery;
  if (!isPublic && !permission) throw new Error(`route ${rest.method} ${rest.path} needs a permission or public: true`);
  const maxBodyBytes = rest.request?.body ? (bodyBytes ?? DEFAULT_BODY_BYTES) : null;
  const limits: MiddlewareHandler<any>[] = [
    ...(maxBodyBytes !== null ? [routeBodyLimit(maxBodyBytes)] : []),
    ...(permission ? [underCompany ? requireCompany(permission) : requirePermission(permission)] : []),
    ...(permission && underCompany ? [companyRateLimit] : []),
    ...(rateLimit === "issuance" ? [issuanceRateLimit] : []),
  ];
  const codes = [
    ...new Set<ErrorCode>([
      ...(isPublic ? ["INTERNAL" as const] : AUTH_ERRORS),
      ...(underCompany && !isPublic ? COMPANY_ERRORS : []),
      "VALIDATION_FAILED",
      ...transportErrors(rest.request),
      ...errors,
    ]),
  ];
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_CODES[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: RouteConfig["responses"] = { ...rest.responses };
  for (const [status, list] of byStatus) {
    responses[String(status)] = {
      description: list.map((c) => ERROR_CODES[c].description).join(" / "),
      content: { "application/json": { schema: errorSchema(list) } },
    };
  }
  const roles = permission ? ROLES.filter((r) => can(r, permission)) : [];
  const description = [
    rest.description,
    permission ? `Roles: ${roles.join(", ")}.` : (keyNote ?? "No API key needed."),
    maxBodyBytes !== null ? `Request body: at most ${maxBodyBytes} bytes (${Math.round(maxBodyBytes / 1024)} KiB).` : "",
    rateLimit === "issuance" ? `Rate limit: its own budget of ${RATE_LIMITS.ISSUANCE_RATE_LIMITER.limit} requests every ${RATE_LIMITS.ISSUANCE_RATE_LIMITER.period} s per company, besides the per-key and per-company limits (${RATE_LIMITS.HIGH_VOLUME_ISSUANCE_RATE_LIMITER.limit} for a company on the high-volume tier).` : "",
  ]
    .filter(Boolean)
    .join("\n\n");
  const route = createRoute({
    ...rest,
    request: strictRequest(rest.request),
    description,
    middleware: [...limits, ...middleware],
    security: isPublic ? [] : [{ ApiKey: [] }],
    responses,
  } as RouteConfig);
  ROUTE_REGISTRY.push({ route, permission, public: isPublic, underCompany, companyInQuery, maxBodyBytes, rateLimit });
  return route as unknown as Omit<C, "errors" | "public" | "keyNote" | "permission" | "middleware" | "companyInQuery" | "maxBodyBytes" | "rateLimit"> & { middleware: MiddlewareHandler[] };
}

/** 413 PAYLOAD_TOO_LARGE in our envelope above this operation's limit (Content-Length or the streamed size). */
function routeBodyLimit(maxSize: number): MiddlewareHandler {
  return bodyLimit({
    maxSize,
    onError: () => {
      throw new AppError("PAYLOAD_TOO_LARGE", `The request body is larger than this operation accepts (${maxSize} bytes).`);
    },
  });
}

/**
 * Codes any route can answer before its handler runs: the global body limit (every request, even a
 * GET with a body) and, for routes that take a body, the content-type and JSON parsing checks.
 */
function transportErrors(request: RouteConfig["request"]): ErrorCode[] {
  const content = request?.body?.content ?? {};
  const types = Object.keys(content);
  if (types.length === 0) return ["PAYLOAD_TOO_LARGE"];
  return ["PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE", ...(types.includes("application/json") ? (["MALFORMED_JSON"] as const) : [])];
}

/** Query and bodies refuse unknown fields at any depth; `apiKey` in a query or form is ignored. */
function strictRequest(request: RouteConfig["request"]): RouteConfig["request"] {
  const out = { ...request, query: deepStrict(withIgnoredApiKey(request?.query as never)) as never };
  const content = request?.body?.content;
  if (!content) return out;
  const strictContent: typeof content = {};
  for (const [type, media] of Object.entries(content)) {
    const schema = (media as { schema?: unknown } | undefined)?.schema as never;
    const form = type === "multipart/form-data" || type === "application/x-www-form-urlencoded";
    strictContent[type] = { ...(media as object), schema: deepStrict(form ? withIgnoredApiKey(schema) : schema) as never };
  }
  return { ...out, body: { ...request!.body!, content: strictContent } };
}
