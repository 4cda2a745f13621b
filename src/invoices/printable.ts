import { ADDITIONAL_TAXES, computeDocument, formatScaled, formatAmount, SPECIFIC_TAXES, type ComputedDocument, type InvoiceInput, decodeLatin1, flatten } from "../countries/cl";
import type { Db } from "../storage/db/client";
import type { companySettings } from "../storage/db/schema";
import { effectiveResolution } from "../accounts/companies/settings";
import { companyControl } from "../accounts/companies/control-cache";
import { PDF_FORMATS, pdfFileName, renderPdf, type PdfFormat, type PrintableBlock, type PrintableDocument, type DteTypeCode } from "./pdf";
import { extrasOf, subtotalsBlock } from "./printable-extras";
import { otherOf, paymentBlocks } from "./printable-payment";
import { detailOf, lineDetail } from "./printable-lines";
import { transportBlocks } from "./printable-transport";
import { documentKeys } from "../storage/keys";
import { AppError } from "../lib/errors";
import { siiOfficeLabel } from "../countries/cl/catalogs/communes";
import { readDocumentXml } from "./stored-xml";
import type { InvoiceRow } from "./state";

export { PDF_FORMATS };

export function parsePdfFormat(input: string): PdfFormat {
  const format = PDF_FORMATS.find((f) => f.toLowerCase() === input.toLowerCase());
  if (!format) throw new AppError("INVOICE_PDF_FORMAT_UNKNOWN", `Unknown format ${input}; use one of ${PDF_FORMATS.join(", ")}.`, [{ field: "format", message: `One of ${PDF_FORMATS.join(", ")}` }]);
  return format;
}

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

function toPrintable(inv: InvoiceRow, doc: ComputedDocument, ted: string, settings: typeof companySettings.$inferSelect | undefined, resolution: { number: number; date: string }, logo?: Uint8Array): PrintableDocument {
  return {
    ...printableOf(doc, inv.folio!, ted),
    // The envelope's resolution (settings first, same rule as the envelope), not only the body's.
    resolution,
    settings: settings
      ? { decimal_places: settings.decimalPlaces, thousand_separator: settings.thousandSeparator, decimal_separator: settings.decimalSeparator, language: settings.language }
      : undefined,
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


/**
 * The printed representation, once the tax authority accepted the document. Rendered on first
 * request and cached in R2 per format and logo, so it never slows issuance down; a new logo makes
 * new renders.
 */
export async function invoicePdf(db: Db, env: Env, inv: InvoiceRow, format: PdfFormat): Promise<{ bytes: Uint8Array; fileName: string }> {
  if (inv.status !== "ACCEPTED" && inv.status !== "ACCEPTED_WITH_OBJECTIONS") {
    throw new AppError("INVOICE_NOT_ACCEPTED", `The PDF exists once the SII accepts the document; it is ${inv.status}${inv.fiscalStatus ? ` (${inv.fiscalStatus})` : ""}.`);
  }
  // Settings (logo, resolution, formats) and the company's start date from the isolate's control cache.
  const found = await companyControl(env, inv.companyId, Date.now());
  const [settings, company] = [found?.settings, found?.company];
  const body = JSON.parse(inv.body) as InvoiceInput;
  // The legend's resolution is the envelope's (same rule), so a new resolution makes new renders too.
  const resolution = effectiveResolution(settings, body.issuer.tax_information, company?.startActivitiesDate ?? null);
  const logoTag = settings?.logoKey ? settings.logoKey.split("/").pop()!.replace(/\.\w+$/, "") : "nologo";
  const key = documentKeys.invoicePdf(inv.companyId, inv.id, format, `${logoTag}-r${resolution.number}-${resolution.date}`);
  const doc = computeDocument(body);
  const fileName = pdfFileName({ issuer: { rut: doc.issuer.rut, name: doc.issuer.legalName }, type: inv.documentType as DteTypeCode, folio: inv.folio! }, format);
  const cached = await env.FILES.get(key);
  if (cached) return { bytes: new Uint8Array(await cached.arrayBuffer()), fileName };
  const xml = await readDocumentXml(env.FILES, inv.xmlKey);
  if (!xml) throw new Error(`signed XML of ${inv.id} missing`);
  const ted = tedFromSignedXml(xml);
  const logoObject = settings?.logoKey ? await env.FILES.get(settings.logoKey) : null;
  const logo = logoObject ? new Uint8Array(await logoObject.arrayBuffer()) : undefined;
  const bytes = await renderPdf(toPrintable(inv, doc, ted, settings, resolution, logo), format);
  await env.FILES.put(key, bytes, { httpMetadata: { contentType: "application/pdf" } });
  return { bytes, fileName };
}
