/**
 * Configuration checks of the Worker. The bindings and variables themselves are typed by
 * `wrangler types` from wrangler.toml (worker-configuration.d.ts, global `Env`; `npm run types`
 * regenerates it and `npm test` checks it is current).
 */
const LOCAL_ENVIRONMENTS = new Set(["development", "test"]);
const REQUIRED_SECRETS = ["MASTER_KEY", "API_KEY_PEPPER"] as const;

export class ConfigurationError extends Error {}

/**
 * Secrets have working defaults only through `.dev.vars` (local) or the test configuration.
 * In any deployed environment a missing secret stops the service with a clear log line instead
 * of silently running with a guessable key.
 */
export function assertConfigured(env: Env): void {
  const missing = REQUIRED_SECRETS.filter((name) => !env[name] || String(env[name]).length < 16);
  if (missing.length > 0) {
    const where = LOCAL_ENVIRONMENTS.has(env.ENVIRONMENT)
      ? "copy .dev.vars.example to .dev.vars (npm start does this on first run)"
      : `set them with \`wrangler secret put\` for environment ${env.ENVIRONMENT}`;
    throw new ConfigurationError(`Missing or too short secrets: ${missing.join(", ")}; ${where}`);
  }
  if (base64Length(env.MASTER_KEY!) !== 32) {
    throw new ConfigurationError("MASTER_KEY must be the base64 of exactly 32 random bytes (e.g. `openssl rand -base64 32`)");
  }
  if (!["simulator", "certification", "production"].includes(env.SII_MODE)) {
    throw new ConfigurationError(`SII_MODE must be simulator, certification or production, got ${env.SII_MODE}`);
  }
}

function base64Length(value: string): number {
  try {
    return atob(value).length;
  } catch {
    return -1;
  }
}
