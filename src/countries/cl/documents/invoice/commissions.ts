/**
 * Comisiones of a liquidación-factura (43): what the agent charges the principal for selling on
 * its behalf. ValComNeto is sent or is round(settled net × TasaComision / 100); ValComIVA =
 * round(ValComNeto × 19 / 100).
 */
import { EngineError } from "../../errors";
import { divRound, formatScaled, parseScaled } from "../decimal";
import type { DocumentTypeInfo } from "../document-types";
import { notAllowed, sameAmount } from "./checks";
import { percentOf } from "./lines";
import type { ComputedCommission } from "./model";
import type { InvoiceInput } from "./schema";
import { IVA_RATE, RATE_SCALE } from "./tax-codes";

export function buildCommissions(input: InvoiceInput, type: DocumentTypeInfo, scale: number, settledNet: bigint): ComputedCommission[] {
  const list = input.commissions ?? [];
  if (list.length > 0 && type.code !== 43) notAllowed("commissions", "commissions belong to liquidaciones-factura (43)");
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
