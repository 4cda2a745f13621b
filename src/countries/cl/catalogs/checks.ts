import { findActivity } from "./activities";
import { CHILE } from "./index";
import { findItemCodeType } from "./legal";
import { EngineError } from "../errors";
import type { DocumentTypeInfo } from "../documents/document-types";
import type { InvoiceInput } from "../documents/invoice/schema";
import { SPECIFIC_TAXES } from "../documents/invoice/tax-codes";
import { findEntry, fold } from "../../catalogs/query";
import type { CatalogEntry } from "../../catalogs/types";
import additionalTaxes from "./data/additional-taxes.json";
import currencies from "./data/customs-currencies.json";
import units from "./data/customs-units.json";
import countries from "./data/customs-countries.json";
import packageTypes from "./data/customs-package-types.json";
import paymentForms from "./data/customs-payment-forms.json";
import ports from "./data/customs-ports.json";
import saleClauses from "./data/customs-sale-clauses.json";
import saleModalities from "./data/customs-sale-modalities.json";
import transportModes from "./data/customs-transport-modes.json";
import { REGIONS } from "./legal";

/**
 * Checks every coded field of an invoice body against Chile's catalogs, before any computation, so
 * the error names the field and the endpoint that lists the allowed values. Rules that depend on
 * the document type (CLP only on domestic documents, which taxes a type may carry) stay in the
 * engine. Free-text fields of the SII schema are not narrowed: UnmdItem on domestic documents (any
 * text of up to 4 characters) and the commune (CmnaOrigen/CmnaRecep, text; a foreign address has any).
 */
const BASE = "/api/catalogs/CL";
const CURRENCY_CODES = new Set(currencies.map((c) => c.code));
const UNIT_CODES = new Set(units.flatMap((u) => [fold(u.name), u.code]));
const TAX_CODES = new Set(["IVA", "EXE", ...additionalTaxes.map((t) => t.code), ...Object.keys(SPECIFIC_TAXES)]);
const REGION_CODES = new Set(REGIONS.flatMap((r) => [r.code, fold(String(r.attributes.roman)), fold(r.name)]));
const PAYMENT_CODES = new Set(["1", "2", "3", "CONTADO", "CASH", "CREDITO", "CRÉDITO", "CREDIT", "SIN_COSTO", "FREE"]);

const codes = (rows: { code: string }[]) => new Set(rows.map((r) => r.code));
/** Customs fields of the body, each with its table and catalog endpoint. */
const CUSTOMS: { field: string; get: (i: InvoiceInput) => string | undefined; set: Set<string>; catalog: string; what: string }[] = [
  { field: "customs.sale_modality", get: (i) => i.customs?.sale_modality, set: codes(saleModalities), catalog: "additional-export-info/sale-modalities", what: "customs sale modality (CodModVenta)" },
  { field: "customs.sale_clause", get: (i) => i.customs?.sale_clause, set: codes(saleClauses), catalog: "additional-export-info/sale-clauses", what: "customs sale clause (CodClauVenta)" },
  { field: "customs.transport_mode", get: (i) => i.customs?.transport_mode, set: codes(transportModes), catalog: "additional-export-info/transport-modes", what: "customs transport mode (CodViaTransp)" },
  { field: "customs.port_of_loading", get: (i) => i.customs?.port_of_loading, set: codes(ports), catalog: "additional-export-info/ports", what: "customs port (CodPtoEmbarque)" },
  { field: "customs.port_of_unloading", get: (i) => i.customs?.port_of_unloading, set: codes(ports), catalog: "additional-export-info/ports", what: "customs port (CodPtoDesemb)" },
  { field: "customs.recipient_country", get: (i) => i.customs?.recipient_country, set: codes(countries), catalog: "additional-export-info/countries", what: "customs country code (CodPaisRecep)" },
  { field: "customs.destination_country", get: (i) => i.customs?.destination_country, set: codes(countries), catalog: "additional-export-info/countries", what: "customs country code (CodPaisDestin)" },
  { field: "customs.payment_form", get: (i) => i.customs?.payment_form, set: codes(paymentForms), catalog: "additional-export-info/payment-forms", what: "customs payment form (FmaPagExp)" },
  { field: "customs.gross_weight_unit", get: (i) => i.customs?.gross_weight_unit, set: codes(units), catalog: "measurement-units", what: "customs unit code (CodUnidPesoBruto)" },
  { field: "customs.net_weight_unit", get: (i) => i.customs?.net_weight_unit, set: codes(units), catalog: "measurement-units", what: "customs unit code (CodUnidPesoNeto)" },
  { field: "customs.tare_unit", get: (i) => i.customs?.tare_unit, set: codes(units), catalog: "measurement-units", what: "customs unit code (CodUnidMedTara)" },
  { field: "recipient.foreign.nationality", get: (i) => i.recipient?.foreign?.nationality, set: codes(countries), catalog: "additional-export-info/countries", what: "customs country code (Nacionalidad)" },
];
const PACKAGE_CODES = codes(packageTypes);

/**
 * The export block's codes against the customs tables (ports, sale modalities and clauses,
 * transport modes, package types, countries, payment forms, units).
 */
function checkCustoms(input: InvoiceInput): void {
  for (const c of CUSTOMS) {
    const v = c.get(input);
    if (v !== undefined && !c.set.has(v.trim())) unknown(c.field, v, c.catalog, c.what);
  }
  (input.customs?.packages ?? []).forEach((p, i) => {
    if (!PACKAGE_CODES.has(p.type.trim())) unknown(`customs.packages[${i}].type`, p.type, "additional-export-info/package-types", "customs package type (CodTpoBultos)");
  });
}

function unknown(field: string, value: string, catalog: string, what: string): never {
  throw new EngineError("CATALOG_CODE_UNKNOWN", `${field}: "${value}" is not a ${what}; the allowed values are listed at GET ${BASE}/${catalog}`, { field });
}

function isChile(country: string | undefined): boolean {
  return country === undefined || ["CL", "CHL"].includes(country.trim().toUpperCase());
}

function checkParty(p: InvoiceInput["issuer"] | undefined, path: string): void {
  const region = p?.address?.region;
  if (region !== undefined && region.trim() !== "" && isChile(p?.address?.country) && !REGION_CODES.has(fold(region))) {
    unknown(`${path}.address.region`, region, "regions", "Chilean region code (1 to 16)");
  }
  (p?.tax_information?.activity_codes ?? []).forEach((code, i) => {
    if (!findActivity(code)) unknown(`${path}.tax_information.activity_codes[${i}]`, String(code), "legal-activities", "SII economic activity code (Acteco)");
  });
}

export function checkInvoiceCodes(input: InvoiceInput, type: DocumentTypeInfo): void {
  const currency = input.currency?.code;
  if (currency !== undefined && !CURRENCY_CODES.has(currency.trim().toUpperCase())) unknown("currency.code", currency, "currencies", "currency code of the SII/customs table");
  const pay = input.payment_method?.code;
  if (pay !== undefined && !PAYMENT_CODES.has(pay.trim().toUpperCase())) unknown("payment_method.code", pay, "payment-types", "payment type (FmaPago)");
  checkParty(input.issuer, "issuer");
  checkParty(input.recipient, "recipient");
  checkCustoms(input);
  input.items.forEach((it, i) => {
    const unit = it.code_unit_of_measure;
    if (unit !== undefined && type.export && !UNIT_CODES.has(fold(unit))) {
      unknown(`items[${i}].code_unit_of_measure`, unit, "measurement-units", "customs unit of measure (export documents use the customs table)");
    }
    (it.item_codes ?? []).forEach((c, j) => checkItemCode(c, `items[${i}].item_codes[${j}]`));
    const moneda = it.other_currency?.code;
    if (moneda !== undefined && !CURRENCY_CODES.has(moneda.trim().toUpperCase())) unknown(`items[${i}].other_currency.code`, moneda, "currencies", "currency code of the SII/customs table");
    (it.taxes ?? []).forEach((t, j) => {
      if (!TAX_CODES.has(t.type.trim().toUpperCase())) {
        const field = `items[${i}].taxes[${j}].type`;
        throw new EngineError("TAX_NOT_ALLOWED", `${field}: unknown tax type "${t.type}"; the SII's tax codes are listed at GET ${BASE}/tax-types`, { field });
      }
    });
  });
}

/** GS1 modulo-10 check digit over every digit but the last. */
function gs1CheckDigitOk(digits: string): boolean {
  const body = digits.slice(0, -1);
  let sum = 0;
  for (let i = 0; i < body.length; i++) sum += Number(body[body.length - 1 - i]) * (i % 2 === 0 ? 3 : 1);
  return (10 - (sum % 10)) % 10 === Number(digits.at(-1));
}

/**
 * Checks one item code (CdgItem: TpoCodigo and VlrCodigo) and returns it with the standard type
 * written as the catalog writes it ("ean13" → "EAN13"). An issuer's own coding is accepted by any
 * name of up to 10 characters, as the SII allows; a GS1 type (EAN13, EAN8, DUN14, UPC) must carry
 * that many digits with a valid check digit. `field` is the path of the code in the body, e.g.
 * "items[0].codes[1]"; errors name `${field}.type` or `${field}.value` and the catalog endpoint.
 */
export function checkItemCode(code: { type: string; value: string }, field: string): { type: string; value: string } {
  const type = code.type.trim();
  const value = code.value.trim();
  if (type === "" || type.length > 10) {
    throw new EngineError("CATALOG_CODE_UNKNOWN", `${field}.type: "${code.type}" must be 1 to 10 characters (TpoCodigo); the standard types are listed at GET ${BASE}/item-code-types`, { field: `${field}.type` });
  }
  if (value === "" || value.length > 35) {
    throw new EngineError("INVALID_INPUT", `${field}.value must be 1 to 35 characters (VlrCodigo)`, { field: `${field}.value` });
  }
  const standard = findItemCodeType(type);
  const digits = standard?.attributes.digits;
  if (typeof digits === "number" && !(new RegExp(`^\\d{${digits}}$`).test(value) && gs1CheckDigitOk(value))) {
    throw new EngineError("INVALID_INPUT", `${field}.value: "${value}" is not a valid ${standard!.code} (${digits} digits with a GS1 check digit); see GET ${BASE}/item-code-types`, { field: `${field}.value` });
  }
  return { type: standard?.code ?? type, value };
}

/**
 * Any coded field against one of Chile's catalogs by its slug (the path after /api/catalogs/CL/),
 * for the engine's fields that map one-to-one to a table: e.g. `checkCatalogCode("transfer-kinds",
 * 5, "transport.transfer_kind")` or `checkCatalogCode("additional-export-info/ports", "905",
 * "customs.port_of_loading")`. Codes compare without regard to case or accents; returns the entry.
 */
export function checkCatalogCode(slug: string, value: string | number, field: string): CatalogEntry {
  const catalog = CHILE.catalogs.find((c) => c.slug === slug);
  if (!catalog) throw new Error(`no Chilean catalog "${slug}"`);
  const found = findEntry(catalog, String(value));
  if (!found) unknown(field, String(value), slug, `code of the ${catalog.title.toLowerCase()} table`);
  return found;
}
