import { z } from "@hono/zod-openapi";
import { EMAIL_ADDRESS } from "../../../accounts/taxpayers/exchange-address";
import { calendarDate, filePart, instant, pageSchema } from "../../openapi/common";
import { InboundMessageDetailSchema, InboundMessageSchema, MESSAGE_OUTCOMES, ReceivedDocumentSchema } from "../../../reception/schema";

export { InboundMessageDetailSchema, ReceivedDocumentSchema };

export const CompanyQuery = z.object({
  company_id: z.string().min(1).max(64).openapi({ param: { name: "company_id", in: "query" }, description: "The receiving company (its id)." }),
});
export const Params = z.object({ purchase_id: z.string().min(1).max(64).openapi({ param: { name: "purchase_id", in: "path" }, description: "Id of the received document (`rcv_…`)." }) });


export const ReceivedPageSchema = pageSchema(ReceivedDocumentSchema, "ReceivedDocumentPage");

export const ListQuery = CompanyQuery.extend({
  issuer_tax_id: z.string().max(20).optional().openapi({ param: { name: "issuer_tax_id", in: "query" }, description: "Issuer RUT in any usual form." }),
  document_type: z.enum(["33", "34", "43", "46", "52", "56", "61", "110", "111", "112"]).optional().openapi({ param: { name: "document_type", in: "query" } }),
  folio: z.string().regex(/^[1-9]\d{0,9}$/, "A folio: a whole number from 1, of up to 10 digits.").optional().openapi({ param: { name: "folio", in: "query" } }),
  issue_date_from: calendarDate().optional().openapi({ param: { name: "issue_date_from", in: "query" } }),
  issue_date_to: calendarDate().optional().openapi({ param: { name: "issue_date_to", in: "query" } }),
  received_from: instant().optional().openapi({ param: { name: "received_from", in: "query" }, description: "ISO 8601: received by us at or after." }),
  received_to: instant().optional().openapi({ param: { name: "received_to", in: "query" } }),
  verification: z.enum(["VERIFIED", "FAILED", "PENDING"]).optional().openapi({ param: { name: "verification", in: "query" }, description: "VERIFIED: received with EstadoRecepDTE 0 (verification.status VERIFIED or NEEDS_REVIEW); FAILED: refused; PENDING: no XML yet." }),
  response_state: z.enum(["PENDING", "ACCEPTED", "GOODS_RECEIVED", "ACCEPTED_AND_RECEIVED", "CLAIMED", "ACCEPTED_BY_LAW", "NOT_APPLICABLE"]).optional().openapi({ param: { name: "response_state", in: "query" } }),
  deadline_before: instant().optional().openapi({ param: { name: "deadline_before", in: "query" }, description: "Response deadline at or before (ISO 8601)." }),
});

export const UploadSchema = z
  .object({ file: filePart("the EnvioDTE or DTE", "An EnvioDTE or a single DTE (XML, ISO-8859-1 or UTF-8), at most 2 MiB.") })
  .openapi("ReceptionUpload");

export const UploadResultSchema = z
  .object({
    kind: z.enum(["EnvioDTE", "DTE"]),
    file_sha256: z.string(),
    documents: z.array(ReceivedDocumentSchema.extend({ outcome: z.enum(["NEW", "ALREADY_RECEIVED", "DUPLICATE", "SUPERSEDED"]).openapi({ description: "NEW; ALREADY_RECEIVED (this DTE, or a copy of it in another form, was received before: `id` is that document); DUPLICATE (another document with its issuer, type and folio came first); SUPERSEDED (this copy verifies and took the place of an earlier copy that did not, kept in `received_file.superseded`)." }) })),
  })
  .openapi("ReceptionUploadResult");

export const DownloadParams = Params.extend({
  type: z.enum(["xml", "pdf", "recepcion_envio", "resultado_dte", "envio_recibos"]).openapi({ param: { name: "type", in: "path" }, description: "xml: the DTE byte for byte as received; pdf: our A4 printed layout with the PDF417 of its TED; recepcion_envio / resultado_dte / envio_recibos: the signed exchange replies once produced." }),
});

export const SendResponseBody = z
  .object({
    action: z.enum(["ACD", "ERM", "RCD", "RFP", "RFT"]).openapi({ description: "ACD accept the content; ERM acknowledge goods/services received (Ley 19.983); RCD claim the content; RFP claim partial lack of goods; RFT claim total lack of goods." }),
    reason: z.string().min(1).max(256).optional().openapi({ description: "Free text for the issuer (in the reply's glosa)." }),
  })
  .openapi("ReceptionResponse");

export const ReplyMailBody = z
  .object({
    reply: z.enum(["acknowledgment", "ACD", "ERM", "RCD", "RFP", "RFT"]).openapi({ description: "Which reply: `acknowledgment`, the file's RecepcionEnvio (`received_file.acknowledgment`); or the replies of that recorded response (`responses[]`)." }),
    email: z.string().max(254).regex(EMAIL_ADDRESS, "An e-mail address").optional().openapi({ description: "Send it here (kept as its `reply_to`, source REQUEST) instead of the address on record.", example: "dte@proveedor.cl" }),
  })
  .strict()
  .openapi("ReplyMailRequest");

export const MessageParams = z.object({ message_id: z.string().min(1).max(64).openapi({ param: { name: "message_id", in: "path" }, description: "Id of the inbound message (`inm_…`)." }) });

export const MessageListQuery = CompanyQuery.extend({
  outcome: z.enum(MESSAGE_OUTCOMES).optional().openapi({ param: { name: "outcome", in: "query" }, description: "What became of the message." }),
  channel: z.enum(["EMAIL", "UPLOAD"]).optional().openapi({ param: { name: "channel", in: "query" } }),
  received_from: instant().optional().openapi({ param: { name: "received_from", in: "query" }, description: "Received at or after (ISO 8601)." }),
  received_to: instant().optional().openapi({ param: { name: "received_to", in: "query" }, description: "Received at or before (ISO 8601)." }),
});

export const InboundMessagePageSchema = pageSchema(InboundMessageSchema, "InboundMessagePage");
