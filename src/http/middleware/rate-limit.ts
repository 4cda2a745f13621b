import type { MiddlewareHandler } from "hono";
import { AppError } from "../../errors";
import { RATE_LIMITS, type RateLimitBinding } from "../rate-limits";
import type { AppEnv } from "../types";

/** 429 RATE_LIMITED with Retry-After when the binding refuses this key. */
async function enforce(env: Env, binding: RateLimitBinding, key: string, what: string): Promise<void> {
  const { success } = await env[binding].limit({ key });
  if (success) return;
  const { limit, period } = RATE_LIMITS[binding];
  throw new AppError("RATE_LIMITED", `Too many requests ${what}: at most ${limit} every ${period} seconds. Retry after ${period} seconds.`, [], { "Retry-After": String(period) });
}

/** Per API key, on every authenticated request (after the key is known). */
export const apiKeyRateLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  await enforce(c.env, "API_KEY_RATE_LIMITER", c.get("principal").apiKeyId, "for this API key");
  await next();
};

/**
 * Per company, after the company-access check: only requests the key may make count, so nobody can
 * spend another client's company budget.
 */
export const companyRateLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  await enforce(c.env, "COMPANY_RATE_LIMITER", c.get("company").id, "for this company");
  await next();
};

/** Document issuance, per company. */
export const issuanceRateLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  await enforce(c.env, "ISSUANCE_RATE_LIMITER", c.get("company").id, "issuing documents for this company");
  await next();
};
