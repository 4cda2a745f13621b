import { OpenAPIHono, z } from "@hono/zod-openapi";
import { invoiceSchema } from "../../../invoices/model";
import { issueBatch } from "../../../invoices/batches/intake";
import { MAX_BATCH_ROWS, type RowInput } from "../../../invoices/batches/rows";
import { getBatch, listBatches, rowPage, statusCounts } from "../../../invoices/batches/store";
import { batchSummary, batchView, BatchSchema, BatchSummarySchema } from "../../../invoices/batches/view";
import { AppError, INVOICE_INPUT_CODES, type ErrorCode } from "../../../lib/errors";
import { validationHook, zodDetails } from "../../errors/handler";
import { idempotency } from "../../middleware/idempotency";
import { json, PageQuerySchema, pageEnvelope, pageParams, pageSchema } from "../../openapi/common";
import { defineRoute } from "../../route";
import { deepStrict } from "../../strict";
import type { AppEnv } from "../../types";
import { batchCompletedExample, batchCreateExample, batchPageExample, batchTakenExample, batchUploadExample, csvTemplateExample } from "./examples";
import { BatchUploadSchema, csvBatch, csvTemplate, TEMPLATE_DESCRIPTION, TemplateQuery } from "./csv";

/** Largest batch request: 1,000 documents of a few KiB each, or a CSV file of 10 MB and its multipart framing. */
export const BATCH_BODY_BYTES = 10 * 1024 * 1024 + 64 * 1024;

const Params = z.object({ company_id: z.string().min(1).max(64).openapi({ param: { name: "company_id", in: "path" } }) });
const BatchParams = Params.extend({ batch_id: z.string().min(1).max(64).openapi({ param: { name: "batch_id", in: "path" } }) });

/**
 * The rows are checked one by one (a bad row never refuses the others), so the request schema takes
 * any value per row; the document shows each row as the single POST's body.
 */
const BatchCreateSchema = z
  .object({
    rows: z
      .array(z.unknown())
      .min(1)
      .max(MAX_BATCH_ROWS)
      .openapi({ type: "array", items: { $ref: "#/components/schemas/InvoiceCreate" }, description: `1 to ${MAX_BATCH_ROWS} documents, each the body of \`POST …/invoices\`.` }),
  })
  .openapi("BatchCreate");

/** A row as the single POST validates its body (strict input included); a bad one becomes its row's error. */
const strictInvoice = deepStrict(invoiceSchema) as typeof invoiceSchema;
export function jsonRow(value: unknown): RowInput {
  const parsed = strictInvoice.safeParse(value);
  if (parsed.success) return { ok: true, body: parsed.data };
  const details = zodDetails(parsed.error);
  return { ok: false, error: { code: "VALIDATION_FAILED", message: `The body is invalid: ${details.map((d) => `${d.field}: ${d.message}`).join("; ")}`, details } };
}

const INPUT_ERRORS = Object.keys(INVOICE_INPUT_CODES).map((c) => `INVOICE_${c}` as ErrorCode);

const create = defineRoute({
  method: "post",
  path: "/api/companies/{company_id}/invoice-batches",
  tags: ["Invoices"],
  summary: "Issue up to 1,000 documents in one request",
  maxBodyBytes: BATCH_BODY_BYTES,
  rateLimit: "issuance",
  description:
    "A JSON body `{\"rows\": [...]}` whose each row is the body of `POST …/invoices`, or a CSV file (multipart part `file`, the layout of `GET /api/invoice-batches/csv-template`) whose documents are built from its lines. Each row and goes through the same checks. Rows are independent: a bad row is refused with the error the single POST would answer, its field paths prefixed with the row (`rows[17].items[0].unit_price`), and never stops the others; a refused row uses no folio. An `external_reference` used twice in the batch is refused on its later rows; one used by an earlier document is refused as the single POST refuses it. The valid rows' folios are reserved in one call per document type, their documents stored together and queued in groups, signed into envelopes of up to 500 documents. Answers 202 with the batch and every row's result; `GET …/invoice-batches/{batch_id}` follows it, and `batch.completed` is sent when every row is final. Accepts `Idempotency-Key`: a retry replays the first answer.",
  permission: "document:issue",
  middleware: [idempotency],
  // Not `required` for the validator's sake only: each media type is validated when it is the one sent
  // (a required body validates every declared type); a request with neither is refused below.
  request: { params: Params, body: { required: false, content: { "application/json": { schema: BatchCreateSchema, example: batchCreateExample }, "multipart/form-data": { schema: BatchUploadSchema, example: batchUploadExample } } } },
  responses: { 202: { description: "The batch, every row with its document or its error", ...json(BatchSchema, batchTakenExample) } },
  errors: ["VALIDATION_FAILED", "MALFORMED_JSON", "UNSUPPORTED_MEDIA_TYPE", "PAYLOAD_TOO_LARGE", "BATCH_TOO_MANY_ROWS", "BATCH_FILE_INVALID", "BATCH_FILE_TOO_LARGE", "IDEMPOTENCY_KEY_INVALID", "IDEMPOTENCY_KEY_REUSED", "IDEMPOTENCY_KEY_IN_USE"],
});

const RowsQuery = PageQuerySchema.extend({
  refused: z.enum(["true", "false"]).optional().openapi({ param: { name: "refused", in: "query" }, description: "true: only the rows that were refused." }),
});

const get = defineRoute({
  method: "get",
  path: "/api/companies/{company_id}/invoice-batches/{batch_id}",
  tags: ["Invoices"],
  summary: "Get a batch: progress and a page of its rows",
  description: "Counts per state, and the rows in order (`page`, `per_page` up to 100), each with its document's current status or its error.",
  permission: "document:read",
  request: { params: BatchParams, query: RowsQuery },
  responses: { 200: { description: "The batch", ...json(BatchSchema, batchCompletedExample) } },
  errors: ["BATCH_NOT_FOUND"],
});

const list = defineRoute({
  method: "get",
  path: "/api/companies/{company_id}/invoice-batches",
  tags: ["Invoices"],
  summary: "List batches",
  description: "Newest first, with their counts per state.",
  permission: "document:read",
  request: { params: Params, query: PageQuerySchema },
  responses: { 200: { description: "A page of batches", ...json(pageSchema(BatchSummarySchema, "BatchPage"), batchPageExample) } },
});

const csvTemplateRoute = defineRoute({
  method: "get",
  path: "/api/invoice-batches/csv-template",
  tags: ["Invoices"],
  summary: "Download the CSV template of batches",
  description: TEMPLATE_DESCRIPTION,
  permission: "document:read",
  request: { query: TemplateQuery },
  responses: { 200: { description: "The template", content: { "text/csv": { schema: z.string(), example: csvTemplateExample } } } },
});

export const invoiceBatchesRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(create, async (c) => {
    const multipart = (c.req.header("content-type") ?? "").toLowerCase().startsWith("multipart/form-data");
    const sent = multipart ? null : (c.req.valid("json") as Partial<z.infer<typeof BatchCreateSchema>>).rows;
    if (!multipart && !sent) throw new AppError("VALIDATION_FAILED", "A body is required: JSON with `rows`, or a multipart upload with `file`.", [{ field: "rows", message: "Required." }]);
    const input = multipart ? await csvBatch(c.req.valid("form") as z.infer<typeof BatchUploadSchema>, jsonRow) : { source: "JSON" as const, rows: sent!.map(jsonRow) };
    const answer = await issueBatch(c.env, c.get("company"), input, c.get("requestId"), new Date(), c.get("idempotency"));
    return c.json(answer, 202);
  })
  .openapi(get, async (c) => {
    const q = c.req.valid("query");
    const page = pageParams(q);
    const { batch, store } = await getBatch(c.env, c.get("company").id, c.req.valid("param").batch_id);
    const [counts, rows] = await Promise.all([statusCounts(store.db, batch.id), rowPage(store.db, batch.id, page, q.refused === "true")]);
    return c.json(batchView(batch, counts, rows, page), 200);
  })
  .openapi(csvTemplateRoute, (c) => csvTemplate(c.req.valid("query")) as never)
  .openapi(list, async (c) => {
    const page = pageParams(c.req.valid("query"));
    const { rows, total } = await listBatches(c.env, c.get("company").id, page);
    const data = await Promise.all(rows.map(async ({ batch, store }) => batchSummary(batch, await statusCounts(store.db, batch.id))));
    return c.json(pageEnvelope(data, total, page), 200);
  });
