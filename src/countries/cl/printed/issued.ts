/**
 * The printed representation of a document Chile's issuers make: the body it was issued with,
 * computed again, in the layout the SII prescribes, with its stamp (the TED of its signed file) as a
 * PDF417 symbol.
 */
import type { Printing, PrintSettings, Resolution } from "../../port";
import { ADDITIONAL_TAXES, SPECIFIC_TAXES, computeDocument, formatAmount, type ComputedDocument, type InvoiceInput } from "../documents/invoice";
import { formatScaled } from "../documents/decimal";
import { decodeLatin1, flatten } from "../xml/xml";
import { siiOfficeLabel } from "../catalogs/communes";
import { PDF_FORMATS, pdfFileName, renderPdf, type PdfFormat, type PrintableBlock, type PrintableDocument, type DteTypeCode } from "./pdf";
import { extrasOf, subtotalsBlock } from "./extras";
import { otherOf, paymentBlocks } from "./payment";
import { detailOf, lineDetail } from "./lines";
import { transportBlocks } from "./transport";
import { receivedPdf } from "./received";
import { logoProblem } from "./pdf/render";

/** The TED as printed in the PDF417: flattened, without namespace, ISO-8859-1 characters. */
export function tedFromSignedXml(xml: Uint8Array): string {
  const text = decodeLatin1(xml);
  const m = /<TED version="1\.0">[\s\S]*?<\/TED>/.exec(text);
  if (!m) throw new Error("signed XML without TED");
  return flatten(m[0]);
}

/** The blocks under the recipient: transport and customs, sub-totals, payment and other data. */
function blocksOf(doc: ComputedDocument): PrintableBlock[] {
  const c = doc.customs;
  const amt = (v: bigint | undefined) => (v === undefined ? undefined : formatAmount(doc, v));
  const customs = c ? { ...c, saleClauseTotal: amt(c.saleClauseTotal), freight: amt(c.freight), insurance: amt(c.insurance) } : undefined;
  return [...transportBlocks(doc.transport, customs, doc.exportPaymentForm), ...subtotalsBlock(extrasOf(doc)), ...paymentBlocks(otherOf(doc), extrasOf(doc))];
}

function toPrintable(folio: number, doc: ComputedDocument, ted: string, settings: PrintSettings | undefined, resolution: Resolution, logo?: Uint8Array): PrintableDocument {
  return {
    ...printableOf(doc, folio, ted),
    // The envelope's resolution (settings first, same rule as the envelope), not only the body's.
    resolution,
    settings,
    logo,
  };
}

/** What the PDF prints of a computed document: every section the XML carries. */
export function printableOf(doc: ComputedDocument, folio: number, ted: string): PrintableDocument {
  const amt = (v: bigint | undefined) => (v === undefined ? undefined : formatAmount(doc, v));
  return {
    type: doc.type.code as DteTypeCode,
    folio,
    issueDate: doc.issueDate,
    dueDate: doc.dueDate,
    paymentMethod: doc.paymentForm,
    issuer: {
      rut: doc.issuer.rut,
      name: doc.issuer.legalName,
      activity: doc.issuer.activity,
      address: doc.issuer.address,
      comuna: doc.issuer.commune,
      city: doc.issuer.city,
      siiOffice: siiOfficeLabel(doc.issuer.commune, doc.issuer.city),
      branch: doc.branchOffice !== undefined ? String(doc.branchOffice) : undefined,
    },
    recipient: {
      rut: doc.receiver.rut,
      name: doc.receiver.legalName,
      activity: doc.receiver.activity,
      address: doc.receiver.address,
      comuna: doc.receiver.commune,
      city: doc.receiver.city,
      email: doc.receiver.email,
      phone: doc.receiver.contact,
    },
    transferType: doc.transferKind,
    lines: doc.lines.map((l) => ({
      description: l.name,
      detail: lineDetail(detailOf(l)),
      code: l.codes[0]?.value,
      quantity: l.qty,
      unit: l.unit,
      unitPrice: l.price,
      discount: l.discount > 0n ? amt(l.discount) : undefined,
      discountPercent: l.discountPct,
      surcharge: l.surcharge > 0n ? amt(l.surcharge) : undefined,
      surchargePercent: l.surchargePct,
      amount: amt(l.amount)!,
      exempt: l.exempt,
    })),
    adjustments: doc.adjustments.map((a) => ({
      kind: a.kind === "D" ? "discount" : "surcharge",
      description: a.description,
      percent: a.valueType === "%" ? a.value : undefined,
      amount: amt(a.amount)!,
      base: a.base === 1 ? "exempt" : a.base === 2 ? "nonBillable" : undefined,
    })),
    blocks: blocksOf(doc),
    references: doc.references.map((r) => ({ typeCode: r.type, folio: r.folio, date: r.date, reasonCode: r.codRef, reason: r.reason })),
    totals: {
      net: amt(doc.totals.net),
      exempt: amt(doc.totals.exempt),
      ivaRate: doc.totals.ivaRate,
      iva: amt(doc.totals.iva),
      otherTaxes: doc.totals.additional.map((t) => ({ code: Number(t.type), name: ADDITIONAL_TAXES[t.type]?.name ?? SPECIFIC_TAXES[t.type]?.name ?? `Impuesto ${t.type}`, rate: t.rate, amount: amt(t.amount)!, withholding: t.kind === "R" })),
      ivaNotRetained: amt(doc.totals.ivaNotRetained),
      ivaOwn: amt(doc.totals.ivaOwn),
      ivaThirdParty: amt(doc.totals.ivaThirdParty),
      constructionCredit: amt(doc.totals.constructionCredit),
      deposit: amt(doc.totals.deposit),
      commissions: doc.totals.commissions ? amt(doc.totals.commissions.net + doc.totals.commissions.exempt + doc.totals.commissions.iva) : undefined,
      nonBillable: amt(doc.totals.nonBillable),
      otherCurrency: doc.otherCurrency ? { name: doc.otherCurrency.siiName, rate: doc.otherCurrency.rate, total: formatScaled(doc.otherCurrency.total, doc.otherCurrency.scale) } : undefined,
      total: amt(doc.totals.total)!,
      period: extrasOf(doc).period,
      currency: doc.currency.code,
    },
    resolution: { number: Number(doc.issuer.resolutionNumber ?? 0), date: doc.issuer.resolutionDate ?? doc.issueDate },
    ted,
  };
}



const formatOf = (format: string): PdfFormat => {
  const found = PDF_FORMATS.find((f) => f === format);
  if (!found) throw new Error(`No paper format ${format}`);
  return found;
};

/** Chile's printing for the country port. */
export const chileanPrinting: Printing = {
  formats: PDF_FORMATS,
  fileName: (p, format) => pdfFileName({ issuer: { rut: p.issuerTaxId }, type: p.documentType as DteTypeCode, folio: p.folio }, formatOf(format)),
  async issued(p) {
    const doc = computeDocument(p.body as InvoiceInput);
    return renderPdf(toPrintable(p.folio, doc, tedFromSignedXml(p.signedXml), p.settings, p.resolution, p.logo), formatOf(p.format));
  },
  received: (p) => receivedPdf(p.xml, p.resolution),
  logoProblem,
};
