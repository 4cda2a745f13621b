/**
 * Wiring of the SII client for the running Worker: the mode comes from env.SII_MODE (callers pass
 * `envForMode(env, company.livemode)`: test-mode companies always get the simulator); in simulator
 * mode the fetcher is the Worker's own app (`app.fetch(req, env, ctx)`), so requests never leave the
 * isolate but go through the full HTTP wire format (SOAP, multipart, cookies, headers).
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

type App = (typeof import("../../../app"))["app"];
let simulatorApp: Promise<App> | undefined;

/** The Worker's own app, imported once on first use: the app imports the simulator, which must not import the app back at load time. */
function ownApp(): Promise<App> {
  return (simulatorApp ??= import("../../../app").then((m) => m.app));
}

/** A client configured for this Worker's SII mode. `opts` may override anything (tests). */
export function siiClientFor(env: Env, ctx?: ExecutionContext, opts: Omit<SiiClientOptions, "mode"> = {}): SiiClient {
  const mode = siiModeOf(env);
  if (mode !== "simulator") return new SiiClient({ mode, ...opts });
  return new SiiClient({
    mode,
    fetcher: async (req) => (await ownApp()).fetch(req, internalSimulatorEnv(env), ctx),
    ...opts,
  });
}
