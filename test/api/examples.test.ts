import { beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { ROUTE_REGISTRY, type RegisteredRoute } from "../../src/http/route";
import { call, newOwner, type Actor } from "../helpers/api";
import { makeFakeCertificate, makeFakePfx } from "../helpers/fake-certificates";
import { datedNow, untilBuyerDeliveriesSettled, untilFinal } from "../helpers/issuer";

/**
 * The reference's examples: every operation of /openapi.json shows a success example and every
 * request body an example; each example passes the operation's own schema (request bodies the
 * strict request schema the route validates with, answers the documented response schema); and the
 * create examples, sent to the Worker as they stand, are taken: the factura example is issued and
 * the simulated SII accepts it.
 */
type Json = Record<string, any>;
interface Media {
  schema?: Json;
  example?: unknown;
  examples?: Record<string, { value?: unknown }>;
}
type Operation = { requestBody?: { content: Record<string, Media> }; responses: Record<string, { content?: Record<string, Media> }> };

let doc: { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Json> } };

beforeAll(async () => {
  doc = (await call("GET", "/openapi.json")).body;
});

const METHODS = ["get", "post", "put", "patch", "delete"];
const name = (r: RegisteredRoute) => `${r.route.method.toUpperCase()} ${r.route.path}`;
const resolve = (s: Json | undefined): Json => (s?.$ref ? doc.components.schemas[String(s.$ref).split("/").pop()!]! : (s ?? {}));
const isBinary = (media: Media) => resolve(media.schema).format === "binary";
const hasExample = (media: Media) => media.example !== undefined || Object.keys(media.examples ?? {}).length > 0;
const exampleOf = (media: Media) => (media.example !== undefined ? media.example : Object.values(media.examples ?? {})[0]?.value);

function operations(): [string, Operation][] {
  return Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).filter(([m]) => METHODS.includes(m)).map(([m, op]) => [`${m.toUpperCase()} ${path}`, op] as [string, Operation]));
}

/** A multipart example with its file parts (binary in the document) as files, as a client sends them. */
function asForm(example: Json, schema: Json): Json {
  const properties = resolve(schema).properties ?? {};
  return Object.fromEntries(Object.entries(example).map(([k, v]) => [k, resolve(properties[k]).format === "binary" ? new File([String(v)], `${k}.bin`) : v]));
}

describe("examples in /openapi.json", () => {
  it("every operation has a success example; only operations that answer a binary file (PDF, image) have none", () => {
    const missing: string[] = [];
    const binaryOnly: string[] = [];
    for (const [op, operation] of operations()) {
      const successes = Object.entries(operation.responses).filter(([status]) => /^2\d\d$/.test(status));
      if (successes.length === 0) missing.push(`${op}: no success response`);
      const media = successes.flatMap(([status, r]) => Object.entries(r.content ?? {}).map(([type, m]) => ({ at: `${op} ${status} ${type}`, m })));
      for (const { at, m } of media) if (!isBinary(m) && !hasExample(m)) missing.push(at);
      if (media.length > 0 && media.every(({ m }) => isBinary(m))) binaryOnly.push(op);
    }
    expect(missing).toEqual([]);
    expect(binaryOnly.sort()).toEqual(["GET /api/companies/{company_id}/cessions/{cession_id}/pdf", "GET /files/logos/{company_id}/{file}", "POST /api/companies/{company_id}/invoices/{invoice_id}/download-pdf/{format}"]);
  });

  it("every request body has an example", () => {
    const missing = operations().flatMap(([op, operation]) => Object.entries(operation.requestBody?.content ?? {}).filter(([, m]) => !hasExample(m)).map(([type]) => `${op} ${type}`));
    expect(missing).toEqual([]);
    expect(operations().filter(([, o]) => o.requestBody).length).toBeGreaterThan(20);
  });

  it("each request body example passes the operation's own request schema", () => {
    const failures: string[] = [];
    let checked = 0;
    for (const r of ROUTE_REGISTRY) {
      for (const [type, media] of Object.entries((r.route.request?.body?.content ?? {}) as Record<string, Media & { schema: z.ZodType }>)) {
        const documented = doc.paths[r.route.path]![r.route.method]!.requestBody!.content[type]!;
        const example = exampleOf(documented);
        const value = type === "multipart/form-data" ? asForm(example as Json, documented.schema!) : example;
        const parsed = media.schema.safeParse(value);
        if (!parsed.success) failures.push(`${name(r)} ${type}: ${JSON.stringify(parsed.error.issues)}`);
        checked++;
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(20);
  });

  it("each success example matches the documented answer", () => {
    const failures: string[] = [];
    let checked = 0;
    for (const r of ROUTE_REGISTRY) {
      for (const [status, response] of Object.entries(r.route.responses)) {
        if (!/^2\d\d$/.test(status)) continue;
        for (const [type, media] of Object.entries(((response as { content?: object }).content ?? {}) as Record<string, Media & { schema: z.ZodType }>)) {
          const example = exampleOf(doc.paths[r.route.path]![r.route.method]!.responses[status]!.content![type]!);
          if (example === undefined) continue;
          const parsed = media.schema.safeParse(example);
          if (!parsed.success) failures.push(`${name(r)} ${status} ${type}: ${JSON.stringify(parsed.error.issues)}`);
          checked++;
        }
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(80);
  });
});

/** The request body example of an operation, as the document shows it. */
function bodyExample(method: string, path: string): any {
  return exampleOf(doc.paths[path]![method]!.requestBody!.content["application/json"]!);
}

describe("the create examples, sent as they stand", () => {
  let owner: Actor;
  let base: string;

  beforeAll(async () => {
    owner = await newOwner("Examples");
  });

  it("create a company, set its resolution, load folios and issue the factura example, which the simulated SII accepts", async () => {
    const company = await call("POST", "/api/companies", { key: owner.key, json: bodyExample("post", "/api/companies") });
    expect(company.status, JSON.stringify(company.body)).toBe(201);
    base = `/api/companies/${company.body.id}`;
    const settings = await call("PATCH", `${base}/settings`, { key: owner.key, json: bodyExample("patch", "/api/companies/{idCompany}/settings") });
    expect(settings.status, JSON.stringify(settings.body)).toBe(200);
    const cert = await makeFakeCertificate({ rut: "12345678-5", notBefore: new Date(Date.now() - 86_400_000), notAfter: new Date(Date.now() + 365 * 86_400_000) });
    const form = new FormData();
    form.append("certificate", new File([makeFakePfx(cert, "pw", "modern") as Uint8Array<ArrayBuffer>], "firma.pfx"));
    form.append("password", "pw");
    expect((await call("POST", `${base}/certificates`, { key: owner.key, body: form })).status).toBe(201);
    const folios = await call("POST", `${base}/enumeration/refetch`, { key: owner.key, json: bodyExample("post", "/api/companies/{idCompany}/enumeration/refetch") });
    expect(folios.status, JSON.stringify(folios.body)).toBe(201);
    const threshold = await call("PUT", `${base}/enumeration/document-type/33/alert-threshold`, { key: owner.key, json: bodyExample("put", "/api/companies/{idCompany}/enumeration/document-type/{document_type_id}/alert-threshold") });
    expect(threshold.status, JSON.stringify(threshold.body)).toBe(200);

    // The example is dated: a document is dated on or after its folios' authorisation and not in
    // the future, so it is sent dated now (its due date 30 days on); every other field as it stands.
    const example = bodyExample("post", "/api/companies/{company_id}/invoices");
    const issued = await call("POST", `${base}/invoices`, { key: owner.key, json: datedNow(example) });
    expect(issued.status, JSON.stringify(issued.body)).toBe(202);
    expect(issued.body).toMatchObject({ invoice_type: "33", status: "RECEIVED", total: "1190000", external_reference: example.external_reference, recipient: { tax_id: example.recipient.document_number } });
    const issuer = { owner, companyId: company.body.id, rut: example.issuer.document_number, base };
    const final = await untilFinal(issuer, issued.body.id);
    expect(final.status, JSON.stringify(final)).toBe("ACCEPTED");
    await untilBuyerDeliveriesSettled(issuer);
  });

  it("the simulator's CAF grant and scenario examples", async () => {
    const caf = await call("POST", "/simulator/sii/caf", { key: owner.key, json: bodyExample("post", "/simulator/sii/caf") });
    expect(caf.status, String(caf.body)).toBe(200);
    expect(caf.body).toContain("<RE>76086428-5</RE>");
    const scenario = await call("POST", "/simulator/sii/scenario", { key: owner.key, json: bodyExample("post", "/simulator/sii/scenario") });
    expect(scenario.status, JSON.stringify(scenario.body)).toBe(201);
    expect((await call("GET", "/simulator/sii/scenario", { key: owner.key })).body.data).toHaveLength(1);
    expect((await call("DELETE", "/simulator/sii/scenario", { key: owner.key })).body).toEqual({ deleted: 1 });
  });

  it("create a user, an API key and a webhook endpoint", async () => {
    const user = await call("POST", "/api/users", { key: owner.key, json: bodyExample("post", "/api/users") });
    expect(user.status, JSON.stringify(user.body)).toBe(201);
    const key = await call("POST", `/api/users/${user.body.id}/api-keys`, { key: owner.key, json: bodyExample("post", "/api/users/{user_id}/api-keys") });
    expect(key.status, JSON.stringify(key.body)).toBe(201);
    // On a company of another client: this one's documents would send it their events.
    const other = await newOwner("Examples webhooks");
    const company = await call("POST", "/api/companies", { key: other.key, json: bodyExample("post", "/api/companies") });
    const hook = await call("POST", `/api/companies/${company.body.id}/webhooks`, { key: other.key, json: bodyExample("post", "/api/companies/{company_id}/webhooks") });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
  });
});
