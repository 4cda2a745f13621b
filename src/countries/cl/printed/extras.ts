/**
 * The last elements of the document model as the PDF prints them (transaction kinds, the export
 * guide's authorisation, additional and foreign ids, other issuers of references, the point of sale,
 * sub-totals and their parts, the period totals), read either from the computed document (issued
 * documents) or from the XML (received ones, src/countries/cl/printed/received.ts): both paths print the same.
 */
import { formatAmount, type ComputedDocument } from "../documents/invoice";
import countries from "../catalogs/data/customs-countries.json";
import type { Amount, PrintableBlock, PrintableFieldValue, PrintablePeriod } from "./pdf";

export interface PrintedSubtotal {
  description: string;
  lines: number[];
  value: Amount;
  /** SubTotNetoSTI, SubTotIVASTI, SubTotAdicSTI, SubTotExeSTI: the ones not zero. */
  parts: { net?: Amount; iva?: Amount; additional?: Amount; exempt?: Amount };
}

/** What both paths read of the last elements; amounts as decimal strings of the document's currency. */
export interface PrintedExtras {
  purchaseKind?: number;
  saleKind?: number;
  exportGuide?: { transferCode?: number; authorizationNumber?: number; authorizationDate?: string };
  issuerAdditionalId?: string;
  additionalBranchCode?: string;
  foreign?: { id?: string; nationality?: string; additionalId?: string };
  otherIssuers: { lineNo: number; rut: string; additionalId?: string }[];
  pointOfSale?: { sellerCode?: string; registerCode?: string };
  subtotals: PrintedSubtotal[];
  period?: PrintablePeriod;
}

export const nameOf = (rows: { code: string; name: string }[]) => {
  const m = new Map(rows.map((r) => [r.code, r.name]));
  return (code: number | undefined) => (code === undefined ? "" : `${code} ${m.get(String(code)) ?? ""}`.trim());
};
export const COUNTRY = nameOf(countries);
/** TpoTranCompra and TpoTranVenta in words (the purchase and sales registers' kinds; TpoTranVenta 4 has no name in our reference). */
const PURCHASE_KIND: Record<number, string> = { 1: "Compras del giro", 2: "Compras en supermercados o similares", 3: "Adquisición de bien raíz", 4: "Compra de activo fijo", 5: "Compra con IVA de uso común", 6: "Compra sin derecho a crédito", 7: "Compra que no corresponde incluir" };
const SALE_KIND: Record<number, string> = { 1: "Ventas del giro", 2: "Venta de activo fijo", 3: "Venta de bien raíz" };

/** The last elements of a computed document (issued documents). */
export function extrasOf(doc: ComputedDocument): PrintedExtras {
  const amt = (v: bigint) => formatAmount(doc, v);
  const nonZero = (v: bigint) => (v !== 0n ? amt(v) : undefined);
  const r = doc.receiver;
  const p = doc.periodTotals;
  return {
    purchaseKind: doc.purchaseKind,
    saleKind: doc.saleKind,
    exportGuide: doc.issuer.exportGuide,
    issuerAdditionalId: doc.issuer.additionalId,
    additionalBranchCode: doc.issuer.additionalBranchCode,
    foreign: r.foreignId || r.nationality || r.additionalId ? { id: r.foreignId, nationality: r.nationality, additionalId: r.additionalId } : undefined,
    otherIssuers: doc.references.filter((ref) => ref.otherIssuer).map((ref) => ({ lineNo: ref.lineNo, rut: ref.otherIssuer!, additionalId: ref.otherIssuerAdditionalId })),
    pointOfSale: doc.pointOfSale,
    subtotals: doc.subtotals.map((st) => {
      const b = st.breakdown;
      return { description: st.description, lines: st.lines, value: amt(st.value), parts: b ? { net: nonZero(b.net), iva: nonZero(b.iva), additional: nonZero(b.additional), exempt: nonZero(b.exempt) } : {} };
    }),
    period: p ? { amount: amt(p.periodAmount), previousBalance: p.previousBalance !== undefined ? amt(p.previousBalance) : undefined, amountToPay: amt(p.amountToPay) } : undefined,
  };
}

/** The transaction kinds, the export guide's authorisation, the additional and foreign ids, the point of sale. */
export function identityFields(x: PrintedExtras): [string, string][] {
  const f: [string, string][] = [];
  if (x.purchaseKind !== undefined) f.push(["Tipo de transacción (compra)", `${x.purchaseKind} ${PURCHASE_KIND[x.purchaseKind] ?? ""}`.trim()]);
  if (x.saleKind !== undefined) f.push(["Tipo de transacción (venta)", `${x.saleKind} ${SALE_KIND[x.saleKind] ?? ""}`.trim()]);
  const g = x.exportGuide;
  if (g) {
    const auth = [g.authorizationNumber !== undefined ? `Res. N° ${g.authorizationNumber}` : "", g.authorizationDate ? `del ${g.authorizationDate}` : "", g.transferCode !== undefined ? `(código traslado ${g.transferCode})` : ""].filter(Boolean).join(" ");
    f.push(["Guía de exportación, autorización SII", auth]);
  }
  if (x.issuerAdditionalId) f.push(["Id. adicional del emisor", x.issuerAdditionalId]);
  if (x.additionalBranchCode) f.push(["Código adicional sucursal", x.additionalBranchCode]);
  const r = x.foreign;
  if (r) f.push(["Receptor extranjero", [r.id ? `Id. ${r.id}` : "", r.nationality ? `nacionalidad ${COUNTRY(Number(r.nationality))}` : "", r.additionalId ? `id. adicional ${r.additionalId}` : ""].filter(Boolean).join(", ")]);
  for (const o of x.otherIssuers) f.push([`Referencia ${o.lineNo}, emisor`, `${o.rut}${o.additionalId ? ` (id. adicional ${o.additionalId})` : ""}`]);
  if (x.pointOfSale?.sellerCode) f.push(["Vendedor", x.pointOfSale.sellerCode]);
  if (x.pointOfSale?.registerCode) f.push(["Caja", x.pointOfSale.registerCode]);
  return f;
}

/** SubTotInfo: each sub-total with the lines it adds up, its amount and its parts, printed as money. */
export function subtotalsBlock(x: PrintedExtras): PrintableBlock[] {
  if (x.subtotals.length === 0) return [];
  const value = (st: PrintedSubtotal): PrintableFieldValue => {
    const names: [string, Amount | undefined][] = [["neto", st.parts.net], ["IVA", st.parts.iva], ["imp. adicionales", st.parts.additional], ["exento", st.parts.exempt]];
    const parts = names.filter((n): n is [string, Amount] => n[1] !== undefined).flatMap(([n, v], i) => [`${i > 0 ? ", " : ""}${n} `, { money: v }]);
    return [{ money: st.value }, ...(parts.length > 0 ? [" (", ...parts, ")"] : [])];
  };
  return [{ title: "Subtotales", fields: x.subtotals.map((st): [string, PrintableFieldValue] => [`${st.description} (líneas ${st.lines.join(", ")})`, value(st)]) }];
}
