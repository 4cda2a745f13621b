/**
 * Comisiones y otros cargos: on a liquidación-factura (43), what the agent charges the principal
 * for selling on its behalf; on a factura de compra (46), what the buyer charges the seller; and on
 * the notes (56, 61) that modify a factura de compra (Formato DTE v2.2, zone F). ValComNeto is sent
 * or is round(net × TasaComision / 100) of the document's taxed net; ValComIVA =
 * round(ValComNeto × 19 / 100). They are deducted from MntTotal.
 */
import { EngineError } from "../../errors";
import { divRound, formatScaled, parseScaled } from "../decimal";
import type { DocumentTypeInfo } from "../document-types";
import { notAllowed, sameAmount } from "./checks";
import { percentOf } from "./lines";
import type { ComputedCommission } from "./model";
import { referencesAnyOf } from "./references";
import type { InvoiceInput } from "./schema";
import { IVA_RATE, RATE_SCALE } from "./tax-codes";

export function buildCommissions(input: InvoiceInput, type: DocumentTypeInfo, scale: number, settledNet: bigint): ComputedCommission[] {
  const list = input.commissions ?? [];
  if (list.length > 0 && !commissionsAllowed(input, type)) notAllowed("commissions", "commissions and other charges (Comisiones) belong to liquidaciones-factura (43), facturas de compra (46) and the notes (56, 61) that reference a factura de compra (46, or 45 on paper)");
  return list.map((c, i) => {
    const p = `commissions[${i}]`;
    let net: bigint;
    let rate: string | undefined;
    if (c.percent !== undefined) {
      const pct = parseScaled(c.percent, RATE_SCALE, `${p}.percent`);
      if (pct === 0n || pct > 10000n) throw new EngineError("AMOUNT_OUT_OF_RANGE", `${p}.percent must be greater than 0 and at most 100`, { field: `${p}.percent`, expected: "0.01–100" });
      net = percentOf(settledNet, pct);
      rate = formatScaled(pct, RATE_SCALE);
      sameAmount(c.net_amount, net, scale, `${p}.net_amount`);
    } else if (c.net_amount !== undefined) {
      net = parseScaled(c.net_amount, scale, `${p}.net_amount`);
    } else {
      throw new EngineError("INVALID_INPUT", `${p}: send percent or net_amount`, { field: `${p}.net_amount` });
    }
    const exempt = c.exempt_amount === undefined ? 0n : parseScaled(c.exempt_amount, scale, `${p}.exempt_amount`);
    const out: ComputedCommission = { lineNo: i + 1, kind: c.kind === "COMMISSION" ? "C" : "O", description: c.description, net, exempt, iva: divRound(net * IVA_RATE, 100n) };
    if (rate !== undefined) out.rate = rate;
    return out;
  });
}

/** A note carries commissions when it modifies a factura de compra: one of its references is a 46 (or a paper 45). */
function commissionsAllowed(input: InvoiceInput, type: DocumentTypeInfo): boolean {
  if (type.code === 43 || type.code === 46) return true;
  if (type.code !== 56 && type.code !== 61) return false;
  return referencesAnyOf(input, ["46", "45"]);
}
