import type { Db } from "../storage/db/client";
import { effectiveResolution } from "../accounts/companies/settings";
import { companyControl } from "../accounts/companies/control-cache";
import { documentKeys } from "../storage/keys";
import { AppError } from "../lib/errors";
import { issuingCountry } from "../countries";
import { readDocumentXml } from "./stored-xml";
import type { InvoiceRow } from "./state";

/** The paper formats documents print in (a page and receipt rolls), as the API spells them. */
export const PDF_FORMATS = issuingCountry().printing.formats;
export type PdfFormat = string;


export function parsePdfFormat(input: string): PdfFormat {
  const format = PDF_FORMATS.find((f) => f.toLowerCase() === input.toLowerCase());
  if (!format) throw new AppError("INVOICE_PDF_FORMAT_UNKNOWN", `Unknown format ${input}; use one of ${PDF_FORMATS.join(", ")}.`, [{ field: "format", message: `One of ${PDF_FORMATS.join(", ")}` }]);
  return format;
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
  const body = JSON.parse(inv.body) as { issuer: { document_number: string; tax_information?: { resolution_number?: string; resolution_date?: string } } };
  // The legend's resolution is the envelope's (same rule), so a new resolution makes new renders too.
  const resolution = effectiveResolution(settings, body.issuer.tax_information, company?.startActivitiesDate ?? null);
  const logoTag = settings?.logoKey ? settings.logoKey.split("/").pop()!.replace(/\.\w+$/, "") : "nologo";
  const key = documentKeys.invoicePdf(inv.companyId, inv.id, format, `${logoTag}-r${resolution.number}-${resolution.date}`);
  const printing = issuingCountry().printing;
  const fileName = printing.fileName({ issuerTaxId: body.issuer.document_number, documentType: inv.documentType, folio: inv.folio! }, format);
  const cached = await env.FILES.get(key);
  if (cached) return { bytes: new Uint8Array(await cached.arrayBuffer()), fileName };
  const xml = await readDocumentXml(env.FILES, inv.xmlKey);
  if (!xml) throw new Error(`signed XML of ${inv.id} missing`);
  const logoObject = settings?.logoKey ? await env.FILES.get(settings.logoKey) : null;
  const logo = logoObject ? new Uint8Array(await logoObject.arrayBuffer()) : undefined;
  const printSettings = settings ? { decimal_places: settings.decimalPlaces, thousand_separator: settings.thousandSeparator, decimal_separator: settings.decimalSeparator, language: settings.language } : undefined;
  const bytes = await printing.issued({ body, folio: inv.folio!, signedXml: xml, resolution, settings: printSettings, logo, format });
  await env.FILES.put(key, bytes, { httpMetadata: { contentType: "application/pdf" } });
  return { bytes, fileName };
}
