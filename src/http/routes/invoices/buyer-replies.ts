/**
 * A buyer's own replies to the company's documents (src/invoices/buyer-replies.ts): upload one
 * received elsewhere (the reception address reads mailed ones by itself), and download the file an
 * entry of `buyer_replies` was read from.
 */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { openStore, partitionedId } from "../../../storage/db/document-store";
import { inboundMessages } from "../../../storage/db/schema";
import { describeReplyIntake, MAX_REPLIES_PER_DOCUMENT, recordBuyerReply, replyFileKey } from "../../../invoices/buyer-replies";
import { getInvoice } from "../../../invoices/queries";
import { BUYER_REPLY_STATUSES, type BuyerReplyRecord } from "../../../invoices/view";
import { AppError } from "../../../lib/errors";
import { uploadMessage } from "../../../reception/messages";
import { MAX_UPLOAD_BYTES } from "../../../reception/upload";
import { validationHook } from "../../errors/handler";
import { filePart, json } from "../../openapi/common";
import { defineRoute, MAX_BODY_BYTES } from "../../route";
import type { AppEnv } from "../../types";
import { buyerReplyXmlExample } from "../../openapi/xml-examples";
import { buyerReplyIntakeExample, buyerReplyUploadExample } from "./examples";

const Params = z.object({ company_id: z.string().min(1).max(64).openapi({ param: { name: "company_id", in: "path" } }) });
const ReplyParams = Params.extend({
  invoice_id: z.string().min(1).max(64).openapi({ param: { name: "invoice_id", in: "path" } }),
  reply_id: z.string().min(1).max(64).openapi({ param: { name: "reply_id", in: "path" }, description: "An `id` of the document's `buyer_replies`." }),
});

const ReplyUploadSchema = z.object({ file: filePart("the reply", "A RespuestaDTE or EnvioRecibos (XML, ISO-8859-1 or UTF-8), at most 2 MiB.") }).openapi("BuyerReplyUpload");

const ReplyIntakeSchema = z
  .object({
    kind: z.enum(["RespuestaDTE", "EnvioRecibos"]),
    file_sha256: z.string(),
    signature_valid: z.boolean().openapi({ description: "The reply's own signature (over its Resultado or SetRecibos) verifies; each entry also carries the signature that covers it." }),
    message_id: z.string().openapi({ description: "The inbound message recording this upload (GET /api/reception/messages/{id})." }),
    entries: z.array(
      z.object({
        reply_id: z.string(),
        kind: z.enum(["RECEPTION", "RESULT", "RECEIPT"]),
        status: z.enum(BUYER_REPLY_STATUSES),
        envelope_id: z.string().nullable().openapi({ description: "A RECEPTION that names no document: the EnvioDTEID of the envelope it answers (read onto the document whose envelope the service mailed the buyer). Null for an entry about a document." }),
        document_type: z.number().int().nullable(),
        folio: z.number().int().nullable(),
        invoice_id: z.string().nullable().openapi({ description: "The company's document it was read onto; null when none." }),
        outcome: z.enum(["RECORDED", "ALREADY_RECORDED", "NOT_OURS", "UNKNOWN_DOCUMENT"]).openapi({
          description: "RECORDED: added to the document's `buyer_replies` (an `invoice.buyer_reply` event); ALREADY_RECORDED: this file was read before; NOT_OURS: RUTEmisor is another company; UNKNOWN_DOCUMENT: no document of this company has that type and folio (or, for a verdict on an envelope, was mailed in that envelope).",
        }),
      }),
    ),
    envelopes: z
      .array(z.object({ envelope_id: z.string().nullable(), code: z.number().int().nullable(), text: z.string().nullable() }))
      .openapi({ description: "A RecepcionEnvio that names no document (the buyer's verdict on a whole envelope, EstadoRecepEnv) and no envelope the service mailed this company's buyers: not read onto any document. Also listed in `entries` (UNKNOWN_DOCUMENT or NOT_OURS)." }),
  })
  .openapi("BuyerReplyIntake");

const upload = defineRoute({
  method: "post",
  path: "/api/companies/{company_id}/invoices/buyer_replies",
  maxBodyBytes: MAX_BODY_BYTES,
  tags: ["Invoices"],
  summary: "Upload a buyer's reply",
  description: `multipart/form-data with part \`file\`: a buyer's RespuestaDTE (reception of the envelope, or acceptance or rejection of the contents) or EnvioRecibos (receipt of the goods, Ley 19.983) received outside the company's reception address (mailed there, it is read by itself). Each signature is verified; each entry about a document this company issued is added to that document's \`buyer_replies\` (at most ${MAX_REPLIES_PER_DOCUMENT} kept, the newest) with an \`invoice.buyer_reply\` event. The same file again adds nothing. Recorded in the inbound message log (outcome REPLY).`,
  permission: "document:issue",
  request: { params: Params, body: { required: true, content: { "multipart/form-data": { schema: ReplyUploadSchema, example: buyerReplyUploadExample } } } },
  responses: { 200: { description: "Read; one entry per document answered, with its outcome", ...json(ReplyIntakeSchema, buyerReplyIntakeExample) } },
  errors: ["VALIDATION_FAILED", "UNSUPPORTED_MEDIA_TYPE", "PAYLOAD_TOO_LARGE", "INVOICE_BUYER_REPLY_INVALID"],
});

const download = defineRoute({
  method: "get",
  path: "/api/companies/{company_id}/invoices/{invoice_id}/buyer_replies/{reply_id}/xml",
  tags: ["Invoices"],
  summary: "Download a buyer's reply",
  description: "The file an entry of `buyer_replies` was read from, byte for byte as received (it may answer other documents too).",
  permission: "document:read",
  request: { params: ReplyParams },
  responses: { 200: { description: "The reply", content: { "application/xml": { schema: z.string(), example: buyerReplyXmlExample } } } },
  errors: ["INVOICE_NOT_FOUND", "INVOICE_BUYER_REPLY_NOT_FOUND"],
});

export const buyerRepliesRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(upload, async (c) => {
    const { file } = c.req.valid("form");
    const company = c.get("company");
    if (file.size > MAX_UPLOAD_BYTES) throw new AppError("PAYLOAD_TOO_LARGE", `The file is larger than ${MAX_UPLOAD_BYTES} bytes.`);
    const bytes = new Uint8Array(await file.arrayBuffer());
    const store = await openStore(c.env, company.id);
    const messageId = partitionedId("inm", store.ordinal);
    const result = await recordBuyerReply(c.env, company, bytes, { channel: "UPLOAD", messageId });
    if ("problem" in result) throw new AppError("INVOICE_BUYER_REPLY_INVALID", `The file was not read: ${result.problem}`);
    await store.db.insert(inboundMessages).values(uploadMessage({ id: messageId, companyId: company.id, bytes, sha256: result.file_sha256, outcome: "REPLY", detail: describeReplyIntake(result), documents: 0, file: { name: file.name, type: file.type } }));
    const { root, ...rest } = result;
    // The kinds of reply the country reads are the ones the schema lists.
    return c.json({ kind: root as z.infer<typeof ReplyIntakeSchema>["kind"], message_id: messageId, ...rest }, 200);
  })
  .openapi(download, async (c) => {
    const { invoice_id, reply_id } = c.req.valid("param");
    const row = await getInvoice(c.env, c.get("company").id, invoice_id);
    const reply = (row.buyerReplies ? (JSON.parse(row.buyerReplies) as BuyerReplyRecord[]) : []).find((r) => r.id === reply_id);
    const object = reply ? await c.env.FILES.get(replyFileKey(row.companyId, reply.file_sha256)) : null;
    if (!reply || !object) throw new AppError("INVOICE_BUYER_REPLY_NOT_FOUND", `${row.id} has no buyer's reply ${reply_id}.`);
    return new Response(object.body, {
      headers: { "Content-Type": object.httpMetadata?.contentType ?? "application/xml", "Content-Disposition": `attachment; filename="reply_T${row.documentType}_F${row.folio}_${reply.id}.xml"` },
    }) as never;
  });
