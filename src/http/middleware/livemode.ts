import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../types";

/**
 * Every successful JSON answer of an authenticated operation says which mode it belongs to:
 * a top-level `livemode`, the key's mode. An object that already states its own mode
 * (an API key of the other mode, in a key list) keeps it. Errors keep the one error envelope.
 */
export const livemodeInResponses: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  const principal = c.get("principal");
  const res = c.res;
  if (!principal || res.status >= 300 || !(res.headers.get("content-type") ?? "").startsWith("application/json")) return;
  const body: unknown = await res.clone().json().catch(() => undefined);
  if (body === null || typeof body !== "object" || Array.isArray(body) || "livemode" in body) return;
  const headers = new Headers(res.headers);
  headers.delete("content-length");
  c.res = new Response(JSON.stringify({ ...body, livemode: principal.livemode }), { status: res.status, statusText: res.statusText, headers });
};
