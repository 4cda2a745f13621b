/** The received document as the API and the webhook events show it (one schema for both). */
import { z } from "@hono/zod-openapi";
import { ATTACHMENT_READS } from "../storage/db/schema";
import { ReceivedCessionSchema } from "./cessions-view";

const SignerSchema = z.object({
  name: z.string().nullable().openapi({ description: "The certificate holder (subject CN)." }),
  tax_id: z.string().nullable().openapi({ description: "The holder's RUT from the certificate (subjectAltName otherName 1.3.6.1.4.1.8321.1)." }),
  issuer: z.string().nullable().openapi({ description: "The certification authority that issued the certificate." }),
  kind: z.enum(["CA_ISSUED", "SELF_SIGNED", "KEY_ONLY"]),
  valid_from: z.string().nullable(),
  valid_to: z.string().nullable(),
});

const CheckSchema = z.object({
  name: z.enum(["envelope_signature", "dte_signature", "signer", "ted", "caf", "recipient_rut", "issuer_rut", "schema", "totals", "duplicate", "sii_status"]).openapi({
    description:
      "`sii_status`: the SII's own status of the document (QueryEstDte with its type, folio, issue date, total and RUTs), asked after intake with the company's active certificate (live mode: the SII; test mode: the simulator). PASSED: the SII registers it with the same data; FAILED: the SII holds other data for it (an altered or forged document) or says its folio or issuer is not valid; NOT_CHECKED: not listed by the SII yet (asked again with backoff for up to 48 hours), or not asked (no usable certificate, or the document failed its cryptographic checks), `message` says which.",
  }),
  result: z.enum(["PASSED", "FAILED", "NOT_APPLICABLE", "NOT_CHECKED", "UNVERIFIED"]).openapi({ description: "UNVERIFIED (signer only): the certificate comes from a certification authority we cannot confirm is accredited." }),
  message: z.string().nullable(),
  signer: SignerSchema.optional().openapi({ description: "On the signer check: who signed (kind KEY_ONLY, nothing named, when the signature carries only a key; absent when the signature does not verify)." }),
});

/** The issuer's address replies go to, and where it was found (view.ts ReplyRecipient). */
const ReplyRecipientSchema = z.object({
  email: z.string(),
  source: z.enum(["TAXPAYER_DIRECTORY", "EMAIL_SENDER", "REQUEST"]).openapi({ description: "The SII's taxpayer directory, the sender of the e-mail that brought the document, or given on request (`POST …/reply_mail`)." }),
});

const ReplyMailSchema = z
  .object({
    state: z.enum(["PENDING", "SENT", "FAILED"]).openapi({ description: "PENDING: not sent yet, another attempt is coming; SENT: the mail service took it; FAILED: every attempt failed, or the supplier's server bounced it after it was sent (or the mail service refused it or gave up on it) (`sent_at` set, `message` says what the server said; a `received_document.reply_mail_failed` event said so): send the same response again to start its mailing over, or download the reply and send it yourself." }),
    attempts: z.number().int().openapi({ description: "Attempts so far: the first at once, then waits of 5 minutes doubling up to 6 hours, 8 in all (about 19 hours)." }),
    sent_at: z.string().nullable(),
    message: z.string().nullable().openapi({ description: "Why the last attempt failed." }),
    next_attempt_at: z.string().nullable().openapi({ description: "When the next attempt is due while PENDING (ISO 8601 UTC); null once SENT or FAILED, and on mailings recorded before 2026-11-28." }),
    delivered_at: z.string().nullable().openapi({ description: "When the supplier's mail server accepted the mail SENT (ISO 8601 UTC), as the mail service reported it (Cloudflare Email Service's `message.delivered` Email Sending event); null until then, and for a new mailing; a bounce after it makes the mail FAILED and leaves it as recorded. It stays null where the mail service reports no deliveries (Email Routing's `send_email`, `wrangler dev`): SENT then means only that the mail service took it." }),
  })
  .nullable()
  .openapi({ description: "The mailing of the reply to `reply_to`; null when it is not mailed (no address known, no mail binding configured, or recorded before mailings were tracked)." });

const ResponseEntrySchema = z.object({
  action: z.enum(["ACD", "ERM", "RCD", "RFP", "RFT", "ACCEPTED_BY_LAW"]),
  reason: z.string().nullable(),
  at: z.string(),
  sii_code: z.number().int().nullable().openapi({ description: "The SII's codResp (0 OK, 7 already recorded)." }),
  sii_message: z.string().nullable(),
  files: z.array(z.string()).openapi({ description: "Exchange files produced for it (download types)." }),
  reply_to: ReplyRecipientSchema
    .nullable()
    .openapi({ description: "Where the replies are mailed: the issuer's exchange address from the SII's taxpayer directory, else the sender of the e-mail that brought the document. Null when neither is known (or no mail binding is configured): the replies are then only downloadable, and the company should send them to the supplier itself." }),
  mail: ReplyMailSchema,
});

export const ReceivedDocumentSchema = z
  .object({
    id: z.string().openapi({ example: "rcv_01JD3Q4M6YV8T1N5B2K7C9XW3E" }),
    id_company: z.string(),
    issuer: z.object({ tax_id: z.string(), legal_name: z.string().nullable(), activity: z.string().nullable() }),
    recipient: z.object({ tax_id: z.string().nullable(), legal_name: z.string().nullable() }),
    document_type: z.string().openapi({ example: "33" }),
    folio: z.number().int(),
    issue_date: z.string().nullable(),
    totals: z.object({ net: z.string().nullable(), exempt: z.string().nullable(), vat: z.string().nullable(), total: z.string().nullable() }),
    lines: z.array(z.object({ line: z.number(), name: z.string(), quantity: z.string().nullable(), unit_price: z.string().nullable(), amount: z.string().nullable() })),
    channel: z.enum(["UPLOAD", "EMAIL", "SII"]).openapi({ description: "How it first arrived: upload, e-mail, or the SII's register (cron polling)." }),
    received_file: z
      .object({
        name: z.string().nullable().openapi({ description: "The file's name as sent: the e-mail attachment, the entry of a zipped attachment, or the uploaded file (null when it had none, and for documents received before names were kept).", example: "EnvioDTE_76086428-5_T33_F1042.xml" }),
        envelope_id: z.string().nullable().openapi({ description: "The ID of the envelope's SetDTE (the EnvioDTEID the RecepcionEnvio reply names); null for a standalone DTE.", example: "SetDoc" }),
        message_id: z.string().nullable().openapi({ description: "The inbound message that brought it (GET /api/reception/messages/{message_id}); null when the XML came from the SII's register." }),
        received_at: z.string().openapi({ description: "When the file was taken in: the FchRecep of its RecepcionEnvio. Later than the document's `received_at` when the SII's register listed the document before its XML arrived." }),
        acknowledgment: z
          .object({
            at: z.string().openapi({ description: "When the file's RecepcionEnvio was built." }),
            reply_to: ReplyRecipientSchema
              .nullable()
              .openapi({ description: "Where it is mailed: the issuer's exchange address from the SII's taxpayer directory, else the sender of the e-mail. Null when neither is known or no mail binding is configured: download it (`recepcion_envio`) and send it to the supplier." }),
            mail: ReplyMailSchema,
          })
          .nullable()
          .openapi({ description: "The signed RespuestaDTE/RecepcionEnvio that answered the file (every document taken in from it, each with its EstadoRecepDTE), built when an e-mail or upload brought it and the company had an active certificate; `download/recepcion_envio` returns it. Null otherwise: that download then builds one for this document alone." }),
        superseded: z
          .array(
            z.object({
              xml_sha256: z.string(),
              reception_status: z.number().int().nullable(),
              name: z.string().nullable(),
              received_at: z.string().nullable(),
              channel: z.enum(["UPLOAD", "EMAIL", "SII"]),
              failed_checks: z.array(z.object({ name: z.string(), message: z.string().nullable() })),
              superseded_at: z.string(),
            }),
          )
          .openapi({ description: "Earlier copies of this document that did not verify, oldest first, which a later copy that verifies took the place of (its file is the one above); each with the checks it failed." }),
      })
      .nullable()
      .openapi({ description: "The file the XML arrived in; null while only the SII's register knows the document." }),
    xml_status: z.enum(["RECEIVED", "NOT_YET_RECEIVED"]).openapi({ description: "NOT_YET_RECEIVED: known from the SII's register, its XML has not arrived." }),
    verification: z.object({
      status: z.enum(["VERIFIED", "NEEDS_REVIEW", "FAILED", "PENDING"]).openapi({ description: "VERIFIED: every check passed (`sii_status` may still be NOT_CHECKED: the SII has not been asked or does not list it yet); NEEDS_REVIEW: received (EstadoRecepDTE 0) but the signer's CA is not one we can confirm, or the totals disagree; FAILED: not received (EstadoRecepDTE ≠ 0), or the `sii_status` check FAILED (which leaves reception_status as it was sent); PENDING: no XML yet." }),
      reception_status: z.number().int().nullable().openapi({ description: "EstadoRecepDTE: 0 OK, 1 signature, 2 issuer RUT, 3 recipient RUT, 4 repeated, 99 other." }),
      reception_status_text: z.string().nullable(),
      duplicate: z.boolean(),
      checks: z.array(CheckSchema),
    }),
    sii_received_at: z.string().nullable().openapi({ description: "When the SII received it (the start of the 8-day window); null until known." }),
    response_deadline: z.string().nullable().openapi({ description: "sii_received_at + 8 calendar days (33, 34, 43 only)." }),
    seconds_left: z.number().int().nullable().openapi({ description: "Until response_deadline while the response is pending." }),
    response_state: z.enum(["PENDING", "ACCEPTED", "GOODS_RECEIVED", "ACCEPTED_AND_RECEIVED", "CLAIMED", "ACCEPTED_BY_LAW", "NOT_APPLICABLE"]),
    responses: z.array(ResponseEntrySchema),
    cession: ReceivedCessionSchema.nullable().openapi({ description: "The document's cession to a third party (factoring), as the SII's register of cessions answers; null while it is not ceded (or not asked yet). Pay `cession.holder_tax_id`, not the supplier." }),
    downloads: z.array(z.string()).openapi({ description: "The `type` values download accepts now." }),
    received_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("ReceivedDocument");

/** What an inbound message can have become (the e-mail handler's and the upload's outcomes). */
export const MESSAGE_OUTCOMES = ["STORED", "REPLY", "BOUNCE", "NO_DTE", "MALFORMED", "TOO_LARGE", "ZIP_REFUSED"] as const;

/** An inbound message (e-mail or upload) as the API and the `inbound_message.no_documents` event show it. */
const inboundMessageFields = {
  id: z.string().openapi({ example: "inm_p1_01JD3Q4M6YV8T1N5B2K7C9XW3E" }),
  id_company: z.string(),
  channel: z.enum(["EMAIL", "UPLOAD"]),
  sender: z.string().nullable().openapi({ description: "The envelope sender of an e-mail (null for an upload).", example: "facturacion@proveedor.cl" }),
  recipient: z.string().nullable().openapi({ description: "The address it was sent to: the company's reception address (null for an upload)." }),
  subject: z.string().nullable().openapi({ description: "The e-mail's Subject, decoded (null for an upload, or when the message could not be read that far)." }),
  size: z.number().int().openapi({ description: "Bytes of the raw message or uploaded file." }),
  sha256: z.string().nullable().openapi({ description: "SHA-256 of the raw message or file (hex); null when it was refused unread (too large)." }),
  outcome: z.enum(MESSAGE_OUTCOMES).openapi({
    description: "`STORED`: it brought documents (see `documents`); `REPLY`: it brought no document but a buyer's reply to documents the company issued (RespuestaDTE, EnvioRecibos), read onto them (their `buyer_replies`; `detail` says which); `BOUNCE`: a receiving server's report (a delivery status notification) that a mail the company sent could not be delivered: a reply to a supplier or a delivery to a buyer, now `FAILED` with the server's reason (`detail` says which; its `received_document.reply_mail_failed` or `invoice.buyer_delivery` event went out); `NO_DTE`: no EnvioDTE or DTE in its XML or zip attachments (`detail` says what was found); `MALFORMED`: not a readable MIME message; `TOO_LARGE`: over 20 MiB; `ZIP_REFUSED`: a zip attachment broke a limit (entries, inflated size or ratio).",
  }),
  detail: z.string().nullable().openapi({ description: "Why nothing, or not everything, was taken in; null when everything was.", example: "No DTE in the XML attachments." }),
  documents: z.number().int().openapi({ description: "DTEs it carried that were taken in (new, already received, or duplicates)." }),
  attachments: z
    .array(
      z.object({
        name: z.string().nullable().openapi({ description: "The file name as sent (null when it had none).", example: "factura_1042.pdf" }),
        content_type: z.string().nullable().openapi({ description: "The type it was sent as.", example: "application/pdf" }),
        size: z.number().int().openapi({ description: "Bytes, decoded." }),
        read_as: z.enum(ATTACHMENT_READS).openapi({ description: "`XML`: read as an EnvioDTE or DTE; `ZIP`: the XML files inside it read; `IGNORED`: neither XML nor zip (a PDF, an image), not read; `OVER_LIMIT`: past the 50 attachments read per message." }),
      }),
    )
    .openapi({ description: "What the e-mail carried (its attachments, at most 100 listed), or the uploaded file; empty when the message could not be read that far, or was recorded before attachments were." }),
  received_at: z.string().openapi({ description: "When it reached the service (ISO 8601, UTC)." }),
};

export const InboundMessageSchema = z.object(inboundMessageFields).openapi("InboundMessage");
export const InboundMessageDetailSchema = z
  .object({ ...inboundMessageFields, document_ids: z.array(z.string()).openapi({ description: "Received documents first stored from this message, in arrival order (a DTE received before through another channel keeps its first message)." }) })
  .openapi("InboundMessageDetail");
