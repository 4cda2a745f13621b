/** What every simulated SII service shares: its paths, limits, the SOAP/XML answer helper and the token cookie. */
import { type Context } from "hono";
import type { AppEnv } from "../../../http/types";

/** Paths of the simulator relative to its mount point, for the README and the docs. */
export const SIMULATOR_PATHS = [
  { method: "POST", path: "/DTEWS/CrSeed.jws", what: "SOAP CrSeed.getSeed" },
  { method: "POST", path: "/DTEWS/GetTokenFromSeed.jws", what: "SOAP GetTokenFromSeed.getToken (signed seed)" },
  { method: "POST", path: "/DTEWS/QueryEstUp.jws", what: "SOAP QueryEstUp.getEstUp (envelope state)" },
  { method: "POST", path: "/DTEWS/QueryEstDte.jws", what: "SOAP QueryEstDte.getEstDte (document state)" },
  { method: "POST", path: "/cgi_dte/UPL/DTEUpload", what: "DTEUpload multipart (EnvioDTE)" },
  { method: "GET", path: "/recursos/v1/boleta.electronica.semilla", what: "Boleta REST seed" },
  { method: "POST", path: "/recursos/v1/boleta.electronica.token", what: "Boleta REST token" },
  { method: "POST", path: "/recursos/v1/boleta.electronica.envio", what: "Boleta REST upload (EnvioBOLETA)" },
  { method: "GET", path: "/recursos/v1/boleta.electronica.envio/{rut}-{dv}-{trackid}", what: "Boleta REST envelope status" },
  { method: "POST", path: "/cgi_rtc/RTC/RTCAnotEnvio.cgi", what: "RPETC multipart upload (AEC, cessions)" },
  { method: "POST", path: "/DTEWS/services/wsRPETCConsulta", what: "SOAP wsRPETCConsulta (getEstEnvio, getEstCesion, getEstCesionRelac)" },
  { method: "GET", path: "/scenario", what: "List active scenarios" },
  { method: "POST", path: "/scenario", what: "Add a scenario (accept, reject, object, delay, down)" },
  { method: "DELETE", path: "/scenario", what: "Remove all scenarios" },
] as const;

/** Largest envelope the simulator takes (the main app's body limit is 2 MiB anyway). */
export const MAX_FILE_BYTES = 2 * 1024 * 1024;

export type C = Context<AppEnv>;

export const xml = (c: C, body: string, status = 200) => c.body(body, status as 200, { "Content-Type": "text/xml; charset=utf-8" });

export function numAtencion(now: Date): string {
  return `${Math.floor(Math.random() * 9e5) + 1e5} (${now.toISOString().slice(0, 19).replace("T", " ")})`;
}

export function cookieToken(c: C): string | undefined {
  const m = /(?:^|;\s*)TOKEN=([^;]+)/.exec(c.req.header("cookie") ?? "");
  return m?.[1]?.trim();
}
