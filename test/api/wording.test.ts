import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call, newCompany, newOwner, type Actor } from "../helpers/api";
import { SIMULATOR_CONTROL_ROUTES } from "../../src/countries/cl/simulator/control-routes";

/**
 * Every validation answer speaks the API's words: for each operation of the OpenAPI document, a body
 * (and a query) where every string with a pattern or format breaks it, every union is given a value
 * none of its forms takes, and every number is given text; no detail may carry the validator's own
 * wording (a regular expression, "Invalid input…", "nonoptional").
 */
type Schema = Record<string, any>;
interface Doc {
  paths: Record<string, Record<string, { parameters?: Schema[]; requestBody?: { content?: Record<string, { schema?: Schema }> } }>>;
  components?: { schemas?: Record<string, Schema> };
}

const ZOD_WORDING = /must match pattern|^Invalid input|^Invalid string|nonoptional|Invalid ISO|\/\^/;

let doc: Doc;
let owner: Actor;
let companyId: string;

beforeAll(async () => {
  doc = (await (await exports.default.fetch("http://localhost/openapi.json")).json()) as Doc;
  owner = await newOwner("Wording");
  companyId = await newCompany(owner);
});

function resolve(s: Schema | undefined): Schema {
  let out = s ?? {};
  for (let i = 0; out.$ref && i < 10; i++) out = doc.components?.schemas?.[String(out.$ref).split("/").pop()!] ?? {};
  return out;
}

/** A value that breaks `schema` in the ways above (undefined: leave the field out). */
function breaking(schema: Schema | undefined, depth = 0): unknown {
  const s = resolve(schema);
  if (depth > 8) return undefined;
  if (s.anyOf || s.oneOf) return [true];
  if (s.allOf) return breaking(Object.assign({}, ...s.allOf.map(resolve)), depth + 1);
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== "null") : s.type;
  if (type === "string") return s.pattern || s.format ? (s.format === "binary" ? undefined : "?broken?") : undefined;
  if (type === "number" || type === "integer") return "?broken?";
  if (type === "array") {
    const item = breaking(s.items, depth + 1);
    return item === undefined ? undefined : [item];
  }
  if (s.properties) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(s.properties as Record<string, Schema>)) {
      const b = breaking(v, depth + 1);
      if (b !== undefined) out[k] = b;
    }
    return out;
  }
  return undefined;
}

function concrete(path: string): string {
  return path.replace(/\{(idCompany|company_id)\}/g, companyId).replace(/\{format\}/g, "A4").replace(/\{document_type_id\}/g, "33").replace(/\{country\}/g, "CL").replace(/\{[^}]+\}/g, "x_00000000000000000000000000");
}

describe("validation answers in the API's words", () => {
  it("no detail of any operation's 400 carries the validator's wording", async () => {
    const seen: string[] = [];
    let answers = 0;
    // Deletions last: one of them deletes the company the others name.
    // The simulated SII's scenario and inject routes answer with the simulator's own checks (Simulator tag).
    const operations = Object.entries(doc.paths)
      .flatMap(([path, ops]) => Object.entries(ops).filter(([m]) => ["get", "post", "put", "patch", "delete"].includes(m)).map(([method, op]) => ({ path, method, op })))
      .filter(({ path, method }) => !SIMULATOR_CONTROL_ROUTES.includes(`${method.toUpperCase()} ${path}`));
    operations.sort((a, b) => Number(a.method === "delete") - Number(b.method === "delete"));
    for (const { path, method, op } of operations) {
      {
        const query = new URLSearchParams();
        for (const p of (op.parameters ?? []).map(resolve)) {
          if (p.in !== "query") continue;
          const b = p.name === "company_id" ? companyId : breaking(p.schema);
          if (typeof b === "string") query.set(p.name, b);
        }
        const schema = op.requestBody?.content?.["application/json"]?.schema;
        const body = schema ? breaking(schema) : undefined;
        const q = query.toString();
        const res = await call(method.toUpperCase(), `${concrete(path)}${q ? `?${q}` : ""}`, { key: owner.key, ...(body === undefined ? {} : { json: body }) });
        if (res.status !== 400) continue;
        answers++;
        for (const d of res.body.error.details as { field: string; message: string }[]) {
          if (ZOD_WORDING.test(d.message)) seen.push(`${method.toUpperCase()} ${path} ${d.field}: ${d.message}`);
        }
      }
    }
    expect(answers).toBeGreaterThan(30);
    expect(seen).toEqual([]);
  });
});
