import type { Context, Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { z, type ZodError } from "zod";
import { AppError, ERROR_CODES, type ErrorCode, type ErrorDetail } from "../../lib/errors";
import { errorBody } from "./envelope";
import { ConfigurationError } from "../../config";
import { log } from "../../lib/log";
import { suggestion } from "../../lib/suggestion";
import type { UnknownKeysIssue } from "../strict";

function requestIdOf(c: Context): string {
  return (c.get("requestId") as string | undefined) ?? "req_unknown";
}

export function respondError(c: Context, code: ErrorCode, message: string, details: ErrorDetail[] = [], headers: Record<string, string> = {}) {
  const requestId = requestIdOf(c);
  const res = c.json(errorBody(code, message, requestId, details), ERROR_CODES[code].status as 400);
  res.headers.set("X-Request-Id", requestId);
  for (const [k, v] of Object.entries(headers)) res.headers.set(k, v);
  return res;
}

/** `items[3].quantity` from a zod path. */
export function fieldPath(path: ReadonlyArray<PropertyKey>): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out || "(body)";
}

/**
 * Zod's default messages in the words of the API (a schema's own message still wins):
 * - a field that was not sent: "Required: expected string." instead of "Invalid input: expected
 *   string, received undefined", and "Required: expected one of "ACD"|…" instead of "Invalid option:
 *   …", which does not say the field is missing (JSON has no undefined: it is a field left out);
 * - a choice given in the wrong case or misspelt names the option meant: `Invalid option "acd" (did
 *   you mean "ACD"?): expected one of …`;
 * - lengths and bounds: "At most 256 characters." instead of "Too big: expected string to have
 *   <=256 characters", "Must not be empty.", "At least 1 item.", "At most 100.".
 */
z.config({
  customError: (issue) => {
    if (issue.input === undefined) {
      if (issue.code === "invalid_type") return `Required: expected ${issue.expected}.`;
      if (issue.code === "invalid_value") return `Required: expected ${choices(issue.values)}.`;
      if (issue.code === "invalid_union") return "Required.";
      return undefined;
    }
    if (issue.code === "invalid_value" && typeof issue.input === "string") {
      const meant = optionMeant(issue.input, issue.values);
      return `Invalid option ${JSON.stringify(issue.input)}${meant === undefined ? "" : ` (did you mean ${JSON.stringify(meant)}?)`}: expected ${choices(issue.values)}`;
    }
    if (issue.code === "invalid_type") return `Expected ${KINDS[issue.expected] ?? issue.expected}, got ${kindOf(issue.input)}.`;
    if (issue.code === "too_big" || issue.code === "too_small") return boundMessage(issue.code, issue.origin, Number(issue.code === "too_big" ? issue.maximum : issue.minimum), issue.inclusive ?? true);
    return undefined;
  },
});

/** What a JSON value is, in words ("Expected a number, got text."). */
const KINDS: Record<string, string> = { number: "a number", int: "a whole number", string: "text", boolean: "true or false", object: "an object", array: "an array", null: "null" };
function kindOf(input: unknown): string {
  if (input === null) return "null";
  if (Array.isArray(input)) return "an array";
  if (input instanceof File) return "a file";
  return KINDS[typeof input] ?? typeof input;
}

function choices(values: readonly unknown[]): string {
  return `${values.length > 1 ? "one of " : ""}${values.map((v) => JSON.stringify(v)).join("|")}`;
}

/** The option a string meant: the same but for case, else one a few edits away (case ignored). */
function optionMeant(input: string, values: readonly unknown[]): unknown {
  const options = values.filter((v): v is string => typeof v === "string");
  const lower = input.toLowerCase();
  const same = options.find((v) => v.toLowerCase() === lower);
  if (same !== undefined) return same;
  const near = suggestion(lower, options.map((v) => v.toLowerCase()));
  return near === undefined ? undefined : options.find((v) => v.toLowerCase() === near);
}

function boundMessage(code: "too_big" | "too_small", origin: string, bound: number, inclusive: boolean): string | undefined {
  const big = code === "too_big";
  const unit = origin === "string" ? "character" : origin === "array" ? "item" : null;
  if (unit) {
    if (!big && bound === 1) return origin === "string" ? "Must not be empty." : "At least 1 item.";
    return `${big ? "At most" : "At least"} ${bound} ${unit}${bound === 1 ? "" : "s"}.`;
  }
  if (origin !== "number" && origin !== "bigint") return undefined;
  return `${big ? (inclusive ? "At most" : "Less than") : inclusive ? "At least" : "More than"} ${bound}.`;
}

/** One detail per issue; an unknown-keys issue gives one per key, with a close known name when there is one. */
export function zodDetails(error: ZodError): ErrorDetail[] {
  return error.issues.flatMap((issue) => {
    if (issue.code !== "unrecognized_keys") return [{ field: fieldPath(issue.path), message: issue.message }];
    const known = (issue as unknown as UnknownKeysIssue).known ?? [];
    return issue.keys.map((key) => {
      const close = suggestion(key, known);
      return { field: fieldPath([...issue.path, key]), message: `Unknown field${close ? ` (did you mean \`${close}\`?)` : ""}.` };
    });
  });
}

/** defaultHook of every OpenAPIHono: validation failures use the envelope with per-field details. */
export function validationHook(result: { success: boolean; error?: unknown; target?: string }, c: Context) {
  if (!result.success) {
    const target = result.target;
    const details = zodDetails(result.error as ZodError);
    const where = target === "json" ? "body" : target === "query" ? "query string" : target === "param" ? "path" : target ?? "request";
    return respondError(c, "VALIDATION_FAILED", `The ${where} is invalid: ${details.map((d) => `${d.field}: ${d.message}`).join("; ")}`, details);
  }
}

/**
 * Whether an error is one the platform marks transient: a Durable Object call that failed because
 * the object was restarting or moving, or the connection dropped (`.retryable`, after the runtime's
 * own retries), or because it is overloaded (`.overloaded`: retry later, not at once). Drizzle wraps
 * a store's error as the `cause` of its own, so the chain is followed a few steps.
 */
export function transientFailure(err: unknown): { overloaded: boolean } | null {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && e !== null && typeof e === "object"; depth++) {
    const x = e as { retryable?: unknown; overloaded?: unknown; cause?: unknown };
    if (x.overloaded === true) return { overloaded: true };
    if (x.retryable === true) return { overloaded: false };
    e = x.cause;
  }
  return null;
}

export function onError(err: Error, c: Context) {
  if (err instanceof AppError) return respondError(c, err.code, err.message, err.details, err.headers);
  if (err instanceof HTTPException) {
    if (err.status === 400 && /json/i.test(err.message)) return respondError(c, "MALFORMED_JSON", "The request body is not valid JSON.");
    if (err.status === 400 && /formdata/i.test(err.message)) return respondError(c, "VALIDATION_FAILED", "The multipart/form-data body could not be read.");
    if (err.status === 415) {
      return respondError(c, "UNSUPPORTED_MEDIA_TYPE", `Content-Type ${c.req.header("content-type") ?? "(none)"} is not accepted here.`);
    }
    if (err.status === 413) return respondError(c, "PAYLOAD_TOO_LARGE", "The request body is too large.");
  }
  if (err instanceof ConfigurationError) {
    log("error", "configuration error", { request_id: requestIdOf(c), error: err.message });
    return respondError(c, "INTERNAL", "The service is misconfigured. Quote the request_id to support.");
  }
  const transient = transientFailure(err);
  if (transient) {
    log("warn", "storage briefly unavailable", { request_id: requestIdOf(c), overloaded: transient.overloaded, error: String(err?.message) });
    const message = transient.overloaded
      ? "This company's storage is busier than it can take right now. Slow down, and retry after the seconds in Retry-After."
      : "Storage was briefly unavailable. Retry after the seconds in Retry-After; with the same Idempotency-Key a POST is done at most once.";
    return respondError(c, "SERVICE_UNAVAILABLE", message, [], { "Retry-After": transient.overloaded ? "10" : "1" });
  }
  log("error", "unhandled error", { request_id: requestIdOf(c), error: String(err?.message), stack: err?.stack });
  return respondError(c, "INTERNAL", "An unexpected error occurred. Quote the request_id to support.");
}

/** 404 for unknown paths, 405 (with Allow) when the path exists with other methods. */
export function notFoundHandler(app: Hono<any, any, any>) {
  let patterns: { method: string; re: RegExp }[] | null = null;
  return (c: Context) => {
    patterns ??= app.routes
      .filter((r) => r.method !== "ALL")
      .map((r) => ({
        method: r.method,
        re: new RegExp(`^${r.path.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\/:[^/]+/g, "/[^/]+").replace(/\*/g, ".*")}$`),
      }));
    const path = new URL(c.req.url).pathname;
    const allowed = [...new Set(patterns.filter((p) => p.re.test(path)).map((p) => p.method))];
    if (allowed.length > 0) {
      return respondError(c, "METHOD_NOT_ALLOWED", `${c.req.method} is not allowed on ${path}; allowed: ${allowed.join(", ")}.`, [], { Allow: allowed.join(", ") });
    }
    return respondError(c, "ROUTE_NOT_FOUND", `No operation at ${c.req.method} ${path}. The API is described at /openapi.json and /docs.`);
  };
}
