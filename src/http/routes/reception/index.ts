/**
 * Reception (§4.10): documents received from suppliers. The company is the `company_id`
 * query parameter; the role/company guard applies as for /api/companies/{id}/… paths.
 */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { downloadFile } from "../../../reception/download";
import { intakeUpload } from "../../../reception/upload";
import { getReceived, listReceived } from "../../../reception/queries";
import { getInboundMessage, inboundMessageView, listInboundMessages } from "../../../reception/messages";
import { mailReplyAgain } from "../../../reception/mail-again";
import { respondToDocument } from "../../../reception/respond";
import { receivedView } from "../../../reception/view";
import { validationHook } from "../../errors/handler";
import { json, orderedRange, pageEnvelope, pageParams, PageQuerySchema } from "../../openapi/common";
import { defineRoute, MAX_BODY_BYTES } from "../../route";
import type { AppEnv } from "../../types";
import { CompanyQuery, DownloadParams, InboundMessageDetailSchema, InboundMessagePageSchema, ListQuery, MessageListQuery, MessageParams, Params, ReceivedDocumentSchema, ReceivedPageSchema, ReplyMailBody, SendResponseBody, UploadResultSchema, UploadSchema } from "./schemas";
import { dteXmlExample } from "../../openapi/xml-examples";
import {
  messageDetailExample, messagePageExample, receivedExample, receivedPageExample, receptionUploadExample, replyMailedExample, replyMailExample, respondedExample,
  sendResponseExample, uploadResultExample,
} from "./examples";

const TAGS = ["Purchases (Receptions)"];

const list = defineRoute({
  method: "get",
  path: "/api/reception/invoices/list",
  tags: TAGS,
  summary: "List received documents",
  description: "Documents suppliers sent to the company (e-mail, upload, or known from the SII's register), oldest first, with filters and pages.",
  permission: "document:read",
  companyInQuery: true,
  request: { query: orderedRange(ListQuery.merge(PageQuerySchema), [["issue_date_from", "issue_date_to"], ["received_from", "received_to"]]) },
  responses: { 200: { description: "A page of received documents", ...json(ReceivedPageSchema, receivedPageExample) } },
  errors: ["VALIDATION_FAILED"],
});

const get = defineRoute({
  method: "get",
  path: "/api/reception/invoices/{purchase_id}",
  tags: TAGS,
  summary: "Get a received document",
  description: "Issuer, recipient, type, folio, dates, amounts, lines, each verification check, the SII reception time, the response deadline and the response history.",
  permission: "document:read",
  companyInQuery: true,
  request: { params: Params, query: CompanyQuery },
  responses: { 200: { description: "The received document", ...json(ReceivedDocumentSchema, receivedExample) } },
  errors: ["RECEIVED_DOCUMENT_NOT_FOUND"],
});

const download = defineRoute({
  method: "post",
  path: "/api/reception/invoices/{purchase_id}/download/{type}",
  tags: TAGS,
  summary: "Download a received document or its replies",
  description: "`xml`: the DTE byte for byte as received (ISO-8859-1 as sent). `pdf`: our A4 printed layout with the PDF417 of its TED (the issuer's resolution is not in a DTE and prints as 0). `recepcion_envio`, `resultado_dte`, `envio_recibos`: the signed exchange replies, once produced.",
  permission: "document:read",
  companyInQuery: true,
  request: { params: DownloadParams, query: CompanyQuery },
  responses: {
    200: {
      description: "The file",
      content: { "application/xml": { schema: z.string(), example: dteXmlExample }, "application/pdf": { schema: z.any().openapi({ type: "string", format: "binary" }) } },
    },
  },
  errors: ["RECEIVED_DOCUMENT_NOT_FOUND", "RECEPTION_FILE_NOT_AVAILABLE", "CERTIFICATE_REQUIRED"],
});

const upload = defineRoute({
  method: "post",
  path: "/api/reception/invoices/upload",
  maxBodyBytes: MAX_BODY_BYTES,
  tags: TAGS,
  summary: "Upload a received EnvioDTE or DTE",
  description: "multipart/form-data with part `file`: for companies whose supplier mail arrives elsewhere. Same intake as e-mail: stored once per (issuer, type, folio), verified, flagged, never refused for a failed check. A file that is not an EnvioDTE/DTE at all is refused (RECEPTION_FILE_INVALID) and nothing is stored.",
  permission: "document:issue",
  companyInQuery: true,
  request: { query: CompanyQuery, body: { required: true, content: { "multipart/form-data": { schema: UploadSchema, example: receptionUploadExample } } } },
  responses: { 201: { description: "Taken in; one entry per DTE with its outcome", ...json(UploadResultSchema, uploadResultExample) } },
  errors: ["VALIDATION_FAILED", "UNSUPPORTED_MEDIA_TYPE", "PAYLOAD_TOO_LARGE", "RECEPTION_FILE_INVALID"],
});

const sendResponse = defineRoute({
  method: "post",
  path: "/api/reception/invoices/{purchase_id}/send_response",
  tags: TAGS,
  summary: "Accept or claim a received document",
  description:
    "Records the action in the SII's accept/claim register, then produces the signed exchange replies (RespuestaDTE ResultadoDTE for ACD/RCD/RFP/RFT, EnvioRecibos for ERM), stores them for download and mails them to the issuer when a send_email binding is configured. Rules checked first: only 33, 34, 43; within 8 calendar days of the SII reception time; ACD and ERM combine, a claim excludes both and vice versa; a repeat answers 200 with nothing new at the SII (when the replies' mail FAILED, it starts that mailing over); ACD/ERM are refused for a document that failed verification.",
  permission: "reception:respond",
  companyInQuery: true,
  request: { params: Params, query: CompanyQuery, body: { required: true, content: { "application/json": { schema: SendResponseBody, example: sendResponseExample } } } },
  responses: { 200: { description: "Recorded (or already recorded)", ...json(ReceivedDocumentSchema, respondedExample) } },
  errors: [
    "VALIDATION_FAILED", "RECEIVED_DOCUMENT_NOT_FOUND", "RECEPTION_ACTION_TYPE", "RECEPTION_ACTION_NO_XML", "RECEPTION_ACTION_UNVERIFIED",
    "RECEPTION_DEADLINE_PASSED", "RECEPTION_ACTION_CONFLICT", "RECEPTION_NOT_AT_AUTHORITY", "RECEPTION_AUTHORITY_REFUSED",
    "RECEPTION_AUTHORITY_UNAVAILABLE", "CERTIFICATE_REQUIRED",
  ],
});

const replyMail = defineRoute({
  method: "post",
  path: "/api/reception/invoices/{purchase_id}/reply_mail",
  tags: TAGS,
  summary: "Mail a reply to the supplier again",
  description:
    "Mails the file's RecepcionEnvio (`acknowledgment`) or the replies of a recorded response again: to `email`, else to the address on record (`reply_to`). The service mails each reply by itself when it is produced and retries a failed mailing for about 19 hours; this starts it over once it is SENT or FAILED (a bounce, a wrong address), or mails one that had no address. The answer shows the first attempt: SENT, or PENDING with why it failed (the next attempts follow). Nothing is recorded at the SII.",
  permission: "reception:respond",
  companyInQuery: true,
  request: { params: Params, query: CompanyQuery, body: { required: true, content: { "application/json": { schema: ReplyMailBody, example: replyMailExample } } } },
  responses: { 200: { description: "Mailed (or being retried); the document", ...json(ReceivedDocumentSchema, replyMailedExample) } },
  errors: ["VALIDATION_FAILED", "RECEIVED_DOCUMENT_NOT_FOUND", "RECEPTION_REPLY_MISSING", "RECEPTION_REPLY_NO_ADDRESS", "RECEPTION_REPLY_MAIL_PENDING", "RECEPTION_MAIL_UNAVAILABLE"],
});

const listMessages = defineRoute({
  method: "get",
  path: "/api/reception/messages",
  tags: TAGS,
  summary: "List inbound messages",
  description: "Every e-mail that reached the company's reception address and every file it uploaded, newest first, with what became of it: the documents it brought, or why it brought none (no DTE attached, not readable, too large, a zip refused). Where to look when a supplier says a document was sent.",
  permission: "document:read",
  companyInQuery: true,
  request: { query: orderedRange(MessageListQuery.merge(PageQuerySchema), [["received_from", "received_to"]]) },
  responses: { 200: { description: "A page of inbound messages", ...json(InboundMessagePageSchema, messagePageExample) } },
  errors: ["VALIDATION_FAILED"],
});

const getMessage = defineRoute({
  method: "get",
  path: "/api/reception/messages/{message_id}",
  tags: TAGS,
  summary: "Get an inbound message",
  description: "One e-mail or upload, with the ids of the received documents first stored from it.",
  permission: "document:read",
  companyInQuery: true,
  request: { params: MessageParams, query: CompanyQuery },
  responses: { 200: { description: "The inbound message", ...json(InboundMessageDetailSchema, messageDetailExample) } },
  errors: ["INBOUND_MESSAGE_NOT_FOUND"],
});

export const receptionRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(list, async (c) => {
    const q = c.req.valid("query");
    const page = pageParams(q);
    const { rows, total } = await listReceived(c.env, c.get("company").id, {
      issuerTaxId: q.issuer_tax_id, documentType: q.document_type ? Number(q.document_type) : undefined, folio: q.folio ? Number(q.folio) : undefined,
      issueDateFrom: q.issue_date_from, issueDateTo: q.issue_date_to, receivedFrom: q.received_from && new Date(q.received_from).toISOString(), receivedTo: q.received_to && new Date(q.received_to).toISOString(),
      verification: q.verification, responseState: q.response_state, deadlineBefore: q.deadline_before && new Date(q.deadline_before).toISOString(),
    }, page);
    return c.json(pageEnvelope(rows.map((r) => receivedView(r)), total, page), 200);
  })
  .openapi(get, async (c) => c.json(receivedView(await getReceived(c.env, c.get("company").id, c.req.valid("param").purchase_id)), 200))
  .openapi(download, async (c) => {
    const { purchase_id, type } = c.req.valid("param");
    return (await downloadFile(c.env, c.get("company"), purchase_id, type)) as never;
  })
  .openapi(upload, async (c) => {
    const { file } = c.req.valid("form");
    const result = await intakeUpload(c.env, c.get("company"), new Uint8Array(await file.arrayBuffer()), { name: file.name, type: file.type });
    return c.json(result, 201);
  })
  .openapi(listMessages, async (c) => {
    const q = c.req.valid("query");
    const page = pageParams(q);
    const { rows, total } = await listInboundMessages(c.env, c.get("company").id, {
      outcome: q.outcome, channel: q.channel, receivedFrom: q.received_from && new Date(q.received_from).toISOString(), receivedTo: q.received_to && new Date(q.received_to).toISOString(),
    }, page);
    return c.json(pageEnvelope(rows.map((r) => inboundMessageView(r)), total, page), 200);
  })
  .openapi(getMessage, async (c) => {
    const { row, documentIds } = await getInboundMessage(c.env, c.get("company").id, c.req.valid("param").message_id);
    return c.json({ ...inboundMessageView(row), document_ids: documentIds }, 200);
  })
  .openapi(replyMail, async (c) => {
    const body = c.req.valid("json");
    return c.json(receivedView(await mailReplyAgain(c.env, c.get("company"), c.req.valid("param").purchase_id, body.reply, body.email)), 200);
  })
  .openapi(sendResponse, async (c) => {
    const body = c.req.valid("json");
    const row = await respondToDocument(c.env, c.executionCtx as ExecutionContext, c.get("company"), c.req.valid("param").purchase_id, body.action, body.reason ?? null);
    return c.json(receivedView(row), 200);
  });
