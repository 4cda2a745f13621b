/**
 * The text printed under a line's name: its long description, then what else the XML's Detalle
 * carries (the parts of its discount or surcharge, sub-quantities, elaboration and expiry dates, the
 * price in another currency, the show ticket); read from the computed line (issued documents) or
 * from the XML's Detalle (received ones, src/countries/cl/printed/received.ts).
 */
import { formatScaled } from "../documents/decimal";
import { OTHER_SCALE, type ComputedLine } from "../documents/invoice";
import { type ComputedTicket } from "../documents/invoice/model";

/** What the detail prints; the amounts in the other currency as decimal strings. */
export type PrintedLineDetail = Pick<ComputedLine, "longDescription" | "subQuantities" | "discountParts" | "surchargeParts" | "elaborationDate" | "expiryDate"> & {
  otherCurrency?: { code: string; price: string; factor?: string; discount?: string; surcharge?: string; amount?: string };
  show?: { kind: number; ticket?: ComputedTicket };
};

export function detailOf(l: ComputedLine): PrintedLineDetail {
  const o = l.otherCurrency;
  const v = (x: bigint | undefined) => (x === undefined ? undefined : formatScaled(x, OTHER_SCALE));
  return { ...l, otherCurrency: o ? { ...o, discount: o.discount ? v(o.discount) : undefined, surcharge: o.surcharge ? v(o.surcharge) : undefined, amount: v(o.amount) } : undefined };
}

export function lineDetail(l: PrintedLineDetail): string | undefined {
  const parts: string[] = [];
  if (l.longDescription) parts.push(l.longDescription);
  if (l.subQuantities) parts.push(`Subcantidades: ${l.subQuantities.map((q) => `${q.qty} ${q.codeType ? `${q.codeType} ` : ""}${q.code}`).join(", ")}`);
  const split = (xs: { type: "%" | "$"; value: string }[]) => xs.map((x) => (x.type === "%" ? `${x.value}%` : x.value)).join(" + ");
  if (l.discountParts) parts.push(`Descuento: ${split(l.discountParts)}`);
  if (l.surchargeParts) parts.push(`Recargo: ${split(l.surchargeParts)}`);
  if (l.elaborationDate) parts.push(`Elaboración: ${l.elaborationDate}`);
  if (l.expiryDate) parts.push(`Vencimiento: ${l.expiryDate}`);
  const o = l.otherCurrency;
  if (o) {
    const adj = [o.discount ? `desc. ${o.discount}` : "", o.surcharge ? `rec. ${o.surcharge}` : ""].filter(Boolean).join(", ");
    parts.push(`${o.code} ${o.price} c/u${o.factor ? ` (factor ${o.factor})` : ""}${adj ? `, ${adj}` : ""}${o.amount !== undefined ? `: ${o.code} ${o.amount}` : ""}`);
  }
  if (l.show) parts.push(l.show.kind === 2 ? "Valor servicio (espectáculo)" : "Entrada");
  const t = l.show?.ticket;
  if (t) {
    const seat = [t.section, t.row ? `fila ${t.row}` : "", t.seat ? `asiento ${t.seat}` : ""].filter(Boolean).join(", ");
    parts.push(`Ticket N° ${t.folio} ${t.ticketType}: ${t.eventName} (${t.eventCode}), ${t.eventDate.replace("T", " ")}, ${t.venue}, ${seat}`);
  }
  return parts.length > 0 ? parts.join(" · ") : undefined;
}
