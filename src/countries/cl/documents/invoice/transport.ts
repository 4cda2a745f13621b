/** Transporte: vehicle, driver and destination (guías, facturas) and the customs block (Aduana) of exports. */
import { EngineError } from "../../errors";
import { formatScaled, parseScaled } from "../decimal";
import type { DocumentTypeInfo } from "../document-types";
import { formatRut, parseRut, RutError } from "../rut";
import { notAllowed } from "./checks";
import type { ComputedCustoms, ComputedTransport } from "./model";
import type { InvoiceInput } from "./schema";

function rut(value: string, field: string): string {
  try {
    return formatRut(parseRut(value));
  } catch (e) {
    if (e instanceof RutError) throw new EngineError("INVALID_RUT", `${field}: ${e.message}`, { field });
    throw e;
  }
}

export function buildTransport(input: InvoiceInput, type: DocumentTypeInfo): ComputedTransport | undefined {
  const t = input.transport;
  if (!t) return undefined;
  if (type.boleta || type.code === 43) notAllowed("transport", `${type.name} carries no transport block`);
  const out: ComputedTransport = {};
  if (t.plate) out.plate = t.plate;
  if (t.carrier_rut) out.carrierRut = rut(t.carrier_rut, "transport.carrier_rut");
  if (t.driver) out.driver = { rut: rut(t.driver.rut, "transport.driver.rut"), name: t.driver.name };
  const d = t.destination;
  if (d && (d.address || d.commune || d.city)) {
    out.destination = {};
    if (d.address) out.destination.address = d.address;
    if (d.commune) out.destination.commune = d.commune;
    if (d.city) out.destination.city = d.city;
  }
  return out;
}

/** A customs code: digits only, at most `digits` of them (the schema's positiveInteger). */
function code(value: string | undefined, digits: number, field: string): number | undefined {
  if (value === undefined) return undefined;
  const s = value.trim();
  if (!new RegExp(`^\\d{1,${digits}}$`).test(s) || Number(s) === 0) {
    throw new EngineError("INVALID_INPUT", `${field} must be a customs code of 1 to ${digits} digits`, { field });
  }
  return Number(s);
}

function weight(value: unknown, field: string): string | undefined {
  if (value === undefined) return undefined;
  const v = parseScaled(value, 2, field);
  if (v === 0n || v >= 10n ** 10n) throw new EngineError("AMOUNT_OUT_OF_RANGE", `${field} must be greater than 0 and below 100,000,000`, { field });
  return formatScaled(v, 2);
}

function copyDefined<T extends object>(target: T, values: Partial<T>): void {
  for (const [k, v] of Object.entries(values)) if (v !== undefined) (target as Record<string, unknown>)[k] = v;
}

/**
 * The customs block. Codes are checked for form here and against the customs tables by the
 * catalog checks (src/countries/cl/catalogs/checks.ts) before the engine runs.
 */
export function buildCustoms(input: InvoiceInput, type: DocumentTypeInfo, scale: number): ComputedCustoms | undefined {
  const c = input.customs;
  if (!c) return undefined;
  if (!type.export && !isExportGuide(input, type)) notAllowed("customs", "the customs block is for export documents (110, 111, 112) and guías de despacho for export or its returns (52 with transfer_kind 7, 8 or 9)");
  const packages = (c.packages ?? []).map((p, i) => {
    const f = `customs.packages[${i}]`;
    const row: ComputedCustoms["packages"][number] = { type: code(p.type, 3, `${f}.type`)!, quantity: p.quantity };
    copyDefined(row, { marks: p.marks, containerId: p.container_id, seal: p.seal, sealIssuer: p.seal_issuer });
    return row;
  });
  const out: ComputedCustoms = { packages };
  const amount = (v: unknown, f: string) => (v === undefined ? undefined : parseScaled(v, scale, f));
  copyDefined(out, {
    saleModality: code(c.sale_modality, 2, "customs.sale_modality"),
    saleClause: code(c.sale_clause, 2, "customs.sale_clause"),
    saleClauseTotal: amount(c.sale_clause_total, "customs.sale_clause_total"),
    transportMode: code(c.transport_mode, 2, "customs.transport_mode"),
    carrierName: c.carrier_name,
    carrierCompanyRut: c.carrier_company_rut === undefined ? undefined : rut(c.carrier_company_rut, "customs.carrier_company_rut"),
    carrierCompanyName: c.carrier_company_name,
    booking: c.booking,
    operator: c.operator,
    portOfLoading: code(c.port_of_loading, 4, "customs.port_of_loading"),
    portOfLoadingAdditionalId: c.port_of_loading_additional_id,
    portOfUnloading: code(c.port_of_unloading, 4, "customs.port_of_unloading"),
    portOfUnloadingAdditionalId: c.port_of_unloading_additional_id,
    carrierCompanyAdditionalId: c.carrier_company_additional_id,
    tare: c.tare,
    tareUnit: code(c.tare_unit, 2, "customs.tare_unit"),
    grossWeight: weight(c.gross_weight, "customs.gross_weight"),
    grossWeightUnit: code(c.gross_weight_unit, 2, "customs.gross_weight_unit"),
    netWeight: weight(c.net_weight, "customs.net_weight"),
    netWeightUnit: code(c.net_weight_unit, 2, "customs.net_weight_unit"),
    totalItems: c.total_items,
    totalPackages: c.total_packages ?? (packages.length > 0 ? packages.reduce((s, p) => s + p.quantity, 0) : undefined),
    freight: amount(c.freight, "customs.freight"),
    insurance: amount(c.insurance, "customs.insurance"),
    recipientCountry: code(c.recipient_country, 3, "customs.recipient_country"),
    destinationCountry: code(c.destination_country, 3, "customs.destination_country"),
  });
  requireWith(c.port_of_loading_additional_id, c.port_of_loading, "customs.port_of_loading_additional_id", "port_of_loading");
  requireWith(c.port_of_unloading_additional_id, c.port_of_unloading, "customs.port_of_unloading_additional_id", "port_of_unloading");
  requireWith(c.carrier_company_additional_id, c.carrier_company_rut ?? c.carrier_company_name, "customs.carrier_company_additional_id", "carrier_company_rut or carrier_company_name");
  if (out.netWeight && out.grossWeight && parseScaled(out.netWeight, 2, "") > parseScaled(out.grossWeight, 2, "")) {
    throw new EngineError("AMOUNT_OUT_OF_RANGE", `customs.net_weight ${out.netWeight} exceeds customs.gross_weight ${out.grossWeight}`, { field: "customs.net_weight", expected: `≤ ${out.grossWeight}` });
  }
  return out;
}

/** An additional identifier (IdAdicPtoEmb, IdAdicPtoDesemb, IdAdicTransp) adds to the thing it identifies, which must be there. */
function requireWith(extra: string | undefined, base: unknown, field: string, needs: string): void {
  if (extra !== undefined && base === undefined) throw new EngineError("INVALID_INPUT", `${field} is an additional identifier of ${needs}, which is not sent`, { field, expected: `${needs} too` });
}

/**
 * A guía de despacho that moves goods for export (IndTraslado 8 or 9) or returns them from the
 * zone of shipment (7, "guía de devolución", issued by the customs agent: CdgTraslado 2). DTE_v10's
 * Documento has Aduana and FmaPagExp, which only such a guía can use among the Documento types
 * (Formato DTE v2.2: the customs area is conditional on guías, required with IndTraslado 8 or 9).
 */
const EXPORT_GUIDE_TRANSFERS: readonly number[] = [7, 8, 9];
export function isExportGuide(input: Pick<InvoiceInput, "transfer_kind">, type: DocumentTypeInfo): boolean {
  return type.code === 52 && EXPORT_GUIDE_TRANSFERS.includes(input.transfer_kind ?? 1);
}

/** FmaPagExp, the customs payment form of exports (in the customs block of the body). */
export function exportPaymentForm(input: InvoiceInput): number | undefined {
  return code(input.customs?.payment_form, 2, "customs.payment_form");
}
