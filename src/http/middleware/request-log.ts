import type { MiddlewareHandler } from "hono";
import { log, withLogContext } from "../../lib/log";
import type { AppEnv } from "../types";

/**
 * Every line written while a request is handled carries its request_id (and the company and client
 * once known: the auth middleware adds them); one access line closes each request. The query string
 * is never logged (an `apiKey` parameter sent by mistake would otherwise land in the logs).
 */
export const requestLog: MiddlewareHandler<AppEnv> = (c, next) =>
  withLogContext({ request_id: c.get("requestId") }, async () => {
    const started = Date.now();
    await next();
    const status = c.res.status;
    // 4xx answers are the caller's mistakes, not the service's: info; 5xx are errors.
    log(status >= 500 ? "error" : "info", "request", {
      method: c.req.method,
      path: c.req.path.slice(0, 300),
      status,
      duration_ms: Date.now() - started,
    });
  });
