/**
 * Requests generated from our own OpenAPI document with fast-check: for each operation,
 * valid and boundary inputs from its schemas, and invalid ones (wrong types, missing and unknown
 * fields, huge and unicode strings, bad ids, wrong content types, oversized bodies, broken
 * multipart, malformed and hostile XML uploads, missing or foreign keys).
 */
import fc from "fast-check";

type Schema = Record<string, any>;
export interface OpenApiDoc {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}
export interface Operation {
  operationId?: string;
  parameters?: { name: string; in: string; required?: boolean; schema?: Schema }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
}

export interface FuzzRequest {
  method: string;
  /** The documented path template, e.g. /api/companies/{company_id}. */
  template: string;
  path: string;
  kind: string;
  headers: Record<string, string>;
  body?: BodyInit;
}

/** Ids of real resources, by path-parameter name (plus a second set for destructive operations). */
export interface Fixtures {
  ids: Record<string, string>;
  /** Ids a DELETE may destroy without emptying the run (another company, a spare key...). */
  spare: Record<string, string>;
  /** Ids that exist but belong to another client. */
  foreign: Record<string, string>;
  keys: { owner: string; member: string; foreign: string };
}

// ---- values ----------------------------------------------------------------------------------

const HUGE = "A".repeat(70_000);
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "",
    " ",
    HUGE,
    "\u0000",
    "\uD800",
    "\uFEFF",
    "😀".repeat(500),
    "Ñuñoa ÁÉÍÓÚ 漢字 עברית",
    "'; DROP TABLE companies;--",
    "../../etc/passwd",
    "%00%2e%2e%2f",
    "<script>alert(1)</script>",
    "]]><x>&amp;",
    "${jndi:ldap://x}",
    "\r\nSet-Cookie: x=y",
    "null",
    "NaN",
    "-0",
    "9".repeat(400),
    "1e400",
    "2026-02-30",
    "0000-00-00 00:00:00",
  ),
  fc.string({ unit: "binary", maxLength: 64 }),
  fc.string({ unit: "grapheme", maxLength: 64 }),
);

const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(Number.MAX_SAFE_INTEGER, -1, 0, 1e308, -1e308),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
  hostileString,
);

const badId: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("x", "0", "-1", "cmp_", "inv_00000000000000000000000000", "cmp_01JD3Q4M6YV8T1N5B2K7C9XW3E", "null", "undefined", "ñ", "%", "..", "a".repeat(3000), "😀", "33 OR 1=1", "{id}"),
  fc.string({ minLength: 1, maxLength: 40 }),
);

function resolve(doc: OpenApiDoc, s: Schema | undefined): Schema {
  let out = s ?? {};
  for (let i = 0; out.$ref && i < 10; i++) out = doc.components?.schemas?.[String(out.$ref).split("/").pop()!] ?? {};
  return out;
}

/** Values valid (and at the boundaries) for a JSON schema. */
export function valueOf(doc: OpenApiDoc, schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(doc, schema);
  if (depth > 6) return fc.constant(null);
  const examples: unknown[] = [s.example, ...(Array.isArray(s.examples) ? s.examples : [])].filter((x) => x !== undefined);
  const withExample = (arb: fc.Arbitrary<unknown>) => (examples.length ? fc.oneof(fc.constantFrom(...examples), arb) : arb);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  if (s.const !== undefined) return fc.constant(s.const);
  const alternatives = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (alternatives?.length) return fc.oneof(...alternatives.map((a) => valueOf(doc, a, depth + 1)));
  if (Array.isArray(s.allOf) && s.allOf.length) return valueOf(doc, Object.assign({}, ...s.allOf.map((a: Schema) => resolve(doc, a))), depth + 1);
  const type = Array.isArray(s.type) ? s.type : [s.type];
  if (type.length > 1) return fc.oneof(...type.map((t: string) => valueOf(doc, { ...s, type: t }, depth + 1)));
  switch (type[0]) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "integer": {
      const min = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : -1_000_000);
      const max = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : 1_000_000);
      return withExample(fc.oneof(fc.integer({ min: Math.max(min, -(2 ** 31)), max: Math.min(max, 2 ** 31) }), fc.constantFrom(min, max)));
    }
    case "number":
      return withExample(fc.double({ min: s.minimum ?? -1e9, max: s.maximum ?? 1e9, noNaN: true, noDefaultInfinity: true }));
    case "string":
      return withExample(stringOf(s));
    case "array": {
      const item = valueOf(doc, s.items, depth + 1);
      return fc.array(item, { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 3, Math.max(3, s.minItems ?? 0)) });
    }
    case "object":
    case undefined: {
      if (!s.properties) return type[0] === "object" ? fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }) : fc.jsonValue({ maxDepth: 2 });
      const required: string[] = s.required ?? [];
      const props: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries(s.properties as Record<string, Schema>)) props[k] = valueOf(doc, v, depth + 1);
      return fc.record(props, { requiredKeys: required.filter((k) => k in props) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function stringOf(s: Schema): fc.Arbitrary<string> {
  const min = s.minLength ?? 0;
  const max = Math.min(s.maxLength ?? 40, 300);
  if (s.format === "date") return fc.date({ min: new Date("2000-01-01"), max: new Date("2030-12-31"), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
  if (s.format === "date-time") return fc.date({ min: new Date("2000-01-01"), max: new Date("2030-12-31"), noInvalidDate: true }).map((d) => d.toISOString());
  if (s.format === "email") return fc.emailAddress();
  if (s.format === "uri") return fc.webUrl();
  if (s.pattern) {
    try {
      return fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length <= Math.max(max, 60));
    } catch {
      // a pattern JavaScript cannot compile as written: fall through
    }
  }
  return fc.oneof(fc.string({ minLength: min, maxLength: Math.max(min, max) }), fc.constant("x".repeat(Math.max(min, Math.min(s.maxLength ?? min, 5000)))));
}

// ---- mutations -------------------------------------------------------------------------------

/** One random change that makes a valid value invalid (or leaves it at an edge). */
function mutate(value: unknown, picks: number[], wrong: unknown, hostile: string): unknown {
  const copy = structuredClone(value) as unknown;
  const op = picks[0]! % 6;
  if (copy === null || typeof copy !== "object") return op % 2 ? wrong : hostile;
  // Walk down to a random object or array.
  let node = copy as Record<string, unknown>;
  for (let i = 1; i < picks.length; i++) {
    const keys = Object.keys(node);
    if (keys.length === 0) break;
    const next = node[keys[picks[i]! % keys.length]!];
    if (next === null || typeof next !== "object" || picks[i]! % 3 === 0) break;
    node = next as Record<string, unknown>;
  }
  const keys = Object.keys(node);
  const key = keys.length ? keys[picks[1]! % keys.length]! : "x";
  if (op === 0) delete node[key];
  else if (op === 1) node[`${key}_unknown`] = wrong;
  else if (op === 2) node[key] = wrong;
  else if (op === 3) node[key] = hostile;
  else if (op === 4) return wrong;
  else node[key] = Array.isArray(node[key]) ? Array.from({ length: 2000 }, () => (node[key] as unknown[])[0] ?? 1) : { nested: node[key] };
  return copy;
}

function invalidOf(arb: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.tuple(arb, fc.array(fc.nat(), { minLength: 4, maxLength: 4 }), wrongType, hostileString).map(([v, picks, wrong, hostile]) => mutate(v, picks, wrong, hostile));
}

// ---- files -----------------------------------------------------------------------------------

const XML_HOSTILE = [
  '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]><AUTORIZACION>&lol3;</AUTORIZACION>',
  '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><EnvioDTE>&xxe;</EnvioDTE>',
  '<?xml version="1.0" encoding="ISO-8859-1"?><AUTORIZACION><CAF version="1.0"><DA><RE>76086428-5</RE><TD>33</TD><RNG><D>1</D><H>100</H></RNG></DA></CAF></AUTORIZACION>',
  `<?xml version="1.0"?>${"<a>".repeat(5000)}${"</a>".repeat(5000)}`,
  `<?xml version="1.0"?><EnvioDTE ${Array.from({ length: 2000 }, (_, i) => `a${i}="${i}"`).join(" ")}/>`,
  '<?xml version="1.0"?><EnvioDTE xmlns="http://www.sii.cl/SiiDte" version="1.0"><SetDTE ID="S"><Caratula/><DTE><Documento ID="F1"/></DTE></SetDTE></EnvioDTE>',
  "<?xml version='1.0' encoding='UTF-16'?><x/>",
  "<EnvioDTE><unclosed>",
  "\xff\xfe<\x00x\x00/\x00>\x00",
  '<?xml version="1.0"?><x><![CDATA[' + "z".repeat(100_000) + "]]></x>",
  "not xml at all",
];

const fileBytes: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.constantFrom(...XML_HOSTILE).map((x) => new TextEncoder().encode(x)),
  fc.uint8Array({ maxLength: 512 }),
  fc.constant(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13])), // only starts like a PNG
  fc.constant(new Uint8Array([0x30, 0x82, 0xff, 0xff, 0x02, 0x01, 0x03])), // a DER header claiming a huge length
  fc.constant(new Uint8Array(0)),
);

/** A multipart body for a form schema: each part from the schema, files from fileBytes, sometimes an unknown part. */
function formOf(doc: OpenApiDoc, schema: Schema): fc.Arbitrary<FormData> {
  const s = resolve(doc, schema);
  const props = Object.entries((s.properties ?? {}) as Record<string, Schema>);
  return fc.tuple(fc.array(fileBytes, { minLength: props.length, maxLength: props.length }), fc.array(hostileString, { minLength: props.length, maxLength: props.length }), fc.array(fc.boolean(), { minLength: props.length + 1, maxLength: props.length + 1 })).map(([files, texts, keep]) => {
    const form = new FormData();
    props.forEach(([name, p], i) => {
      if (!keep[i] && !(s.required ?? []).includes(name)) return;
      const r = resolve(doc, p);
      if (r.format === "binary" || r.type === undefined) form.append(name, new File([files[i]! as Uint8Array<ArrayBuffer>], `${name}.bin`));
      else form.append(name, texts[i]!);
    });
    if (keep[props.length]) form.append("unknown_part", "x");
    return form;
  });
}

const brokenMultipart: fc.Arbitrary<{ body: string; type: string }> = fc.constantFrom(
  { body: "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.xml\"\r\n\r\n<x/>", type: "multipart/form-data; boundary=b" }, // never closed
  { body: "--zzz\r\n\r\n--zzz--", type: "multipart/form-data; boundary=b" }, // other boundary
  { body: "garbage", type: "multipart/form-data" }, // no boundary
  { body: `--b\r\nContent-Disposition: form-data; name="${"n".repeat(10_000)}"\r\n\r\nx\r\n--b--\r\n`, type: "multipart/form-data; boundary=b" },
  { body: "--b\r\nContent-Disposition: form-data\r\n\r\nx\r\n--b--\r\n", type: "multipart/form-data; boundary=b" }, // part without a name
);

// ---- requests --------------------------------------------------------------------------------

export interface OperationRef {
  method: string;
  template: string;
  op: Operation;
}

export function operations(doc: OpenApiDoc): OperationRef[] {
  return Object.entries(doc.paths).flatMap(([template, item]) =>
    Object.entries(item)
      .filter(([m]) => ["get", "post", "put", "patch", "delete"].includes(m))
      .map(([method, op]) => ({ method: method.toUpperCase(), template, op })),
  );
}

const KINDS = ["valid", "valid", "invalid-body", "invalid-body", "bad-id", "bad-query", "content-type", "auth", "multipart", "oversized"] as const;

/** One request to an operation; `kind` says what was done to it. */
export function requestArb(doc: OpenApiDoc, ref: OperationRef, fx: Fixtures): fc.Arbitrary<FuzzRequest> {
  const { op, method, template } = ref;
  const params = op.parameters ?? [];
  const pathParams = params.filter((p) => p.in === "path");
  const queryParams = params.filter((p) => p.in === "query" && p.name !== "apiKey");
  const content = op.requestBody?.content ?? {};
  const jsonSchema = content["application/json"]?.schema;
  const formSchema = content["multipart/form-data"]?.schema;
  const ids = method === "DELETE" ? { ...fx.ids, ...fx.spare } : fx.ids;

  const pathValue = (name: string, schema: Schema | undefined): fc.Arbitrary<string> => {
    const known = ids[name];
    const fromSchema = valueOf(doc, schema).map(String);
    return known ? fc.oneof({ arbitrary: fc.constant(known), weight: 4 }, { arbitrary: fromSchema, weight: 1 }) : fromSchema;
  };
  const queryValue = (p: { name: string; schema?: Schema }): fc.Arbitrary<string> => {
    const known = ids[p.name];
    return known ? fc.constant(known) : valueOf(doc, p.schema).map((v) => (typeof v === "string" ? v : JSON.stringify(v)));
  };
  const pathArb = fc.record(Object.fromEntries(pathParams.map((p) => [p.name, pathValue(p.name, p.schema)])) as Record<string, fc.Arbitrary<string>>);
  const queryArb = fc.record(Object.fromEntries(queryParams.map((p) => [p.name, queryValue(p)])) as Record<string, fc.Arbitrary<string>>, {
    requiredKeys: queryParams.filter((p) => p.required || ids[p.name]).map((p) => p.name),
  });

  return fc
    .record({
      kind: fc.constantFrom(...KINDS),
      path: pathArb,
      query: queryArb,
      json: jsonSchema ? valueOf(doc, jsonSchema) : fc.constant(undefined),
      badJson: jsonSchema ? invalidOf(valueOf(doc, jsonSchema)) : wrongType,
      form: formSchema ? formOf(doc, formSchema) : fc.constant(undefined),
      broken: brokenMultipart,
      badId: badId,
      foreign: fc.boolean(),
      hostile: hostileString,
      pick: fc.nat(),
      contentType: fc.constantFrom("text/plain", "application/xml", "application/x-www-form-urlencoded", "application/json; charset=latin1", "", "multipart/form-data"),
    })
    .map((g) => {
      const path = { ...g.path };
      const query: Record<string, string> = { ...g.query };
      const headers: Record<string, string> = { "X-Api-Key": fx.keys.owner };
      let body: BodyInit | undefined;
      if (jsonSchema) {
        body = JSON.stringify(g.kind === "invalid-body" ? g.badJson : g.json ?? {});
        headers["Content-Type"] = "application/json";
      } else if (formSchema) {
        body = g.form;
      }
      const names = Object.keys(path);
      switch (g.kind) {
        case "bad-id":
          if (names.length) {
            const name = names[g.pick % names.length]!;
            const foreign = fx.foreign[name];
            path[name] = g.foreign && foreign ? foreign : g.badId;
          } else query[`zz_${g.pick % 3}`] = g.hostile;
          break;
        case "bad-query": {
          const qn = Object.keys(query);
          if (qn.length && g.pick % 2) query[qn[g.pick % qn.length]!] = g.hostile;
          else query[g.pick % 3 === 0 ? "apikey" : "unknown_param"] = g.hostile;
          break;
        }
        case "content-type":
          if (g.pick % 3 === 0) body = g.hostile;
          headers["Content-Type"] = g.contentType;
          if (!g.contentType) delete headers["Content-Type"];
          if (body instanceof FormData) body = "x=1";
          break;
        case "auth": {
          const choice = g.pick % 4;
          if (choice === 0) delete headers["X-Api-Key"];
          else if (choice === 1) headers["X-Api-Key"] = "dte_test_" + "0".repeat(40);
          else if (choice === 2) headers["X-Api-Key"] = fx.keys.member;
          else headers["X-Api-Key"] = fx.keys.foreign;
          break;
        }
        case "multipart":
          if (formSchema && g.pick % 2) {
            body = g.broken.body;
            headers["Content-Type"] = g.broken.type;
          } else if (!formSchema) {
            const f = new FormData();
            f.append("file", new File([g.hostile], "x.xml"));
            body = f;
            delete headers["Content-Type"];
          }
          break;
        case "oversized":
          // One in ten oversized requests carries 2.5 MiB (slow to build); the others a large JSON.
          if (g.pick % 10 === 0) {
            body = "x".repeat(2.5 * 1024 * 1024);
            headers["Content-Type"] = formSchema ? "multipart/form-data; boundary=b" : "application/json";
          } else if (jsonSchema) body = JSON.stringify({ ...(typeof g.json === "object" && g.json ? g.json : {}), padding: "p".repeat(200_000) });
          break;
      }
      if (method === "GET" || method === "DELETE") {
        if (g.kind !== "content-type") body = undefined;
        else body = undefined; // fetch refuses a GET body; the content type alone is sent
      }
      const filled = template.replace(/\{([^}]+)\}/g, (_, n: string) => encodeURIComponent(path[n] ?? "x") || "x");
      const qs = new URLSearchParams(query).toString();
      return { method, template, path: qs ? `${filled}?${qs}` : filled, kind: g.kind, headers, body };
    });
}
