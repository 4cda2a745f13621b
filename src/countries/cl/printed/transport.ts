/**
 * Transporte and Aduana as the PDF prints them, codes with their names from the customs catalogs:
 * from the computed document (issued documents) or from the XML (received ones, src/countries/cl/printed/received.ts).
 */
import type { ComputedCustoms, ComputedTransport } from "../documents/invoice/model";
import packageTypes from "../catalogs/data/customs-package-types.json";
import paymentForms from "../catalogs/data/customs-payment-forms.json";
import ports from "../catalogs/data/customs-ports.json";
import saleClauses from "../catalogs/data/customs-sale-clauses.json";
import saleModalities from "../catalogs/data/customs-sale-modalities.json";
import transportModes from "../catalogs/data/customs-transport-modes.json";
import units from "../catalogs/data/customs-units.json";
import type { Amount, PrintableBlock, PrintableFieldValue } from "./pdf";
import { COUNTRY, nameOf } from "./extras";

const PORT = nameOf(ports);
const CLAUSE = nameOf(saleClauses);
const MODALITY = nameOf(saleModalities);
const MODE = nameOf(transportModes);
const PACKAGE = nameOf(packageTypes);
const PAYMENT_FORM = nameOf(paymentForms.map((r) => ({ code: r.code, name: r.description ?? r.name ?? "" })));
const UNIT = nameOf(units);

/** Aduana with its amounts (TotClauVenta, MntFlete, MntSeguro) as decimal strings of the document's currency. */
export type PrintedCustoms = Omit<ComputedCustoms, "saleClauseTotal" | "freight" | "insurance"> & { saleClauseTotal?: Amount; freight?: Amount; insurance?: Amount };

function packageText(p: PrintedCustoms["packages"][number]): string {
  const extra = [p.marks, p.containerId ? `contenedor ${p.containerId}` : "", p.seal ? `sello ${p.seal}${p.sealIssuer ? ` (${p.sealIssuer})` : ""}` : ""].filter(Boolean).join(", ");
  return `${p.quantity} × ${PACKAGE(p.type)}${extra ? ` (${extra})` : ""}`;
}

const money = (v: Amount | undefined): PrintableFieldValue => (v === undefined ? "" : [{ money: v }]);
const weight = (w: string | undefined, u: number | undefined) => (w === undefined ? "" : `${w} ${u !== undefined ? UNIT(u).replace(/^\d+ /, "") : ""}`.trim());

function customsFields(c: PrintedCustoms, exportPaymentForm: number | undefined): [string, PrintableFieldValue][] {
  return [
    ["Modalidad de venta", MODALITY(c.saleModality)],
    ["Cláusula de venta", c.saleClauseTotal !== undefined ? [`${CLAUSE(c.saleClause)} `.trimStart(), { money: c.saleClauseTotal }] : CLAUSE(c.saleClause)],
    ["Vía de transporte", [MODE(c.transportMode), c.carrierName ?? ""].filter(Boolean).join(" - ")],
    ["Compañía transportadora", [c.carrierCompanyName ?? "", c.carrierCompanyRut ? `RUT ${c.carrierCompanyRut}` : "", c.carrierCompanyAdditionalId ? `id. ${c.carrierCompanyAdditionalId}` : ""].filter(Boolean).join(", ")],
    ["Booking / operador", [c.booking ?? "", c.operator ?? ""].filter(Boolean).join(" / ")],
    ["Puerto de embarque", [PORT(c.portOfLoading), c.portOfLoadingAdditionalId ? `(${c.portOfLoadingAdditionalId})` : ""].filter(Boolean).join(" ")],
    ["Puerto de desembarque", [PORT(c.portOfUnloading), c.portOfUnloadingAdditionalId ? `(${c.portOfUnloadingAdditionalId})` : ""].filter(Boolean).join(" ")],
    ["Peso bruto", weight(c.grossWeight, c.grossWeightUnit)],
    ["Peso neto", weight(c.netWeight, c.netWeightUnit)],
    ["Tara", weight(c.tare !== undefined ? String(c.tare) : undefined, c.tareUnit)],
    ["Total ítems", c.totalItems !== undefined ? String(c.totalItems) : ""],
    ["Bultos", [c.totalPackages !== undefined ? String(c.totalPackages) : "", ...c.packages.map(packageText)].filter(Boolean).join("; ")],
    ["Forma de pago exportación", PAYMENT_FORM(exportPaymentForm)],
    ["Flete", money(c.freight)],
    ["Seguro", money(c.insurance)],
    ["País receptor", COUNTRY(c.recipientCountry)],
    ["País destino", COUNTRY(c.destinationCountry)],
  ];
}

/** The Transporte block (plate, carrier, driver, destination) and the Aduana block. */
export function transportBlocks(t: ComputedTransport | undefined, c: PrintedCustoms | undefined, exportPaymentForm: number | undefined): PrintableBlock[] {
  const out: PrintableBlock[] = [];
  if (t) {
    const dest = t.destination ? [t.destination.address, t.destination.commune, t.destination.city].filter(Boolean).join(", ") : "";
    out.push({ title: "Transporte", fields: [["Patente", t.plate ?? ""], ["RUT transportista", t.carrierRut ?? ""], ["Chofer", t.driver ? `${t.driver.name} (${t.driver.rut})` : ""], ["Destino", dest]] });
  }
  if (c) out.push({ title: "Aduana", fields: customsFields(c, exportPaymentForm) });
  return out;
}
