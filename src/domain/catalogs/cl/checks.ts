import { EngineError, type DocumentTypeInfo, type InvoiceInput } from "../../../countries/cl";
import { fold } from "../query";
import additionalTaxes from "./data/additional-taxes.json";
import currencies from "./data/customs-currencies.json";
import units from "./data/customs-units.json";
import { REGIONS } from "./legal";

/**
 * Checks every coded field of an invoice body against Chile's catalogs, before any computation, so
 * the error names the field and the endpoint that lists the allowed values. Rules that depend on
 * the document type (CLP only on domestic documents, which taxes a type may carry) stay in the
 * engine. Free-text fields of the SII schema are not narrowed: UnmdItem on domestic documents (any
 * text of up to 4 characters), the commune (CmnaOrigen/CmnaRecep, text) and the Acteco codes (the
 * Acteco table is not complete here; the schema checks their form).
 */
const BASE = "/api/catalogs/CL";
const CURRENCY_CODES = new Set(currencies.map((c) => c.code));
const UNIT_CODES = new Set(units.flatMap((u) => [fold(u.name), u.code]));
const TAX_CODES = new Set(["IVA", "EXE", ...additionalTaxes.map((t) => t.code)]);
const REGION_CODES = new Set(REGIONS.flatMap((r) => [r.code, fold(String(r.attributes.roman)), fold(r.name)]));
const PAYMENT_CODES = new Set(["1", "2", "3", "CONTADO", "CASH", "CREDITO", "CRÉDITO", "CREDIT", "SIN_COSTO", "FREE"]);

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
}

export function checkInvoiceCodes(input: InvoiceInput, type: DocumentTypeInfo): void {
  const currency = input.currency?.code;
  if (currency !== undefined && !CURRENCY_CODES.has(currency.trim().toUpperCase())) unknown("currency.code", currency, "currencies", "currency code of the SII/customs table");
  const pay = input.payment_method?.code;
  if (pay !== undefined && !PAYMENT_CODES.has(pay.trim().toUpperCase())) unknown("payment_method.code", pay, "payment-types", "payment type (FmaPago)");
  checkParty(input.issuer, "issuer");
  checkParty(input.recipient, "recipient");
  input.items.forEach((it, i) => {
    const unit = it.code_unit_of_measure;
    if (unit !== undefined && type.export && !UNIT_CODES.has(fold(unit))) {
      unknown(`items[${i}].code_unit_of_measure`, unit, "measurement-units", "customs unit of measure (export documents use the customs table)");
    }
    (it.taxes ?? []).forEach((t, j) => {
      if (!TAX_CODES.has(t.type.trim().toUpperCase())) {
        const field = `items[${i}].taxes[${j}].type`;
        throw new EngineError("TAX_NOT_ALLOWED", `${field}: unknown tax type "${t.type}"; the SII's tax codes are listed at GET ${BASE}/tax-types`, { field });
      }
    });
  });
}
