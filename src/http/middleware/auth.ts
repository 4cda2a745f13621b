import type { MiddlewareHandler } from "hono";
import { createDb } from "../../storage/db/client";
import { authenticate, companyAccess } from "../../accounts/access/api-keys";
import { can, reachesAllCompanies, type Permission } from "../../accounts/access/roles";
import { assertConfigured } from "../../config";
import { AppError } from "../../lib/errors";
import { addLogContext } from "../../lib/log";
import type { AppEnv } from "../types";

/** The company named by a /api/companies/{id}/… path (or the company_id query of /api/reception/…), read with the key in one round trip. */
function companyInPath(path: string, query: () => string | undefined): string | undefined {
  if (path.startsWith("/api/reception/")) return query();
  const m = /^\/api\/companies\/([^/]+)/.exec(path);
  if (!m) return undefined;
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return undefined;
  }
}

/**
 * X-Api-Key -> principal (§2.5). Only the header counts: an `apiKey` query parameter or form field
 * is ignored and can never grant access (DECISIONS 4).
 */
export const apiKeyAuth: MiddlewareHandler<AppEnv> = async (c, next) => {
  assertConfigured(c.env);
  const result = await authenticate(c.env, c.env.API_KEY_PEPPER!, c.req.header("X-Api-Key"), new Date(), companyInPath(c.req.path, () => c.req.query("company_id")));
  if (!result.ok) {
    if (result.reason === "MISSING") throw new AppError("AUTH_MISSING_API_KEY", "Send your API key in the X-Api-Key header.");
    const why = result.reason === "REVOKED" ? "has been revoked" : result.reason === "MALFORMED" ? "is malformed" : "is not valid";
    throw new AppError("AUTH_INVALID_API_KEY", `The API key ${why}.`);
  }
  c.set("principal", result.principal);
  addLogContext({ client_id: result.principal.clientId, api_key_id: result.principal.apiKeyId });
  if (result.company) c.set("companyAccess", result.company);
  if (result.touch) c.executionCtx.waitUntil(result.touch());
  await next();
};

export function requirePermission(permission: Permission): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { role } = c.get("principal");
    if (!can(role, permission)) {
      throw new AppError("AUTH_ROLE_FORBIDDEN", `A ${role} key may not perform this operation.`);
    }
    await next();
  };
}

/** The one answer for a company the key cannot reach, whether it exists or not. */
export function companyAccessDenied(): AppError {
  return new AppError("AUTH_COMPANY_ACCESS_DENIED", "This API key has no access to this company.");
}

/**
 * Loads the company named in the path (`idCompany` or `company_id`) and checks the key reaches it:
 * 403 AUTH_COMPANY_ACCESS_DENIED, with one message, when it does not exist, belongs to another client
 * or to the other mode (test/live), or a MEMBER key was not granted it (DECISIONS 7: never 404 for someone else's company; and a
 * missing id answers exactly like someone else's, so probing tells nothing); 404 only for the
 * client's own deleted company (DECISIONS 13).
 */
export function requireCompany(permission: Permission): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const principal = c.get("principal");
    const companyId = c.req.param("idCompany") ?? c.req.param("company_id") ?? c.req.query("company_id");
    if (!companyId) throw new AppError("VALIDATION_FAILED", "company_id is required.", [{ field: "company_id", message: "Required: expected string." }]);
    const prefetched = c.get("companyAccess");
    const access = prefetched?.id === companyId ? prefetched : await companyAccess(createDb(c.env.DB), principal, companyId);
    const company = access.row;
    // A company of the other mode answers exactly like another client's (neither mode sees the other).
    if (!company || company.clientId !== principal.clientId || company.livemode !== principal.livemode) throw companyAccessDenied();
    if (company.status === "DELETED") throw new AppError("COMPANY_NOT_FOUND", `Company ${companyId} was deleted.`);
    if (!reachesAllCompanies(principal.role) && !access.granted) throw companyAccessDenied();
    if (!can(principal.role, permission)) {
      throw new AppError("AUTH_ROLE_FORBIDDEN", `A ${principal.role} key may not perform this operation.`);
    }
    c.set("company", company);
    addLogContext({ company_id: company.id });
    await next();
  };
}
