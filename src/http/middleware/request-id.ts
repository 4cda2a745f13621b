import type { MiddlewareHandler } from "hono";
import { newId } from "../../lib/ids";

/** The X-Request-Id a caller may choose (anything else is replaced by a new `req_` id). */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{8,128}$/;

/** Every response carries X-Request-Id: the caller's own if it is sane, otherwise a new `req_` id. */
export const requestId: MiddlewareHandler = async (c, next) => {
  const incoming = c.req.header("X-Request-Id");
  const id = incoming && REQUEST_ID_PATTERN.test(incoming) ? incoming : newId("req");
  c.set("requestId", id);
  await next();
  c.res.headers.set("X-Request-Id", id);
};
