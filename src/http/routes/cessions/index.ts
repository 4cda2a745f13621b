/**
 * Cessions (factoring) of the company's documents (src/invoices/cessions): ask for one, read
 * it, list them per document and per company, download the signed cession file.
 */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { createCession } from "../../../invoices/cessions/create";
import { cessionPdf } from "../../../invoices/cessions/pdf";
import { cessionsOfInvoice, getCession, listCessions } from "../../../invoices/cessions/queries";
import { CessionSchema, cessionView } from "../../../invoices/cessions/view";
import { AppError } from "../../../lib/errors";
import { validationHook } from "../../errors/handler";
import { idempotency } from "../../middleware/idempotency";
import { calendarDate, json, PageQuerySchema, pageEnvelope, pageParams, pageSchema } from "../../openapi/common";
import { defineRoute } from "../../route";
import type { AppEnv } from "../../types";
import { aecXmlExample } from "../../openapi/xml-examples";
import { cessionCreateExample, cessionListExample, cessionPageExample, cessionRegisteredExample, cessionSignedExample } from "./examples";

const Params = z.object({ company_id: z.string().min(1).max(64).openapi({ param: { name: "company_id", in: "path" } }) });
const InvoiceParams = Params.extend({ invoice_id: z.string().min(1).max(64).openapi({ param: { name: "invoice_id", in: "path" } }) });
const CessionParams = Params.extend({ cession_id: z.string().min(1).max(64).openapi({ param: { name: "cession_id", in: "path" } }) });

const CessionCreateSchema = z
  .object({
    assignee: z
      .object({
        tax_id: z.string().min(1).max(20).openapi({ description: "The factoring company's RUT.", example: "76543210-3" }),
        legal_name: z.string().min(1).max(100),
        address: z.string().min(5).max(60).openapi({ description: "5 to 60 characters (the register's format)." }),
        email: z.string().min(6).max(40),
      })
      .strict(),
    amount: z
      .union([z.string().regex(/^\d{1,18}$/, { error: "A whole amount of at most 18 digits" }), z.number({ error: "A whole amount" }).int({ error: "A whole amount" }).min(0, { error: "A whole amount" })], { error: "A whole amount: digits, or an integer" })
      .optional()
      .openapi({ description: "The amount ceded, 1 to the document's total; default: the total.", type: "string" }),
    last_due_date: calendarDate().openapi({ description: "The last due date of the credit (UltimoVencimiento), YYYY-MM-DD, not before the issue date.", example: "2026-12-31" }),
    contact_email: z.string().min(6).max(40).openapi({ description: "The company's e-mail in the file (the cedent's eMail) and where the SII mails the register's result." }),
    cedent_address: z.string().min(5).max(60).optional().openapi({ description: "The company's address in the file; default: the issuer address of the document." }),
    debtor_email: z.string().max(80).optional().openapi({ description: "The buyer's e-mail, for the register's notice (eMailDeudor)." }),
    other_conditions: z.string().max(512).optional(),
  })
  .strict()
  .openapi("CessionCreate");

const create = defineRoute({
  method: "post",
  path: "/api/companies/{company_id}/invoices/{invoice_id}/cessions",
  tags: ["Cessions"],
  summary: "Cede a document to a factoring company",
  description:
    "Cedes the credit of a document the company issued to an assignee (cesión electrónica, Ley 19.983). Checked now, each with its own error: the type (33, 34, 43, 46 only), the SII accepted the document, no credit note cancels it, its buyer did not claim it, its buyer acknowledged receipt or accepted it at the SII or its 8 days passed, it is not already ceded, the amount is 1 to the total (default: the total). The cession file (AEC) is then built with the signed document and the sworn declaration of receipt, signed with the company's certificate, kept, and the answer is 202 with `status: SIGNED`. In the background it is uploaded to the SII's register of cessions (RPETC) and followed to the register's answer: REGISTERED (`invoice.ceded`) or REJECTED (`cession.rejected`, `fiscal_message` says why). A refused request stores nothing.\n\nAccepts `Idempotency-Key`.",
  permission: "document:issue",
  middleware: [idempotency],
  request: { params: InvoiceParams, body: { required: true, ...json(CessionCreateSchema, cessionCreateExample) } },
  responses: { 202: { description: "Signed; on its way to the register", ...json(CessionSchema, cessionSignedExample) } },
  errors: [
    "VALIDATION_FAILED", "MALFORMED_JSON", "UNSUPPORTED_MEDIA_TYPE", "INVOICE_NOT_FOUND", "CESSION_TYPE_NOT_CEDIBLE", "CESSION_DOCUMENT_NOT_ACCEPTED", "CESSION_DOCUMENT_CLAIMED",
    "CESSION_DOCUMENT_CANCELLED", "CESSION_RECEIPT_MISSING", "CESSION_ALREADY_CEDED", "CESSION_AMOUNT_OUT_OF_RANGE", "CESSION_FIELDS_INVALID", "CESSION_DOCUMENT_XML_MISSING",
    "CESSION_NOT_AVAILABLE", "CERTIFICATE_REQUIRED", "IDEMPOTENCY_KEY_INVALID", "IDEMPOTENCY_KEY_REUSED", "IDEMPOTENCY_KEY_IN_USE",
  ],
});

const ofInvoice = defineRoute({
  method: "get",
  path: "/api/companies/{company_id}/invoices/{invoice_id}/cessions",
  tags: ["Cessions"],
  summary: "List a document's cessions",
  description: "Every cession asked for of the document, newest first (at most one is neither REJECTED nor FAILED).",
  permission: "document:read",
  request: { params: InvoiceParams },
  responses: { 200: { description: "The document's cessions", ...json(z.object({ data: z.array(CessionSchema) }).openapi("CessionList"), cessionListExample) } },
  errors: ["INVOICE_NOT_FOUND"],
});

const list = defineRoute({
  method: "get",
  path: "/api/companies/{company_id}/cessions",
  tags: ["Cessions"],
  summary: "List the company's cessions",
  description: "The company's cessions, newest first, paged.",
  permission: "document:read",
  request: { params: Params, query: PageQuerySchema },
  responses: { 200: { description: "A page of cessions", ...json(pageSchema(CessionSchema, "CessionPage"), cessionPageExample) } },
  errors: ["VALIDATION_FAILED"],
});

const get = defineRoute({
  method: "get",
  path: "/api/companies/{company_id}/cessions/{cession_id}",
  tags: ["Cessions"],
  summary: "Get a cession",
  description: "The cession with its status, the register's state and message, and its track id.",
  permission: "document:read",
  request: { params: CessionParams },
  responses: { 200: { description: "The cession", ...json(CessionSchema, cessionRegisteredExample) } },
  errors: ["CESSION_NOT_FOUND"],
});

const xml = defineRoute({
  method: "get",
  path: "/api/companies/{company_id}/cessions/{cession_id}/xml",
  tags: ["Cessions"],
  summary: "Download the cession file (AEC)",
  description: "The signed AEC, byte for byte as uploaded to the register (ISO-8859-1).",
  permission: "document:read",
  request: { params: CessionParams },
  responses: { 200: { description: "The AEC", content: { "application/xml": { schema: z.string(), example: aecXmlExample } } } },
  errors: ["CESSION_NOT_FOUND"],
});

const pdf = defineRoute({
  method: "get",
  path: "/api/companies/{company_id}/cessions/{cession_id}/pdf",
  tags: ["Cessions"],
  summary: "Download the cession's summary (PDF)",
  description: "One page: who ceded which document to whom, for how much, when it was signed and annotated, the register's track id and the sworn declaration. Only for a REGISTERED cession. The document's own cedible copy is its PDF (`…/invoices/{id}/download-pdf/{format}`).",
  permission: "document:read",
  request: { params: CessionParams },
  responses: { 200: { description: "The summary", content: { "application/pdf": { schema: z.string().openapi({ format: "binary" }) } } } },
  errors: ["CESSION_NOT_FOUND", "CESSION_PDF_NOT_READY"],
});

export const cessionsRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(create, async (c) => {
    const row = await createCession(c.env, c.get("company"), c.req.valid("param").invoice_id, c.req.valid("json"), new Date());
    return c.json(cessionView(row), 202);
  })
  .openapi(ofInvoice, async (c) => c.json({ data: (await cessionsOfInvoice(c.env, c.get("company").id, c.req.valid("param").invoice_id)).map(cessionView) }, 200))
  .openapi(list, async (c) => {
    const page = pageParams(c.req.valid("query"));
    const { rows, total } = await listCessions(c.env, c.get("company").id, page);
    return c.json(pageEnvelope(rows.map(cessionView), total, page), 200);
  })
  .openapi(get, async (c) => c.json(cessionView(await getCession(c.env, c.get("company").id, c.req.valid("param").cession_id)), 200))
  .openapi(xml, async (c) => {
    const row = await getCession(c.env, c.get("company").id, c.req.valid("param").cession_id);
    const object = await c.env.FILES.get(row.xmlKey);
    if (!object) throw new AppError("CESSION_NOT_FOUND", `The file of ${row.id} is missing.`);
    return new Response(await object.arrayBuffer(), { headers: { "Content-Type": "application/xml; charset=ISO-8859-1", "Content-Disposition": `attachment; filename="AEC_${row.id}.xml"` } });
  })
  .openapi(pdf, async (c) => {
    const out = await cessionPdf(await getCession(c.env, c.get("company").id, c.req.valid("param").cession_id));
    return new Response(out.bytes as Uint8Array<ArrayBuffer>, { headers: { "Content-Type": "application/pdf", "Content-Disposition": `attachment; filename="${out.fileName}"` } });
  });
