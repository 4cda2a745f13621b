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
  // (The in-process calls of test-mode companies to the simulator carry SII_MODE=simulator by design.)
  if (env.ENVIRONMENT === "production" && env.SII_MODE === "simulator" && !isInternalSimulatorCall(env)) {
    throw new ConfigurationError("ENVIRONMENT=production refuses SII_MODE=simulator: deploy with `--env production` (wrangler.toml sets SII_MODE there)");
  }
}

/**
 * The built-in SII simulator (its SOAP/REST pages, scenario control and CAF grants) is open to
 * anyone only in local development in simulator mode (`npm start`: ENVIRONMENT=development and
 * SII_MODE=simulator). Everywhere else (tests, staging, production...) it answers only the SII client
 * of a company (in-process, see `internalSimulatorEnv`) and requests carrying a test key
 * (src/countries/cl/simulator/gate.ts).
 */
export function simulatorEnabled(env: Pick<Env, "ENVIRONMENT" | "SII_MODE">): boolean {
  return env.SII_MODE === "simulator" && env.ENVIRONMENT === "development";
}

/**
 * The environment a company (or key) of one mode works in: test mode always talks to the
 * built-in SII simulator, in every deployment; live mode to the SII environment of SII_MODE.
 */
export function envForMode(env: Env, livemode: boolean): Env {
  return livemode || env.SII_MODE === "simulator" ? env : { ...env, SII_MODE: "simulator" };
}

/** Marks the env the SII client hands to the in-process simulator: no HTTP request can carry it. */
const INTERNAL_SIMULATOR_CALL = Symbol("internal simulator call");
/** The API client whose company an in-process call to the simulator acts for (its scenarios apply). */
const SIMULATOR_OWNER = Symbol("simulator owner");

/**
 * The environment of a company's SII client: that of its mode (envForMode) and, when that is the
 * simulator, the company's API client, whose scenarios the simulator applies to its in-process calls.
 */
export function envForCompany(env: Env, company: { livemode: boolean; clientId: string }): Env {
  const out = envForMode(env, company.livemode);
  return out.SII_MODE === "simulator" ? Object.assign({ ...out }, { [SIMULATOR_OWNER]: company.clientId }) : out;
}

export function internalSimulatorEnv(env: Env): Env {
  return Object.assign({ ...env }, { [INTERNAL_SIMULATOR_CALL]: true });
}

export function isInternalSimulatorCall(env: Env): boolean {
  return (env as unknown as Record<symbol, unknown>)[INTERNAL_SIMULATOR_CALL] === true;
}

/** The API client an in-process call acts for (set by envForCompany); undefined when none was named. */
export function simulatorOwnerOf(env: Env): string | undefined {
  const owner = (env as unknown as Record<symbol, unknown>)[SIMULATOR_OWNER];
  return typeof owner === "string" ? owner : undefined;
}
