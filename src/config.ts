import { parseKeyRing } from "./lib/secrets";
/**
 * Configuration checks of the Worker. The bindings and variables themselves are typed by
 * `wrangler types` from wrangler.toml (worker-configuration.d.ts, global `Env`; `npm run types`
 * regenerates it and `npm test` checks it is current).
 */
const LOCAL_ENVIRONMENTS = new Set(["development", "test"]);
export const REQUIRED_SECRETS = ["MASTER_KEY", "API_KEY_PEPPER"] as const;

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
  try {
    parseKeyRing(env.MASTER_KEY!);
  } catch (e) {
    throw new ConfigurationError(`${(e as Error).message} (one key: \`openssl rand -base64 32\`; a ring while rotating: \`2:<new>,1:<old>\`)`);
  }
  if (!["simulator", "certification", "production"].includes(env.SII_MODE)) {
    throw new ConfigurationError(`SII_MODE must be simulator, certification or production, got ${env.SII_MODE}`);
  }
  if (env.ENVIRONMENT === "production" && env.SII_MODE === "simulator") {
    throw new ConfigurationError("ENVIRONMENT=production refuses SII_MODE=simulator: deploy with `--env production` (wrangler.toml sets SII_MODE there)");
  }
}

/**
 * The built-in SII simulator (its SOAP/REST pages, scenario control and CAF grants) answers only
 * when SII_MODE is `simulator` and never in production, whatever SII_MODE says.
 */
export function simulatorEnabled(env: Pick<Env, "ENVIRONMENT" | "SII_MODE">): boolean {
  return env.SII_MODE === "simulator" && env.ENVIRONMENT !== "production";
}
