import { createRoute, type RouteConfig } from "@hono/zod-openapi";
import { ERROR_CODES, type ErrorCode } from "./errors/codes";
import { errorSchema } from "./openapi/common";

/** Codes every authenticated route can answer. */
const AUTH_ERRORS: ErrorCode[] = ["AUTH_MISSING_API_KEY", "AUTH_INVALID_API_KEY", "INTERNAL"];

type Config = Omit<RouteConfig, "responses"> & {
  responses: RouteConfig["responses"];
  /** Error codes this operation can answer, besides the authentication ones. */
  errors?: ErrorCode[];
  /** Public operations (no X-Api-Key). */
  public?: boolean;
};

/** Every route definition, for the contract test that checks responses against the document. */
export const ROUTE_REGISTRY: RouteConfig[] = [];

/**
 * createRoute plus our conventions: the error responses are generated from the error-code list,
 * grouped by status, so the document names exactly the codes the runtime can send.
 */
export function defineRoute<const C extends Config>(config: C) {
  const { errors = [], public: isPublic, ...rest } = config;
  const codes = [...new Set([...(isPublic ? ["INTERNAL" as ErrorCode] : AUTH_ERRORS), ...errors])];
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
  const route = createRoute({
    ...rest,
    security: isPublic ? [] : [{ ApiKey: [] }],
    responses,
  } as RouteConfig) as unknown as Omit<C, "errors" | "public">;
  ROUTE_REGISTRY.push(route as unknown as RouteConfig);
  return route;
}
