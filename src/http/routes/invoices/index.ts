import { OpenAPIHono, z } from "@hono/zod-openapi";
import { findDocumentType, invoiceSchema } from "../../../invoices/model";
import { BuyerResponseSchema, InvoiceSchema, invoiceView, StatusSchema, type InvoiceDetail } from "../../../invoices/view";
import { bytesToBase64 } from "../../../lib/base64";
import { createDb } from "../../../storage/db/client";
import { AppError, INVOICE_INPUT_CODES, type ErrorCode } from "../../../lib/errors";
import { issueInvoice, RECEIVED_MESSAGE } from "../../../invoices/issue";
import { invoicePdf, parsePdfFormat, PDF_FORMATS } from "../../../invoices/printable";
import { getInvoice, invoiceDetail, invoiceDetails, listInvoices } from "../../../invoices/queries";
import { checkBuyerResponseNow } from "../../../invoices/buyer-check";
import type { InvoiceRow } from "../../../invoices/state";
import { validationHook } from "../../errors/handler";
import { idempotency } from "../../middleware/idempotency";
import { calendarDate, orderedRange, PageQuerySchema, pageEnvelope, pageParams, pageSchema, json } from "../../openapi/common";
import { defineRoute, MAX_BODY_BYTES } from "../../route";
import { readDocumentXml } from "../../../invoices/stored-xml";
import type { AppEnv } from "../../types";
import { dteXmlExample } from "../../openapi/xml-examples";
import { invoiceCheckedExample, invoiceCreateExample, invoiceExample, invoicePageExample, invoiceReceivedExample, pdfBase64Example } from "./examples";


const Params = z.object({ company_id: z.string().min(1).max(64).openapi({ param: { name: "company_id", in: "path" } }) });
const InvoiceParams = Params.extend({ invoice_id: z.string().min(1).max(64).openapi({ param: { name: "invoice_id", in: "path" } }) });
const FormatParams = InvoiceParams.extend({
  format: z.string().max(10).openapi({ param: { name: "format", in: "path" }, example: "A4", description: `One of ${PDF_FORMATS.join(", ")}.` }),
});

const INPUT_ERRORS = Object.keys(INVOICE_INPUT_CODES).map((c) => `INVOICE_${c}` as ErrorCode);

/** The public shape; `known` skips the history queries when the caller already has them (POST). */
async function view(c: { env: AppEnv["Bindings"] }, row: InvoiceRow, known?: InvoiceDetail) {
  return invoiceView(row, known ?? (await invoiceDetail(c.env, row)));
}

const issue = defineRoute({
  method: "post",
  path: "/api/companies/{company_id}/invoices",
  tags: ["Invoices"],
  summary: "Issue a document (also credit notes that cancel)",
  // A 1,000-line boleta fits comfortably.
  maxBodyBytes: MAX_BODY_BYTES,
  rateLimit: "issuance",
  description:
    "Validates the whole document now (body, amounts and totals, limits, the SII's document rules listed in docs/simulator-fidelity.md, issuer = company, an active certificate valid on the issue date, the company's SII resolution, cancellation rules), reserves the right to one folio (with N folios left exactly N documents are accepted; the next is a 422 `INVOICE_NO_FOLIOS` at once; an issue date before the CAF's authorisation date is a 400), stores it and answers 202 at once with `status: RECEIVED`. In the background the pipeline assigns the folio, stamps, signs, sends it to the SII and follows it to a verdict: poll GET or use webhooks.\n\nCancellation (§4.9): `invoice_type` NCV (61), `reason_code` ANU and `billing_reference` to the original. A referenced document issued elsewhere passes unchanged to the SII. One of ours may not be cancelled twice, must be of a cancellable type, the note must be the type that cancels it and must total exactly what it totals. COT (text) and COM (amounts) corrections work the same way, with one cap: the credit notes (61, 112; ANU and COM) of one of our documents in its currency never total more than it does. The notes already issued against it count unless they FAILED or were REJECTED (one still in the pipeline counts); one that would exceed it is a 422 `INVOICE_CREDIT_EXCEEDS_REMAINING` naming the amount that can still be credited, so an ANU after a partial COM is refused too. Debit notes are not capped.\n\nAccepts `Idempotency-Key`; `external_reference` is also unique per company, except that a FAILED document frees it (issue the document again under the same reference).",
  permission: "document:issue",
  middleware: [idempotency],
  request: { params: Params, body: { required: true, ...json(invoiceSchema.openapi("InvoiceCreate"), invoiceCreateExample) } },
  responses: { 202: { description: "Received; processing in the background", ...json(InvoiceSchema, invoiceReceivedExample) } },
  errors: [
    "VALIDATION_FAILED", "MALFORMED_JSON", "UNSUPPORTED_MEDIA_TYPE", "PAYLOAD_TOO_LARGE", ...INPUT_ERRORS,
    "INVOICE_ISSUER_MISMATCH", "INVOICE_NO_FOLIOS", "INVOICE_DUPLICATE_EXTERNAL_REFERENCE", "INVOICE_ALREADY_CANCELLED",
    "INVOICE_NOT_CANCELLABLE", "INVOICE_CANCELLATION_TYPE_MISMATCH", "INVOICE_CANCELLATION_AMOUNT_MISMATCH", "INVOICE_CREDIT_EXCEEDS_REMAINING", "INVOICE_RESOLUTION_MISMATCH",
    "CERTIFICATE_REQUIRED", "IDEMPOTENCY_KEY_INVALID", "IDEMPOTENCY_KEY_REUSED", "IDEMPOTENCY_KEY_IN_USE",
  ],
});

const get = defineRoute({
  method: "get",
  path: "/api/companies/{company_id}/invoices/{invoice_id}",
  tags: ["Invoices"],
  summary: "Get a document",
  description: "The document with its folio, both statuses, the SII's message and the history of transitions.",
  permission: "document:read",
  request: { params: InvoiceParams },
  responses: { 200: { description: "The document", ...json(InvoiceSchema, invoiceExample) } },
  errors: ["INVOICE_NOT_FOUND"],
});

const list = defineRoute({
  method: "get",
  path: "/api/companies/{company_id}/invoices",
  tags: ["Invoices"],
  summary: "List documents",
  description: "Newest first. Filters: type, status, issue date range, external reference, folio, the buyer's answer.",
  permission: "document:read",
  request: {
    params: Params,
    query: orderedRange(PageQuerySchema.extend({
      invoice_type: z.string().max(8).optional().openapi({ param: { name: "invoice_type", in: "query" }, description: "SII code or mnemonic." }),
      status: StatusSchema.optional().openapi({ param: { name: "status", in: "query" } }),
      from_date: calendarDate().optional().openapi({ param: { name: "from_date", in: "query" }, description: "Issue date from (inclusive)." }),
      to_date: calendarDate().optional().openapi({ param: { name: "to_date", in: "query" }, description: "Issue date to (inclusive)." }),
      external_reference: z.string().max(100).optional().openapi({ param: { name: "external_reference", in: "query" } }),
      folio: z.string().regex(/^\d{1,10}$/, "A folio: a whole number of up to 10 digits.").optional().openapi({ param: { name: "folio", in: "query" } }),
      buyer_state: BuyerResponseSchema.shape.state.optional().openapi({ param: { name: "buyer_state", in: "query" }, description: "The buyer's answer at the SII (`buyer_response.state`), e.g. CLAIMED: the facturas the buyer claimed." }),
    }), [["from_date", "to_date"]]),
  },
  responses: { 200: { description: "A page of documents", ...json(pageSchema(InvoiceSchema, "InvoicePage"), invoicePageExample) } },
  errors: ["VALIDATION_FAILED"],
});

const xml = defineRoute({
  method: "get",
  path: "/api/companies/{company_id}/invoices/{invoice_id}/xml",
  tags: ["Invoices"],
  summary: "Download the signed XML",
  description: "The signed DTE exactly as sent, ISO-8859-1. Available from status SIGNED on.",
  permission: "document:read",
  request: { params: InvoiceParams },
  responses: { 200: { description: "The DTE", content: { "application/xml": { schema: z.string(), example: dteXmlExample } } } },
  errors: ["INVOICE_NOT_FOUND", "INVOICE_XML_NOT_READY", "INVOICE_XML_UNAVAILABLE"],
});

const pdf = defineRoute({
  method: "post",
  path: "/api/companies/{company_id}/invoices/{invoice_id}/download-pdf/{format}",
  tags: ["Invoices"],
  summary: "Download the PDF",
  description: `The printed representation (with the PDF417 timbre and the company logo) in ${PDF_FORMATS.join(", ")}; only once the SII accepted the document.`,
  permission: "document:read",
  request: { params: FormatParams },
  responses: { 200: { description: "The PDF", content: { "application/pdf": { schema: z.any().openapi({ type: "string", format: "binary" }) } } } },
  errors: ["INVOICE_NOT_FOUND", "INVOICE_NOT_ACCEPTED", "INVOICE_PDF_FORMAT_UNKNOWN"],
});

const pdfBase64 = defineRoute({
  method: "post",
  path: "/api/companies/{company_id}/invoices/{invoice_id}/download-base64/{format}",
  tags: ["Invoices"],
  summary: "Download the PDF as Base64",
  description: "Same document and rules as download-pdf, as JSON.",
  permission: "document:read",
  request: { params: FormatParams },
  responses: {
    200: {
      description: "The PDF, Base64",
      ...json(
        z
          .object({
            file_name: z.string().openapi({ example: "76086428-5_T33_F123_A4.pdf" }),
            content_type: z.literal("application/pdf"),
            format: z.enum(PDF_FORMATS as unknown as [string, ...string[]]),
            size: z.number().int().openapi({ description: "Bytes before encoding." }),
            data: z.string().openapi({ description: "Base64 of the PDF." }),
          })
          .openapi("PdfBase64"),
        pdfBase64Example,
      ),
    },
  },
  errors: ["INVOICE_NOT_FOUND", "INVOICE_NOT_ACCEPTED", "INVOICE_PDF_FORMAT_UNKNOWN"],
});

const buyerCheck = defineRoute({
  method: "post",
  path: "/api/companies/{company_id}/invoices/{invoice_id}/buyer_response/check",
  tags: ["Invoices"],
  summary: "Read the buyer's answer at the SII now",
  description:
    "Reads the SII's register of events for a factura (33, 34, 43) the SII accepted, now, instead of waiting for the next scheduled read (`buyer_response.next_check_at`), and answers the document as it is after it. A change records an `invoice.buyer_response` event as a scheduled read does; the schedule goes on from this read.",
  permission: "document:read",
  request: { params: InvoiceParams },
  responses: { 200: { description: "The document after the read", ...json(InvoiceSchema, invoiceCheckedExample) } },
  errors: ["INVOICE_NOT_FOUND", "INVOICE_NO_BUYER_RESPONSE", "INVOICE_BUYER_CHECK_UNAVAILABLE", "CERTIFICATE_REQUIRED"],
});

export const invoicesRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(issue, async (c) => {
    const row = await issueInvoice(createDb(c.env.DB), c.env, c.get("company"), c.req.valid("json"), c.get("requestId"), new Date(), c.get("idempotency"));
    const received = { id: row.lastEventId!, invoiceId: row.id, status: "RECEIVED", fiscalStatus: null, message: RECEIVED_MESSAGE, createdAt: row.createdAt };
    return c.json(await view(c, row, { events: [received], cancelledBy: null }), 202);
  })
  .openapi(list, async (c) => {
    const q = c.req.valid("query");
    const page = pageParams(q);
    let type: number | undefined;
    if (q.invoice_type) {
      const t = findDocumentType(q.invoice_type);
      if (!t) throw new AppError("VALIDATION_FAILED", `Unknown invoice_type ${q.invoice_type}.`, [{ field: "invoice_type", message: "Unknown document type" }]);
      type = t.code;
    }
    const { rows, total } = await listInvoices(c.env, c.get("company").id, { ...q, invoice_type: type, folio: q.folio ? Number(q.folio) : undefined }, page);
    const details = await invoiceDetails(c.env, rows);
    return c.json(pageEnvelope(rows.map((r, i) => invoiceView(r, details[i]!)), total, page), 200);
  })
  .openapi(get, async (c) => c.json(await view(c, await getInvoice(c.env, c.get("company").id, c.req.valid("param").invoice_id)), 200))
  .openapi(buyerCheck, async (c) => c.json(await view(c, await checkBuyerResponseNow(c.env, c.get("company").id, c.req.valid("param").invoice_id)), 200))
  .openapi(xml, async (c) => {
    const row = await getInvoice(c.env, c.get("company").id, c.req.valid("param").invoice_id);
    const object = await readDocumentXml(c.env.FILES, row.xmlKey);
    if (!object && row.status === "FAILED") {
      throw new AppError("INVOICE_XML_UNAVAILABLE", `${row.id} FAILED before it was signed, so its XML will never exist${row.lastError ? `: ${row.lastError.replace(/\.$/, "")}` : ""}. Issue a new document.`);
    }
    if (!object) throw new AppError("INVOICE_XML_NOT_READY", `The signed XML of ${row.id} does not exist yet (status ${row.status}); retry shortly.`);
    return new Response(object as Uint8Array<ArrayBuffer>, {
      headers: {
        "Content-Type": "application/xml; charset=ISO-8859-1",
        "Content-Disposition": `attachment; filename="DTE_T${row.documentType}_F${row.folio}.xml"`,
      },
    }) as never;
  })
  .openapi(pdf, async (c) => {
    const { invoice_id, format } = c.req.valid("param");
    const f = parsePdfFormat(format);
    const { bytes, fileName } = await invoicePdf(createDb(c.env.DB), c.env, await getInvoice(c.env, c.get("company").id, invoice_id), f);
    return new Response(bytes as Uint8Array<ArrayBuffer>, { headers: { "Content-Type": "application/pdf", "Content-Disposition": `attachment; filename="${fileName}"` } }) as never;
  })
  .openapi(pdfBase64, async (c) => {
    const { invoice_id, format } = c.req.valid("param");
    const f = parsePdfFormat(format);
    const { bytes, fileName } = await invoicePdf(createDb(c.env.DB), c.env, await getInvoice(c.env, c.get("company").id, invoice_id), f);
    return c.json({ file_name: fileName, content_type: "application/pdf" as const, format: f, size: bytes.length, data: bytesToBase64(bytes) }, 200);
  });
