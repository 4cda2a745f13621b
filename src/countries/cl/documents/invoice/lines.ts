/** Detalle: one computed line per item, with its tax treatment. */
import { EngineError } from "../../errors";
import { divRound, formatScaled, parseScaled, pow10 } from "../decimal";
import type { DocumentTypeInfo } from "../document-types";
import { checkLength, LIMITS, MAX_AMOUNT, sameRate } from "./checks";
import type { ComputedLine } from "./model";
import type { InvoiceInput } from "./schema";
import { ADDITIONAL_TAXES, IVA_RATE, QTY_SCALE } from "./tax-codes";

type Item = InvoiceInput["items"][number];

export function buildLines(input: InvoiceInput, type: DocumentTypeInfo, scale: number): ComputedLine[] {
  return input.items.map((it, i) => buildLine(it, i, type, scale));
}

function buildLine(it: Item, i: number, type: DocumentTypeInfo, scale: number): ComputedLine {
  const p = `items[${i}]`;
  checkLength(it.description, LIMITS.itemName, `${p}.description`);
  checkLength(it.code_unit_of_measure, LIMITS.unit, `${p}.code_unit_of_measure`);
  const qty = parseScaled(it.quantity, QTY_SCALE, `${p}.quantity`);
  if (qty === 0n) throw new EngineError("INVALID_NUMBER", `${p}.quantity must be greater than 0`, { field: `${p}.quantity` });
  const price = parseScaled(it.unit_price, QTY_SCALE, `${p}.unit_price`);
  const gross = divRound(qty * price * pow10(scale), pow10(2 * QTY_SCALE));
  const discount = it.discount_amount === undefined ? 0n : parseScaled(it.discount_amount, scale, `${p}.discount_amount`);
  if (discount > gross) {
    throw new EngineError("AMOUNT_OUT_OF_RANGE", `${p}.discount_amount exceeds the line amount ${formatScaled(gross, scale)}`, { field: `${p}.discount_amount`, expected: `≤ ${formatScaled(gross, scale)}` });
  }
  const amount = gross - discount;
  if (amount > MAX_AMOUNT) throw new EngineError("AMOUNT_OUT_OF_RANGE", `${p} amount exceeds 18 digits`, { field: p });
  let exempt = type.exempt;
  let explicitExe = false;
  let sawIva = false;
  const additional: string[] = [];
  (it.taxes ?? []).forEach((t, j) => {
    const tp = `${p}.taxes[${j}]`;
    const tt = t.type.trim().toUpperCase();
    if (tt === "IVA") {
      if (type.exempt) throw new EngineError("TAX_NOT_ALLOWED", `${tp}: IVA is not allowed on ${type.name}`, { field: `${tp}.type` });
      sameRate(t.rate, String(IVA_RATE), `${tp}.rate`);
      sawIva = true;
    } else if (tt === "EXE") {
      exempt = true;
      explicitExe = !type.exempt;
    } else if (ADDITIONAL_TAXES[tt]) {
      if (type.exempt || type.boleta) throw new EngineError("TAX_NOT_ALLOWED", `${tp}: additional tax ${tt} is not allowed on ${type.name}`, { field: `${tp}.type` });
      if (tt === "15" && type.code !== 46) throw new EngineError("TAX_NOT_ALLOWED", `${tp}: code 15 (IVA retenido total) is used on facturas de compra (46)`, { field: `${tp}.type` });
      sameRate(t.rate, ADDITIONAL_TAXES[tt]!.rate, `${tp}.rate`);
      if (additional.includes(tt)) throw new EngineError("TAX_NOT_ALLOWED", `${tp}: tax ${tt} listed twice`, { field: `${tp}.type` });
      additional.push(tt);
    } else {
      throw new EngineError("TAX_NOT_ALLOWED", `${tp}: tax type "${t.type}" is not issued by this service yet; use IVA, EXE or one of ${Object.keys(ADDITIONAL_TAXES).join(", ")} (GET /api/catalogs/CL/tax-types, attribute supported)`, { field: `${tp}.type` });
    }
  });
  if (exempt && (sawIva || additional.length > 0)) {
    throw new EngineError("TAX_NOT_ALLOWED", `${p}: an exempt line cannot carry IVA or additional taxes`, { field: `${p}.taxes` });
  }
  if (additional.length > 2) throw new EngineError("TAX_NOT_ALLOWED", `${p}: at most 2 additional taxes per line (CodImpAdic)`, { field: `${p}.taxes` });
  const line: ComputedLine = {
    lineNo: i + 1,
    name: it.description,
    discount,
    gross,
    exemptFlag: explicitExe,
    exempt,
    additionalTaxCodes: additional,
    amount,
  };
  if (qty !== 0n) line.qty = formatScaled(qty, QTY_SCALE);
  if (price !== 0n) line.price = formatScaled(price, QTY_SCALE);
  if (it.code_unit_of_measure) line.unit = it.code_unit_of_measure;
  return line;
}
