/**
 * Wiring of the SII client for the running Worker: the mode comes from env.SII_MODE (callers pass
 * `envForMode(env, company.livemode)`: test-mode companies always get the simulator); in simulator
 * mode the fetcher is the Worker's own app (`app.fetch(req, env, ctx)`), handed in by the composition
 * root (src/index.ts) through `useInProcessSimulator`, so requests never leave the isolate but go
 * through the full HTTP wire format (SOAP, multipart, cookies, headers).
 */
import { internalSimulatorEnv } from "../../../config";
import { SiiClient, type SiiClientOptions, type SiiMode } from "./client";

export * from "./client";
export * from "./errors";
export * from "./status";

export function siiModeOf(env: Pick<Env, "SII_MODE">): SiiMode {
  const m = env.SII_MODE;
  return m === "certification" || m === "production" ? m : "simulator";
}

/** How the Worker answers a request itself (its app's fetch). */
export type AppFetch = (req: Request, env: Env, ctx?: ExecutionContext) => Response | Promise<Response>;
let ownApp: AppFetch | undefined;

/** Wires the simulated SII to the Worker's own app; called once by the composition root. */
export function useInProcessSimulator(fetch: AppFetch): void {
  ownApp = fetch;
}

/** A client configured for this Worker's SII mode. `opts` may override anything (tests). */
export function siiClientFor(env: Env, ctx?: ExecutionContext, opts: Omit<SiiClientOptions, "mode"> = {}): SiiClient {
  const mode = siiModeOf(env);
  if (mode !== "simulator") return new SiiClient({ mode, ...opts });
  return new SiiClient({
    mode,
    fetcher: async (req) => {
      if (!ownApp) throw new Error("The simulated SII is not wired: the composition root calls useInProcessSimulator");
      return ownApp(req, internalSimulatorEnv(env), ctx);
    },
    ...opts,
  });
}
