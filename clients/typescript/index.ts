/**
 * Typed client of the DTE API: openapi-fetch over the types openapi-typescript generated from the
 * service's OpenAPI document (./schema.d.ts, rebuilt by `npm run client:generate`).
 *
 *   const dte = createDteClient({ baseUrl: "http://127.0.0.1:8787", apiKey: process.env.DTE_API_KEY! });
 *   const { data, error } = await dte.POST("/api/companies", { body: { legal_name: "…", … } });
 *
 * Every path, parameter, body and answer is typed; `error` is the API's error envelope.
 */
import createClient, { type Client, type ClientOptions } from "openapi-fetch";
import type { components, paths } from "./schema";

export type { components, paths };
export type DteClient = Client<paths>;
/** The error body every failure answers (DECISIONS 8). */
export interface ApiError {
  error: { code: string; message: string; request_id: string; details: { field: string; message: string }[] };
}

export interface DteClientOptions extends Omit<ClientOptions, "baseUrl" | "headers"> {
  /** Where the service runs, e.g. http://127.0.0.1:8787 (`npm start`). */
  baseUrl: string;
  /** A test (`dte_test_…`) or live (`dte_live_…`) key. */
  apiKey: string;
  headers?: Record<string, string>;
}

export function createDteClient({ baseUrl, apiKey, headers, ...options }: DteClientOptions): DteClient {
  return createClient<paths>({ baseUrl: baseUrl.replace(/\/$/, ""), headers: { "X-Api-Key": apiKey, ...headers }, ...options });
}
