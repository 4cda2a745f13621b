import { DOCUMENT_TYPES, REASON_CODES } from "../documents/document-types";
import { ADDITIONAL_TAXES, SPECIFIC_TAXES } from "../documents/invoice/tax-codes";
import { COUNTRIES } from "../../catalogs/countries";
import { TAX_ID_DOCUMENTS } from "../../catalogs/tax-id-kinds";
import { entriesOf, entry, type Catalog, type CatalogEntry, type CountryCatalogs } from "../../catalogs/types";
import additionalTaxes from "./data/additional-taxes.json";
import customsCountries from "./data/customs-countries.json";
import customsCurrencies from "./data/customs-currencies.json";
import packageTypes from "./data/customs-package-types.json";
import customsPaymentForms from "./data/customs-payment-forms.json";
import ports from "./data/customs-ports.json";
import saleClauses from "./data/customs-sale-clauses.json";
import saleModalities from "./data/customs-sale-modalities.json";
import transportModes from "./data/customs-transport-modes.json";
import units from "./data/customs-units.json";
import paymentMeans from "./data/payment-means.json";
import { ACTIVITY_ENTRIES } from "./activities";
import { COMMUNE_ENTRIES, COMMUNES } from "./communes";
import { DISPATCH_KINDS, REFERENCE_TYPES, TRANSFER_KINDS } from "./document-codes";
import { ITEM_CODE_TYPES, LEGAL_FORMS, REGIONS, TAX_PROFILE_FIELDS } from "./legal";
import { SRC } from "./sources";

/** Documents the SII's accept/claim service (Ley 19.983, 8 days) covers (sii-formats.md §1). */
const EIGHT_DAY_ACCEPTANCE = new Set([33, 34, 43]);

function documentTypes(): CatalogEntry[] {
  const all = Object.values(DOCUMENT_TYPES);
  return all.map((t) => {
    const cancelledBy = all.filter((n) => n.note === "credit" && n.mayModify.includes(t.code)).map((n) => n.code);
    return entry(t.code, t.name, {
      mnemonic: t.mnemonic, export: t.export, boleta: t.boleta, exempt: t.exempt, note: t.note,
      cancellable: cancelledBy.length > 0, cancelled_by: cancelledBy, eight_day_acceptance: EIGHT_DAY_ACCEPTANCE.has(t.code),
      max_lines: t.maxLines,
    });
  });
}

const order = (code: string) => (/^\d+$/.test(code) ? Number(code) : -1);

function taxTypes(): CatalogEntry[] {
  return [
    entry("IVA", "Impuesto al Valor Agregado", { rate: "19", retention: false, supported: true }),
    entry("EXE", "Exento o no afecto (línea sin IVA)", { rate: "0", retention: false, supported: true }),
    ...additionalTaxes.map((t) => entry(t.code, t.name, { rate: t.rate, retention: t.retention, supported: t.code in ADDITIONAL_TAXES })),
    // Specific fuel taxes: an amount per m³ the SII publishes weekly, no percentage rate.
    ...Object.entries(SPECIFIC_TAXES).map(([code, t]) => entry(code, t.name, { rate: null, per: "m3", retention: false, supported: true })),
  ].sort((a, b) => order(a.code) - order(b.code));
}

const REASON_NAMES = { ANU: "Anula documento de referencia", COT: "Corrige texto del documento de referencia", COM: "Corrige montos" } as const;

const SII_OFFICES = [...new Set(COMMUNES.map((c) => c.siiOffice))].sort((a, b) => a.localeCompare(b, "es"));

const cat = (slug: string, tag: string, title: string, description: string, source: Catalog["source"], entries: readonly CatalogEntry[]): Catalog => ({
  slug, tag, title, description, source, entries,
});

const EXPORT = "Additional Export Info";

export const CHILE: CountryCatalogs = {
  alpha2: "CL",
  alpha3: "CHL",
  catalogs: [
    cat("countries", "Countries", "Countries", "ISO 3166-1 countries; `code` is alpha-3 (what companies store), `alpha2` the 2-letter code.", SRC.iso3166,
      COUNTRIES.map(([a2, a3, name]) => entry(a3, name, { alpha2: a2 }))),
    cat("regions", "Countries", "Regions", "Chile's 16 regions; `code` is the official number used in `address.region`.", SRC.regions, REGIONS),
    cat("communes", "Countries", "Communes", "All 346 communes: `code` is the official numeric commune code (CUT), `name` what goes in CmnaOrigen / CmnaRecep, `aliases` other accepted spellings, with the region and the SII unit that has jurisdiction.", SRC.communes,
      COMMUNE_ENTRIES),
    cat("document-types", "Document Types", "Document types", "DTE types this service issues: which note cancels each, and which are under the 8-day acceptance (Ley 19.983).", SRC.formatoDte("tabla de tipos de documento (TipoDTE)"), documentTypes()),
    cat("transfer-kinds", "Document Types", "Transfer kinds", "IndTraslado of a guía de despacho (52): why the goods move (`transport.transfer_kind`).", SRC.formatoDte("campo IndTraslado"), TRANSFER_KINDS),
    cat("dispatch-kinds", "Document Types", "Dispatch kinds", "TipoDespacho (guías and export documents): who carries the goods and where.", SRC.formatoDte("campo TipoDespacho"), DISPATCH_KINDS),
    cat("reference-types", "Document Types", "Reference document types", "TpoDocRef codes that are not DTE types: paper documents (`kind` paper) and supporting documents such as purchase orders (`kind` other). DTE types are in `document-types`; the SII also accepts free alphanumeric codes (HES, HEM) without validating them.", SRC.formatoDte("tabla de tipos de documento de referencia (TpoDocRef)"), REFERENCE_TYPES),
    cat("tax-identification-documents", "Tax Identification Documents", "Tax identification documents", "Identification documents accepted for companies of this country.", SRC.ours("Chile uses the RUT (Rol Único Tributario, DL 3 of 1969)"),
      (TAX_ID_DOCUMENTS.CHL ?? []).map((d) => entry(d.code, d.name, {}))),
    cat("currencies", "Currencies", "Currencies", "Currencies with their customs code and name (TpoMoneda in export documents). Domestic documents are in CLP.", SRC.aduana("tabla de monedas"),
      customsCurrencies.map((c) => entry(c.code, c.name, { customs_code: c.customs_code }))),
    cat("measurement-units", "Measurement Units", "Measurement units", "Customs units of measure (export documents: UnmdItem and the customs quantity fields). Domestic documents accept any unit text of up to 4 characters (UnmdItem is free text in the SII schema).", SRC.aduana("tabla de unidades de medida"),
      entriesOf(units).map((u) => entry(u.name, u.name, { customs_code: Number(u.code) }))),
    cat("tax-types", "Tax Types", "Tax types", "IVA, exempt lines, and every additional tax and retention code of the SII with its rate; `supported` says whether this service issues it yet.", SRC.formatoDte("tabla de impuestos adicionales y retenciones"), taxTypes()),
    cat("payment-types", "Payment Types", "Payment types", "FmaPago: 1 contado, 2 crédito, 3 sin costo (also accepted as CONTADO/CASH, CREDITO/CREDIT, SIN_COSTO/FREE).", SRC.formatoDte("campo FmaPago"),
      [entry("1", "Contado", { aliases: ["CONTADO", "CASH"] }), entry("2", "Crédito", { aliases: ["CREDITO", "CREDIT"] }), entry("3", "Sin costo (entrega gratuita)", { aliases: ["SIN_COSTO", "FREE"] })]),
    cat("payment-means", "Payment Types", "Payment means", "MedioPago: how a payment is made.", SRC.formatoDte("campo MedioPago"), entriesOf(paymentMeans)),
    cat("document-cancellation-reasons", "Document Cancellation Reasons", "Cancellation reasons", "`reason_code` of a note and the CodRef it sets.", SRC.reasons,
      (Object.keys(REASON_CODES) as (keyof typeof REASON_CODES)[]).map((k) => entry(k, REASON_NAMES[k], { cod_ref: REASON_CODES[k] }))),
    cat("legal-activities", "Legal Activities", "Economic activities (Acteco)", "The SII's economic activity codes (Acteco) with whether each is affected by IVA (`vat`), its income-tax category, whether it can be declared online, and its section and group. `tax_information.activity_codes` of an invoice must be in this list.", SRC.activities,
      ACTIVITY_ENTRIES),
    cat("item-code-types", "Item Code Types", "Item code types", "TpoCodigo: the standard codings. The SII accepts any coding name of up to 10 characters.", SRC.formatoDte("campo TpoCodigo (CdgItem)"), ITEM_CODE_TYPES),
    cat("additional-export-info/ports", EXPORT, "Customs ports", "Ports of shipment and landing (CodPtoEmbarque, CodPtoDesemb).", SRC.aduana("tabla de puertos"), entriesOf(ports)),
    cat("additional-export-info/transport-modes", EXPORT, "Transport modes", "CodViaTransp.", SRC.aduana("tabla de vías de transporte"), entriesOf(transportModes)),
    cat("additional-export-info/sale-clauses", EXPORT, "Sale clauses", "CodClauVenta (Incoterms as customs codes).", SRC.aduana("tabla de cláusulas de compraventa"), entriesOf(saleClauses)),
    cat("additional-export-info/sale-modalities", EXPORT, "Sale modalities", "CodModVenta.", SRC.aduana("tabla de modalidades de venta"), entriesOf(saleModalities)),
    cat("additional-export-info/package-types", EXPORT, "Package types", "CodTpoBultos.", SRC.aduana("tabla de tipos de bultos"), entriesOf(packageTypes)),
    cat("additional-export-info/countries", EXPORT, "Customs countries", "CodPaisRecep / CodPaisDestin: customs country codes.", SRC.aduana("tabla de países"), entriesOf(customsCountries)),
    cat("additional-export-info/payment-forms", EXPORT, "Export payment forms", "FmaPagExp.", SRC.aduana("tabla de formas de pago"),
      customsPaymentForms.map((f) => entry(f.code, f.name, { description: f.description }))),
    cat("legal-entities", "Legal Entities", "Legal forms", "Legal forms of a Chilean company.", SRC.ours("legal forms from the Chilean laws cited in `law`"), LEGAL_FORMS),
    cat("tax-information", "Tax Information", "Tax profile fields", "What a company's tax profile holds and the DTE field each fills.", SRC.formatoDte("Encabezado / Emisor"), TAX_PROFILE_FIELDS),
    cat("sii-offices", "Tax Information", "SII units", "SII regional directorates and units; the communes catalog names the unit of each commune.", SRC.communes,
      SII_OFFICES.map((o) => entry(o, o, { communes: COMMUNES.filter((c) => c.siiOffice === o).map((c) => c.name) }))),
  ],
};
