/**
 * Where the SII client talks to, by mode:
 * - simulator (default): our own simulator, base `http://sii.simulator/simulator/sii`, served
 *   in-process (see ./index.ts siiClientFor) — the full HTTP wire format without a network;
 * - certification: maullin.sii.cl (SOAP + DTEUpload), apicert.sii.cl / pangal.sii.cl (boleta REST);
 * - production: palena.sii.cl, api.sii.cl / rahue.sii.cl.
 */
export type SiiMode = "simulator" | "certification" | "production";

export interface SiiEndpoints {
  /** SOAP DTEWS and DTEUpload host, e.g. https://maullin.sii.cl */
  soapBase: string;
  /** Boleta REST seed/token/status base, e.g. https://apicert.sii.cl/recursos/v1 */
  restBase: string;
  /** Boleta REST upload base, e.g. https://pangal.sii.cl/recursos/v1 */
  restUploadBase: string;
}

export const SII_SIMULATOR_BASE_URL = "http://sii.simulator/simulator/sii";

export function siiEndpoints(mode: SiiMode, simulatorBaseUrl: string = SII_SIMULATOR_BASE_URL): SiiEndpoints {
  switch (mode) {
    case "certification":
      return { soapBase: "https://maullin.sii.cl", restBase: "https://apicert.sii.cl/recursos/v1", restUploadBase: "https://pangal.sii.cl/recursos/v1" };
    case "production":
      return { soapBase: "https://palena.sii.cl", restBase: "https://api.sii.cl/recursos/v1", restUploadBase: "https://rahue.sii.cl/recursos/v1" };
    case "simulator": {
      const base = simulatorBaseUrl.replace(/\/+$/, "");
      return { soapBase: base, restBase: `${base}/recursos/v1`, restUploadBase: `${base}/recursos/v1` };
    }
  }
}
