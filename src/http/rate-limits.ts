/**
 * Request rate limits, enforced with the Workers Rate Limiting bindings (`[[ratelimits]]` in
 * wrangler.toml; simulated locally by miniflare). The numbers live in wrangler.toml; this table
 * repeats them for the OpenAPI document and a test checks both blocks of wrangler.toml against it.
 * The binding answers only yes or no and counts in fixed windows of `period` seconds, so a refused
 * request is told to retry after one whole period (the most it can have to wait).
 */
import { RATE_TIERS } from "../storage/db/schema";

export const RATE_LIMITS = {
  /** Every authenticated request, by API key. */
  API_KEY_RATE_LIMITER: { limit: 1200, period: 60, scope: "per API key, every authenticated operation" },
  /** Every request on a company's resources, by company, whichever key makes it. */
  COMPANY_RATE_LIMITER: { limit: 2400, period: 60, scope: "per company, every operation under that company (all keys together)" },
  /** Issuance (POST …/invoices), by company: its own budget on top of the two above. */
  ISSUANCE_RATE_LIMITER: { limit: 600, period: 60, scope: "per company, document issuance (POST /api/companies/{company_id}/invoices)" },
  /** The high-volume tier's company budget, in place of COMPANY_RATE_LIMITER. */
  HIGH_VOLUME_COMPANY_RATE_LIMITER: { limit: 12_000, period: 60, scope: "per company on the high-volume tier, every operation under that company (in place of the per-company limit)" },
  /** The high-volume tier's issuance budget, in place of ISSUANCE_RATE_LIMITER. */
  HIGH_VOLUME_ISSUANCE_RATE_LIMITER: { limit: 6_000, period: 60, scope: "per company on the high-volume tier, document issuance (in place of the issuance limit)" },
} as const;

export type RateLimitBinding = keyof typeof RATE_LIMITS;

/**
 * A company's rate tier (`companies.rate_tier`, set by an operator with `npm run companies:tier`)
 * picks the bindings that count its requests. The binding's limit is fixed in wrangler.toml, so a
 * tier is a pair of bindings of its own (each its own namespace), not a number stored per company.
 * STANDARD: 600 documents a minute at most, 864,000 a day flat out. HIGH_VOLUME: 6,000 a minute,
 * about 3 times the peak minute of a retailer issuing 1 million boletas a day (694 a minute on
 * average, about 2,100 in its peak hour: docs/capacity.md).
 */
export { RATE_TIERS };
export type RateTier = (typeof RATE_TIERS)[number];

export const TIER_LIMITERS: Record<RateTier, { company: RateLimitBinding; issuance: RateLimitBinding }> = {
  STANDARD: { company: "COMPANY_RATE_LIMITER", issuance: "ISSUANCE_RATE_LIMITER" },
  HIGH_VOLUME: { company: "HIGH_VOLUME_COMPANY_RATE_LIMITER", issuance: "HIGH_VOLUME_ISSUANCE_RATE_LIMITER" },
};

export const RATE_LIMITS_DOC = `**Rate limits.** Over a limit the answer is 429 \`RATE_LIMITED\` in the error envelope with a \`Retry-After\` header (seconds). Limits are counted in fixed windows, per Cloudflare location:

| Limit | Requests | Window |
|---|---|---|
${Object.values(RATE_LIMITS)
  .map((l) => `| ${l.scope} | ${l.limit} | ${l.period} s |`)
  .join("\n")}

A company is on the standard tier unless the operator of the service puts it on the high-volume tier (for a company that issues more than about 500,000 documents a day); the per-API-key limit applies on both tiers, so a high-volume company issues through several keys (for example one per point of sale).`;
