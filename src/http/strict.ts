import { z } from "@hono/zod-openapi";

/**
 * Strict input: every object of a request body or query, at any depth, refuses keys it
 * does not declare. defineRoute applies this when a route is declared, so every route gets it; the
 * OpenAPI document then shows `additionalProperties: false`.
 *
 * The `apiKey` query parameter and multipart form field of the reference are accepted and ignored
 * (DECISIONS 4): only the X-Api-Key header counts. A JSON body has no such field and refuses it.
 */

/** Set on an `unrecognized_keys` issue by our error map: the names the object knows. */
export interface UnknownKeysIssue {
  code: "unrecognized_keys";
  keys: string[];
  path: PropertyKey[];
  known?: string[];
}


type AnyZod = z.ZodType & { _zod: { def: Record<string, any> }; clone(def: unknown, params?: { parent: boolean }): z.ZodType };

const cache = new WeakMap<object, z.ZodType>();

function strictObject(schema: AnyZod): z.ZodType {
  const def = schema._zod.def;
  const shape: Record<string, z.ZodType> = {};
  for (const [key, value] of Object.entries(def.shape as Record<string, z.ZodType>)) shape[key] = deepStrict(value);
  if (def.catchall) return schema.clone({ ...def, shape }, { parent: true }); // an explicit catchall is a map: keep it
  const known = Object.keys(shape);
  const previous = def.error as ((iss: any) => unknown) | undefined;
  const error = (iss: any) => {
    if (iss.code !== "unrecognized_keys") return previous?.(iss);
    iss.known = known; // read by the validation hook to suggest a close name
    return `Unknown field${iss.keys.length > 1 ? "s" : ""}: ${iss.keys.join(", ")}`;
  };
  return schema.clone({ ...def, shape, catchall: z.never(), error }, { parent: true });
}

/** A copy of `schema` whose objects (at any depth) refuse unknown keys; metadata is inherited. */
export function deepStrict<T extends z.ZodType>(schema: T): T {
  const s = schema as unknown as AnyZod;
  if (!s?._zod) return schema;
  const hit = cache.get(s);
  if (hit) return hit as T;
  const def = s._zod.def;
  const wrap = (key: string) => {
    const inner = deepStrict(def[key]);
    return inner === def[key] ? s : s.clone({ ...def, [key]: inner }, { parent: true });
  };
  let out: z.ZodType = s;
  switch (def.type) {
    case "object":
      out = strictObject(s);
      break;
    case "array":
      out = wrap("element");
      break;
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "readonly":
    case "nonoptional":
    case "catch":
      out = wrap("innerType");
      break;
    case "pipe":
      out = wrap("in");
      break;
    case "record":
      out = wrap("valueType");
      break;
    case "union": {
      const options = (def.options as z.ZodType[]).map((o) => deepStrict(o));
      out = options.every((o, i) => o === def.options[i]) ? s : s.clone({ ...def, options }, { parent: true });
      break;
    }
    // intersections stay open (each side would refuse the other's keys); lazy schemas are not walked
  }
  cache.set(s, out);
  return out as T;
}

const IGNORED_API_KEY = z
  .string()
  .optional()
  .openapi({ description: "Ignored (DECISIONS 4): only the X-Api-Key header identifies the caller." });

/** A query or form schema with the ignored `apiKey` field added (so strictness does not refuse it). */
export function withIgnoredApiKey(schema: z.ZodType | undefined): z.ZodType {
  if (!schema) return z.object({ apiKey: IGNORED_API_KEY });
  const def = (schema as AnyZod)._zod.def;
  if (def.type !== "object" || "apiKey" in def.shape) return schema;
  return (schema as AnyZod).clone({ ...def, shape: { ...def.shape, apiKey: IGNORED_API_KEY } }, { parent: true });
}
