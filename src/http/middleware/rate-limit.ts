import type { MiddlewareHandler } from "hono";
import { AppError } from "../../lib/errors";
import { RATE_LIMITS, TIER_LIMITERS, type RateLimitBinding, type RateTier } from "../rate-limits";
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
  const company = c.get("company");
  await enforce(c.env, TIER_LIMITERS[tierOf(company)].company, company.id, "for this company");
  await next();
};

/** Document issuance, per company. */
export const issuanceRateLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  const company = c.get("company");
  await enforce(c.env, TIER_LIMITERS[tierOf(company)].issuance, company.id, "issuing documents for this company");
  await next();
};

/** The company's tier (a row cached from before the column existed counts as STANDARD). */
function tierOf(company: { rateTier?: RateTier | null }): RateTier {
  return company.rateTier === "HIGH_VOLUME" ? "HIGH_VOLUME" : "STANDARD";
}
