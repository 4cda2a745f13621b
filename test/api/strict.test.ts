import { beforeAll, describe, expect, it } from "vitest";
import { ROUTE_REGISTRY as EVERY_ROUTE, type RegisteredRoute } from "../../src/http/route";
import { SIMULATOR_CONTROL_ROUTES } from "../../src/countries/cl/simulator/control-routes";
import { suggestion } from "../../src/lib/suggestion";
import { call, companyBody, expectError, newCompany, newOwner, type Actor } from "../helpers/api";

/**
 * Strict input: every operation refuses an unknown query parameter, JSON field (at any
 * depth) or multipart part with a 400 naming it; `apiKey` in a query or form is ignored (DECISIONS 4).
 */
let owner: Actor;
let companyId: string;

beforeAll(async () => {
  owner = await newOwner("Strict");
  companyId = await newCompany(owner);
});

/**
 * The API's operations: not the simulated SII's scenario and inject routes, which the simulator
 * answers with its own checks (documented under the Simulator tag).
 */
const ROUTE_REGISTRY = EVERY_ROUTE.filter((r) => !SIMULATOR_CONTROL_ROUTES.includes(`${r.route.method.toUpperCase()} ${r.route.path}`));

const ID = "00000000-0000-4000-8000-000000000000";
function concretePath(r: RegisteredRoute): string {
  const path = r.route.path.replace(/\{(idCompany|company_id)\}/g, companyId).replace(/\{format\}/g, "A4").replace(/\{document_type_id\}/g, "33").replace(/\{[^}]+\}/g, ID);
  // Reception routes name their company in the query (§4.10).
  return r.companyInQuery ? `${path}?company_id=${companyId}` : path;
}

/** The path with extra query parameters appended. */
function withQuery(path: string, query: string): string {
  return `${path}${path.includes("?") ? "&" : "?"}${query}`;
}

function bodyTypes(r: RegisteredRoute): string[] {
  return Object.keys((r.route.request?.body?.content ?? {}) as object);
}

describe("every operation in the registry", () => {
  it("covers operations with and without bodies", () => {
    expect(ROUTE_REGISTRY.length).toBeGreaterThan(20);
    expect(ROUTE_REGISTRY.filter((r) => bodyTypes(r).includes("application/json")).length).toBeGreaterThan(5);
    expect(ROUTE_REGISTRY.filter((r) => bodyTypes(r).includes("multipart/form-data")).length).toBeGreaterThanOrEqual(3);
  });

  it("refuses an unknown query parameter with a named 400, ignoring apiKey", async () => {
    for (const r of ROUTE_REGISTRY) {
      const path = withQuery(concretePath(r), "apiKey=ignored&bogus_param=1");
      const res = await call(r.route.method.toUpperCase(), path, { key: owner.key });
      expect(res.status, `${r.route.method} ${r.route.path}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.error.code).toBe("VALIDATION_FAILED");
      expect(res.body.error.details, `${r.route.method} ${r.route.path}`).toContainEqual({ field: "bogus_param", message: "Unknown field." });
      // apiKey is ignored on every operation, never named (DECISIONS 4)
      expect(res.body.error.details.map((d: { field: string }) => d.field), `${r.route.method} ${r.route.path}`).not.toContain("apiKey");
    }
  });

  it("refuses an unknown JSON field or multipart part with a named 400", async () => {
    let checked = 0;
    for (const r of ROUTE_REGISTRY) {
      for (const type of bodyTypes(r)) {
        const opts =
          type === "application/json" ? { json: { bogus_field: 1 } } : (() => {
            const form = new FormData();
            form.append("bogus_field", "1");
            return { body: form };
          })();
        const res = await call(r.route.method.toUpperCase(), concretePath(r), { key: owner.key, ...opts });
        expect(res.status, `${r.route.method} ${r.route.path} ${type}: ${JSON.stringify(res.body)}`).toBe(400);
        expect(res.body.error.code).toBe("VALIDATION_FAILED");
        expect(res.body.error.details, `${r.route.method} ${r.route.path} ${type}`).toContainEqual({ field: "bogus_field", message: "Unknown field." });
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(8);
  });

  it("documents every request body object as additionalProperties: false", async () => {
    const doc = (await call("GET", "/openapi.json")).body;
    const resolve = (s: any): any => (s?.$ref ? doc.components.schemas[s.$ref.split("/").pop()] : s);
    let objects = 0;
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        for (const [type, media] of Object.entries<any>(op.requestBody?.content ?? {})) {
          const schema = resolve(media.schema);
          if (schema?.type !== "object") continue;
          expect(schema.additionalProperties, `${method} ${path} ${type}`).toBe(false);
          objects++;
        }
      }
    }
    expect(objects).toBeGreaterThan(8);
  });
});

describe("unknown fields at depth, with suggestions", () => {
  it("names a misspelt nested field with its path and the close known name", async () => {
    const res = await call("POST", `/api/companies/${companyId}/invoices`, {
      key: owner.key,
      json: { invoice_type: "33", items: [{ description: "x", quantity: 1, unit_price: 100, discount_amout: 10 }], percent_discount: 5 },
    });
    expectError(res, 400, "VALIDATION_FAILED");
    expect(res.body.error.details).toContainEqual({ field: "items[0].discount_amout", message: "Unknown field (did you mean `discount_amount`?)." });
    expect(res.body.error.details).toContainEqual({ field: "percent_discount", message: "Unknown field." });
  });

  it("names unknown fields of a company body and suggests close names", async () => {
    const res = await call("POST", "/api/companies", { key: owner.key, json: { ...companyBody(), legal_nme: "X", colour: "red" } });
    expectError(res, 400, "VALIDATION_FAILED");
    expect(res.body.error.details).toEqual([
      { field: "legal_nme", message: "Unknown field (did you mean `legal_name`?)." },
      { field: "colour", message: "Unknown field." },
    ]);
    expect(res.body.error.message).toContain("legal_nme");
  });

  it("suggests only close names", () => {
    expect(suggestion("discount_amout", ["discount_amount", "quantity"])).toBe("discount_amount");
    expect(suggestion("Quantity", ["quantity"])).toBe("quantity");
    expect(suggestion("colour", ["legal_name", "email"])).toBeUndefined();
    expect(suggestion("x", [])).toBeUndefined();
  });

  it("suggests the one known name a short name is a whole part of, or that is a part of it", async () => {
    expect(suggestion("threshold", ["alert_threshold", "next_folio_number"])).toBe("alert_threshold");
    expect(suggestion("next_folio", ["alert_threshold", "next_folio_number"])).toBe("next_folio_number");
    expect(suggestion("legal_name_full", ["legal_name", "email"])).toBe("legal_name");
    // a part of several names, or of none as a whole word, suggests nothing
    expect(suggestion("amount", ["discount_amount", "tax_amount"])).toBeUndefined();
    expect(suggestion("hold", ["alert_threshold"])).toBeUndefined();
    expect(suggestion("accepted", ["invoice.accepted", "received_document.accepted"])).toBeUndefined();
    const res = await call("PUT", `/api/companies/${companyId}/enumeration/document-type/33/next-folio`, { key: owner.key, json: { next_folio: 5 } });
    expectError(res, 400, "VALIDATION_FAILED");
    expect(res.body.error.details).toContainEqual({ field: "next_folio", message: "Unknown field (did you mean `next_folio_number`?)." });
  });
});

describe("a missing field is named as required", () => {
  it("in a body: the type or the choices expected", async () => {
    const company = await call("POST", "/api/companies", { key: owner.key, json: { legal_name: "Sin RUT SpA", country: "CL" } });
    expectError(company, 400, "VALIDATION_FAILED");
    expect(company.body.error.details).toContainEqual({ field: "tax_identification_document_number", message: "Required: expected string." });
    const invoice = await call("POST", `/api/companies/${companyId}/invoices`, { key: owner.key, json: { invoice_type: "33", items: [{ description: "x", unit_price: 100 }] } });
    expectError(invoice, 400, "VALIDATION_FAILED");
    expect(invoice.body.error.details).toContainEqual({ field: "items[0].quantity", message: "Required." });
    const response = await call("POST", `/api/reception/invoices/rcv_p1_00000000000000000000000000/send_response?company_id=${companyId}`, { key: owner.key, json: {} });
    expectError(response, 400, "VALIDATION_FAILED");
    expect(response.body.error.details).toEqual([{ field: "action", message: 'Required: expected one of "ACD"|"ERM"|"RCD"|"RFP"|"RFT".' }]);
    expect(response.body.error.message).toBe('The body is invalid: action: Required: expected one of "ACD"|"ERM"|"RCD"|"RFP"|"RFT".');
  });

  it("in a query string; a value sent but wrong keeps its own message", async () => {
    const list = await call("GET", "/api/reception/invoices/list", { key: owner.key });
    expectError(list, 400, "VALIDATION_FAILED");
    expect(list.body.error.details).toContainEqual({ field: "company_id", message: "Required: expected string." });
    const wrong = await call("POST", `/api/reception/invoices/rcv_p1_00000000000000000000000000/send_response?company_id=${companyId}`, { key: owner.key, json: { action: "acd" } });
    expect(wrong.body.error.details).toEqual([{ field: "action", message: 'Invalid option "acd" (did you mean "ACD"?): expected one of "ACD"|"ERM"|"RCD"|"RFP"|"RFT"' }]);
  });

  it("a choice names the option meant, a bound says it in words", async () => {
    const status = await call("GET", `/api/companies/${companyId}/invoices?status=acepted`, { key: owner.key });
    expect(status.body.error.details).toEqual([{ field: "status", message: 'Invalid option "acepted" (did you mean "ACCEPTED"?): expected one of "RECEIVED"|"GENERATED"|"SIGNED"|"SENT"|"ACCEPTED"|"ACCEPTED_WITH_OBJECTIONS"|"REJECTED"|"FAILED"' }]);
    const far = await call("GET", `/api/companies/${companyId}/invoices?status=nothing-like-it`, { key: owner.key });
    expect(far.body.error.details[0].message).toMatch(/^Invalid option "nothing-like-it": expected one of "RECEIVED"\|/);
    const send = (json: unknown) => call("POST", `/api/reception/invoices/rcv_p1_00000000000000000000000000/send_response?company_id=${companyId}`, { key: owner.key, json });
    expect((await send({ action: "RCD", reason: "x".repeat(257) })).body.error.details).toEqual([{ field: "reason", message: "At most 256 characters." }]);
    const hook = await call("POST", `/api/companies/${companyId}/webhooks`, { key: owner.key, json: { url: "https://example.com/h", events: [] } });
    expect(hook.body.error.details).toEqual([{ field: "events", message: "At least 1 item." }]);
  });
});

describe("a multipart part left out or sent as text is named", () => {
  const post = (path: string, parts: Record<string, string | File>) => {
    const form = new FormData();
    for (const [k, v] of Object.entries(parts)) form.append(k, v);
    return call("POST", path, { key: owner.key, body: form });
  };

  it("each file part: required, and a file rather than text", async () => {
    const routes: [string, string, string][] = [
      [`/api/companies/${companyId}/certificates`, "certificate", "the .pfx"],
      [`/api/companies/${companyId}/enumeration/upload`, "file", "the CAF XML"],
      [`/api/companies/${companyId}/logo`, "logo", "the image"],
      [`/api/reception/invoices/upload?company_id=${companyId}`, "file", "the EnvioDTE or DTE"],
    ];
    for (const [path, part, what] of routes) {
      const extra: Record<string, string> = part === "certificate" ? { password: "x" } : {};
      const missing = await post(path, { ...extra });
      expectError(missing, 400, "VALIDATION_FAILED");
      expect(missing.body.error.details, path).toEqual([{ field: part, message: `Required: ${what} as a file.` }]);
      const text = await post(path, { ...extra, [part]: "not a file" });
      expectError(text, 400, "VALIDATION_FAILED");
      expect(text.body.error.details, path).toEqual([{ field: part, message: `Expected ${what} as a file (a part with a filename), not text.` }]);
    }
  });

  it("a text part: required, and text rather than a file", async () => {
    const path = `/api/companies/${companyId}/certificates`;
    const pfx = new File([new Uint8Array([0x30, 0x82])], "firma.pfx");
    const missing = await post(path, { certificate: pfx });
    expect(missing.body.error.details).toEqual([{ field: "password", message: "Required: the .pfx password as a text part." }]);
    const file = await post(path, { certificate: pfx, password: new File(["secreto"], "password.txt") });
    expect(file.body.error.details).toEqual([{ field: "password", message: "Expected the .pfx password as text, not a file." }]);
  });
});

describe("an invoice's numbers, dates and type say the form they take", () => {
  it("never a pattern or a bare \"Invalid input\"", async () => {
    const party = { legal_name: "A", document_number: "1-9" };
    const res = await call("POST", `/api/companies/${companyId}/invoices`, {
      key: owner.key,
      json: {
        invoice_type: "FACTURA", invoice_date: "2026-11-27T10:00:00", payment_due_date: "30-11-2026", issuer: party, recipient: party,
        items: [{ quantity: "abc", unit_price: true, description: "x", elaboration_date: "27-11-2026" }],
        totals: { total: "12.5.5" },
        billing_reference: [{ number: true, invoice_type: "FACT", invoice_date: "2026-01-01" }],
      },
    });
    expectError(res, 400, "VALIDATION_FAILED");
    const details = res.body.error.details as { field: string; message: string }[];
    const number = 'A number: a JSON number or a decimal string such as "1190.5".';
    expect(details).toEqual(expect.arrayContaining([
      { field: "invoice_type", message: expect.stringMatching(/^Unknown document type "FACTURA"; use an SII code \(33, 34, .*\) or a mnemonic \(FAC, /) },
      { field: "invoice_date", message: "A date and time as YYYY-MM-DD HH:MM:SS in the company's time zone, e.g. 2026-11-27 10:30:00." },
      { field: "payment_due_date", message: "A date as YYYY-MM-DD, e.g. 2026-11-27." },
      { field: "items[0].quantity", message: number },
      { field: "items[0].unit_price", message: number },
      { field: "items[0].elaboration_date", message: "A date as YYYY-MM-DD, e.g. 2026-11-27." },
      { field: "totals.total", message: number },
      { field: "billing_reference[0].number", message: "The referenced folio: a whole number, or a string of up to 18 characters." },
      { field: "billing_reference[0].invoice_type", message: "A document type of at most 3 characters: an SII code (33, 801, …) or a mnemonic (FAC, NCV, …)." },
    ]));
    for (const d of details) expect(d.message, d.field).not.toMatch(/pattern|^Invalid input$|\/\^/);
    // a number left out is still "Required."
    const missing = await call("POST", `/api/companies/${companyId}/invoices`, { key: owner.key, json: { invoice_type: "33", invoice_date: "2026-11-27 10:00:00", issuer: party, recipient: party, items: [{ description: "x", quantity: 1 }] } });
    expect(missing.body.error.details).toContainEqual({ field: "items[0].unit_price", message: "Required." });
    const perPage = await call("GET", `/api/companies/${companyId}/invoices?per_page=many`, { key: owner.key });
    expect(perPage.body.error.details).toEqual([{ field: "per_page", message: "per_page is a whole number from 1 to 100" }]);
    const types = await call("POST", "/api/companies", { key: owner.key, json: { ...companyBody(), legal_name: 5, start_activities_date: "2019-02-29", country: ["CL"] } });
    expect(types.body.error.details).toEqual(expect.arrayContaining([
      { field: "legal_name", message: "Expected text, got a number." },
      { field: "country", message: "Expected text, got an array." },
      { field: "start_activities_date", message: "A date as YYYY-MM-DD, e.g. 2026-11-27." },
    ]));
    const folio = await call("GET", `/api/companies/${companyId}/invoices?folio=12a`, { key: owner.key });
    expect(folio.body.error.details).toEqual([{ field: "folio", message: "A folio: a whole number of up to 10 digits." }]);
  });
});

describe("dates and instants in a query say the form they take", () => {
  it("a date-only instant, a day that does not exist", async () => {
    const list = (q: string) => call("GET", `/api/reception/invoices/list?company_id=${companyId}&${q}`, { key: owner.key });
    const instant = "An ISO 8601 date-time with its zone, e.g. 2026-11-27T10:00:00Z or 2026-11-27T07:00:00-03:00.";
    expect((await list("deadline_before=2026-12-31")).body.error.details).toEqual([{ field: "deadline_before", message: instant }]);
    expect((await list("received_from=2026-11-28T10:00:00")).body.error.details).toEqual([{ field: "received_from", message: instant }]);
    expect((await list("issue_date_from=2026-02-31")).body.error.details).toEqual([{ field: "issue_date_from", message: "A date as YYYY-MM-DD, e.g. 2026-11-27." }]);
    const ok = await list("received_from=2026-11-28T10:00:00-03:00&issue_date_to=2026-02-28");
    expect(ok.status).toBe(200);
    // a range that ends before it starts names both ends; the same day or moment at both ends is a range
    expect((await list("issue_date_from=2026-11-10&issue_date_to=2026-11-01")).body.error.details).toEqual([{ field: "issue_date_to", message: "issue_date_to (2026-11-01) is before issue_date_from (2026-11-10)." }]);
    expect((await list("received_from=2026-11-28T10:00:00-03:00&received_to=2026-11-28T12:00:00Z")).body.error.details).toEqual([{ field: "received_to", message: "received_to (2026-11-28T12:00:00Z) is before received_from (2026-11-28T10:00:00-03:00)." }]);
    expect((await list("issue_date_from=2026-11-10&issue_date_to=2026-11-10&received_from=2026-11-28T13:00:00Z&received_to=2026-11-28T10:00:00-03:00")).status).toBe(200);
    const messages = await call("GET", `/api/reception/messages?company_id=${companyId}&received_from=2026-11-02T00:00:00Z&received_to=2026-11-01T00:00:00Z`, { key: owner.key });
    expect(messages.body.error.details).toEqual([{ field: "received_to", message: "received_to (2026-11-01T00:00:00Z) is before received_from (2026-11-02T00:00:00Z)." }]);
    const backwards = await call("GET", `/api/companies/${companyId}/invoices?from_date=2026-12-01&to_date=2026-11-01`, { key: owner.key });
    expectError(backwards, 400, "VALIDATION_FAILED");
    expect(backwards.body.error.details).toEqual([{ field: "to_date", message: "to_date (2026-11-01) is before from_date (2026-12-01)." }]);
    const invoices = await call("GET", `/api/companies/${companyId}/invoices?from_date=2026-13-01`, { key: owner.key });
    expect(invoices.body.error.details).toEqual([{ field: "from_date", message: "A date as YYYY-MM-DD, e.g. 2026-11-27." }]);
  });
});

describe("apiKey is ignored, never refused (DECISIONS 4)", () => {
  it("in a query string", async () => {
    const res = await call("GET", `/api/companies/${companyId}?apiKey=${encodeURIComponent(JSON.stringify({ role: "OWNER" }))}`, { key: owner.key });
    expect(res.status).toBe(200);
    expect(res.body.id ?? res.body.company_id ?? companyId).toBe(companyId);
    const noKey = await call("GET", `/api/companies/${companyId}?apiKey=${owner.key}`, {});
    expectError(noKey, 401, "AUTH_MISSING_API_KEY");
  });

  it("in a multipart form", async () => {
    const form = new FormData();
    form.append("apiKey", JSON.stringify({ role: "OWNER" }));
    form.append("logo", new File([new Uint8Array([0x89, 0x50, 0x4e, 0x47])], "logo.png"));
    const res = await call("POST", `/api/companies/${companyId}/logo`, { key: owner.key, body: form });
    // the apiKey part is not what fails: the (truncated) image is
    expect(res.body.error?.details ?? []).not.toContainEqual(expect.objectContaining({ field: "apiKey" }));
  });

  it("but a JSON body has no apiKey field", async () => {
    const res = await call("POST", "/api/companies", { key: owner.key, json: { ...companyBody(), apiKey: "x" } });
    expectError(res, 400, "VALIDATION_FAILED");
    expect(res.body.error.details).toContainEqual({ field: "apiKey", message: "Unknown field." });
  });
});
