/**
 * Chile's issuing rules (the port's IssuingRules, part of `documents`): the invoice body the API
 * accepts (../documents/invoice/schema.ts), computed and checked into a DTE (./prepare.ts), the
 * SII's rules on notes that cancel (./cancellation.ts) and on the issuer's resolution
 * (./sii-rules.ts), and the buyers' replies (./buyer-replies.ts).
 */
import type { IssuingRules } from "../../port";
import { invoiceSchema, partySchema, type InvoiceInput } from "../documents/invoice";
import { chileanBuyerReplies } from "./buyer-replies";
import { cancellationOf } from "./cancellation";
import { prepare } from "./prepare";
import { checkResolution } from "./sii-rules";

// The bodies the product hands back are the ones the API validated with `bodySchema`.
const bodyOf = (body: unknown) => body as InvoiceInput;

/** The issuer block's fields a company keeps as defaults: all but its RUT and the recipient-only ones. */
const issuerProfileSchema = partySchema.omit({ document_number: true, document_type: true, contact: true, internal_code: true, postal_address: true }).partial();

export const chileanIssuingRules: IssuingRules = {
  bodySchema: invoiceSchema,
  issuerProfileSchema,
  cancellation: (body) => cancellationOf(bodyOf(body)),
  prepare,
  checkResolution: (body, resolution) => checkResolution(bodyOf(body), resolution),
  buyerReplies: chileanBuyerReplies,
};
