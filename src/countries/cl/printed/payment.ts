/**
 * The payment block and the other data (IdDoc's payment status, the principal and the requester, the
 * no-debit-reduction mark, the issuer's phones and codes, the postal address, MntBase/MntMargenCom and
 * the last elements' ids) as the PDF prints them: from the computed document (issued documents) or
 * from the XML (received ones, src/countries/cl/printed/received.ts).
 */
import { formatAmount, type ComputedDocument } from "../documents/invoice";
import paymentMeans from "../catalogs/data/payment-means.json";
import type { Amount, PrintableBlock, PrintableFieldValue } from "./pdf";
import { identityFields, type PrintedExtras } from "./extras";

const MEANS = new Map(paymentMeans.map((r) => [r.code, r.name]));
const ACCOUNT: Record<string, string> = { AHORRO: "de ahorro", CORRIENTE: "corriente", VISTA: "vista" };

/** What both paths read for these blocks; amounts as decimal strings (MntCancel and SaldoInsol are whole units). */
export interface PrintedOther {
  settlement?: { means?: string; paidDate?: string; paidAmount?: Amount; balance?: Amount; account?: { type?: string; number?: string; bank?: string } };
  /** RUTMandante of the document and of its lines (boletas), without repeats. */
  principals: string[];
  requesterRut?: string;
  noDebitReduction?: boolean;
  phones?: string[];
  sellerCode?: string;
  siiBranchCode?: number;
  postal?: { address?: string; commune?: string; city?: string };
  meatBase?: Amount;
  marginBase?: Amount;
}

export function otherOf(doc: ComputedDocument): PrintedOther {
  const s = doc.settlement;
  const amt = (v: bigint | undefined) => (v === undefined ? undefined : formatAmount(doc, v));
  return {
    settlement: s ? { ...s, paidAmount: s.paidAmount?.toString(), balance: s.balance?.toString() } : undefined,
    principals: [...new Set([doc.principalRut, ...doc.lines.map((l) => l.principalRut)].filter((r): r is string => r !== undefined))],
    requesterRut: doc.requesterRut,
    noDebitReduction: doc.noDebitReduction,
    phones: doc.issuer.phones,
    sellerCode: doc.issuer.sellerCode,
    siiBranchCode: doc.issuer.siiBranchCode,
    postal: doc.receiver.postal,
    meatBase: amt(doc.totals.meatBase),
    marginBase: amt(doc.totals.marginBase),
  };
}

const money = (v: Amount | undefined): PrintableFieldValue => (v === undefined ? "" : [{ money: v }]);

function otherFields(o: PrintedOther, x: PrintedExtras): [string, PrintableFieldValue][] {
  const fields: [string, PrintableFieldValue][] = [["Emitido por cuenta de (RUT mandante)", o.principals.join(", ")], ...identityFields(x)];
  if (o.requesterRut) fields.push(["Solicitado por (RUT)", o.requesterRut]);
  if (o.noDebitReduction) fields.push(["Nota de crédito", "sin derecho a descontar débito"]);
  if (o.phones) fields.push(["Teléfono", o.phones.join(", ")]);
  if (o.sellerCode) fields.push(["Vendedor", o.sellerCode]);
  if (o.siiBranchCode !== undefined) fields.push(["Código SII sucursal", String(o.siiBranchCode)]);
  if (o.postal) fields.push(["Dirección postal del receptor", [o.postal.address, o.postal.commune, o.postal.city].filter(Boolean).join(", ")]);
  if (o.meatBase !== undefined) fields.push(["Base faenamiento carne", money(o.meatBase)]);
  if (o.marginBase !== undefined) fields.push(["Base márgenes de comercialización", money(o.marginBase)]);
  return fields;
}

/** The "Pago" block and the "Otros datos" block. */
export function paymentBlocks(o: PrintedOther, x: PrintedExtras): PrintableBlock[] {
  const out: PrintableBlock[] = [];
  const s = o.settlement;
  if (s) {
    const a = s.account;
    const account = a ? [a.type ? `Cuenta ${ACCOUNT[a.type] ?? a.type}` : "Cuenta", a.number ? `N° ${a.number}` : "", a.bank ?? ""].filter(Boolean).join(" ") : "";
    out.push({ title: "Pago", fields: [["Medio de pago", s.means ? (MEANS.get(s.means) ?? s.means) : ""], ["Fecha de pago", s.paidDate ?? ""], ["Monto pagado", money(s.paidAmount)], ["Saldo insoluto", money(s.balance)], ["Cuenta de pago", account]] });
  }
  const fields = otherFields(o, x);
  if (fields.some(([, v]) => v !== "")) out.push({ title: "Otros datos", fields });
  return out;
}
