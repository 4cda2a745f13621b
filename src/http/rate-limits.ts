/**
 * Request rate limits, enforced with the Workers Rate Limiting bindings (`[[ratelimits]]` in
 * wrangler.toml; simulated locally by miniflare). The numbers live in wrangler.toml; this table
 * repeats them for the OpenAPI document and a test checks both blocks of wrangler.toml against it.
 * The binding answers only yes or no and counts in fixed windows of `period` seconds, so a refused
 * request is told to retry after one whole period (the most it can have to wait).
 */
export const RATE_LIMITS = {
  /** Every authenticated request, by API key. */
  API_KEY_RATE_LIMITER: { limit: 1200, period: 60, scope: "per API key, every authenticated operation" },
  /** Every request on a company's resources, by company, whichever key makes it. */
  COMPANY_RATE_LIMITER: { limit: 2400, period: 60, scope: "per company, every operation under that company (all keys together)" },
  /** Issuance (POST …/invoices), by company: its own budget on top of the two above. */
  ISSUANCE_RATE_LIMITER: { limit: 600, period: 60, scope: "per company, document issuance (POST /api/companies/{company_id}/invoices)" },
} as const;

export type RateLimitBinding = keyof typeof RATE_LIMITS;

export const RATE_LIMITS_DOC = `**Rate limits.** Over a limit the answer is 429 \`RATE_LIMITED\` in the error envelope with a \`Retry-After\` header (seconds). Limits are counted in fixed windows, per Cloudflare location:

| Limit | Requests | Window |
|---|---|---|
${Object.values(RATE_LIMITS)
  .map((l) => `| ${l.scope} | ${l.limit} | ${l.period} s |`)
  .join("\n")}`;
