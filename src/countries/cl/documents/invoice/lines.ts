/** Detalle: one computed line per item (codes, quantities, discounts and surcharges with their breakdown, tax treatment). */
import { EngineError } from "../../errors";
import { divRound, formatScaled, parseScaled, pow10 } from "../decimal";
import type { DocumentTypeInfo } from "../document-types";
import { MAX_AMOUNT, notAllowed, sameAmount, sameRate } from "./checks";
import type { ComputedLine, ExemptIndicator } from "./model";
import type { InvoiceInput } from "./schema";
import { ADDITIONAL_TAXES, ADDITIONAL_TAX_TYPES, IVA_RATE, QTY_SCALE, RATE_SCALE, SPECIFIC_TAXES, TOTAL_RETENTION_TYPES } from "./tax-codes";
import { addLineExtras } from "./line-extras";
import { referencesAnyOf } from "./references";
import { type Breakdown, breakdownOf, checkBreakdown } from "./breakdown";

type Item = InvoiceInput["items"][number];
interface LineContext {
  type: DocumentTypeInfo;
  scale: number;
  grossPrices: boolean;
}

/** Document types on which each IndExe value above 1 may appear (Formato DTE v2.2, IndExe). */
const INDICATOR_TYPES: Record<2 | 3 | 4 | 5 | 6, readonly number[]> = {
  2: [33, 34, 39, 41, 46, 52, 56, 61, 110, 111, 112],
  3: [33, 34, 52, 56, 61],
  4: [33, 34, 46, 52, 110],
  5: [52, 61],
  6: [33, 34, 39, 41, 46, 52, 56, 61, 110, 111, 112],
};

export function buildLines(input: InvoiceInput, type: DocumentTypeInfo, scale: number): ComputedLine[] {
  const ctx: LineContext = { type, scale, grossPrices: input.gross_prices === true || (type.boleta && input.net_amounts !== true) };
  const lines = input.items.map((it, i) => buildLine(it, i, ctx));
  if (type.code === 52) checkReducedItems(input, lines);
  return lines;
}

/**
 * IndExe 5 on a guía (Formato DTE v2.2, IndExe): an item a non-sale guía takes back from an earlier
 * guía, which the guía references. It is not a sale, so it stays out of the totals (as IndExe 4).
 */
function checkReducedItems(input: InvoiceInput, lines: ComputedLine[]): void {
  const i = lines.findIndex((l) => l.indicator === 5);
  if (i < 0) return;
  const transfer = input.transfer_kind ?? 1;
  if (transfer === 1 || transfer === 9) notAllowed(`items[${i}].exempt_indicator`, `IndExe 5 (an item to take back) is for a guía that is not a sale; this one has transfer_kind ${transfer}`);
  if (!referencesAnyOf(input, ["52", "50"])) throw new EngineError("REFERENCE_REQUIRED", `items[${i}]: an item to take back (IndExe 5) needs a reference to the earlier guía (billing_reference of type 52, or 50 on paper)`, { field: "billing_reference" });
}

/** Percentage (2 decimals) of an amount, rounded half away from zero. */
export function percentOf(amount: bigint, pct: bigint): bigint {
  return divRound(amount * pct, 100n * pow10(RATE_SCALE));
}

function parsePercent(value: unknown, field: string, max: bigint, maxText: string): bigint {
  const pct = parseScaled(value, RATE_SCALE, field);
  if (pct === 0n || pct > max) throw new EngineError("AMOUNT_OUT_OF_RANGE", `${field} must be greater than 0 and at most ${maxText}`, { field, expected: `0.01–${maxText}` });
  return pct;
}

type Adjustment = { amount: bigint; pct?: string; parts?: Breakdown["parts"] };

/** DescuentoMonto or RecargoMonto from a percentage, an amount and/or a breakdown (all must agree). */
function adjustment(gross: bigint, it: Item, p: string, what: "discount" | "surcharge", ctx: LineContext): Adjustment {
  const pctIn = it[`${what}_percent`];
  const amountIn = it[`${what}_amount`];
  const partsIn = it[`${what}_breakdown`];
  const b = partsIn ? breakdownOf(partsIn, gross, `${p}.${what}_breakdown`, ctx.type, ctx.scale) : undefined;
  if (b && pctIn === undefined && amountIn === undefined) return { amount: b.amount, parts: b.parts };
  let pct: bigint | undefined;
  if (pctIn !== undefined) {
    const max = what === "discount" || ctx.type.boleta ? 10000n : 99999n;
    pct = parsePercent(pctIn, `${p}.${what}_percent`, max, max === 10000n ? "100" : "999.99");
  }
  // DescuentoMonto and RecargoMonto are whole numbers (MntImpType), in foreign currency too.
  const whole = pow10(ctx.scale);
  const fromPct = pct === undefined ? undefined : divRound(percentOf(gross, pct), whole) * whole;
  if (amountIn !== undefined && fromPct !== undefined) sameAmount(amountIn, fromPct, ctx.scale, `${p}.${what}_amount`);
  const amount = fromPct ?? (amountIn === undefined ? 0n : parseScaled(amountIn, ctx.scale, `${p}.${what}_amount`));
  if (amount % whole !== 0n) {
    throw new EngineError("INVALID_NUMBER", `${p}.${what}_amount must be a whole number of ${ctx.type.name}'s currency (DescuentoMonto and RecargoMonto carry no decimals)`, { field: `${p}.${what}_amount` });
  }
  const out: Adjustment = pct === undefined ? { amount } : { amount, pct: formatScaled(pct, RATE_SCALE) };
  if (b) {
    checkBreakdown(b, amount, `${p}.${what}_breakdown`, ctx.scale);
    out.parts = b.parts;
  }
  return out;
}

function indicatorOf(it: Item, p: string, type: DocumentTypeInfo): ExemptIndicator | undefined {
  const exe = (it.taxes ?? []).some((t) => t.type.trim().toUpperCase() === "EXE");
  const ind = it.exempt_indicator as ExemptIndicator | undefined;
  if (ind !== undefined && ind !== 1 && exe) throw new EngineError("TAX_NOT_ALLOWED", `${p}: taxes EXE means exempt_indicator 1, not ${ind}`, { field: `${p}.exempt_indicator` });
  if (ind !== undefined && ind !== 1 && !INDICATOR_TYPES[ind].includes(type.code)) {
    notAllowed(`${p}.exempt_indicator`, `IndExe ${ind} is not allowed on ${type.name}; it is used on ${INDICATOR_TYPES[ind].join(", ")}`);
  }
  if (ind === 1 || exe) return type.exempt ? undefined : 1;
  return ind;
}

type ItemTax = NonNullable<Item["taxes"]>[number];

function lineTaxes(it: Item, p: string, ctx: LineContext, taxable: boolean): string[] {
  const additional: string[] = [];
  let sawIva = false;
  (it.taxes ?? []).forEach((t, j) => {
    const tp = `${p}.taxes[${j}]`;
    const tt = t.type.trim().toUpperCase();
    if (tt === "EXE") return;
    if (tt === "IVA") {
      if (ctx.type.exempt) throw new EngineError("TAX_NOT_ALLOWED", `${tp}: IVA is not allowed on ${ctx.type.name}`, { field: `${tp}.type` });
      sameRate(t.rate, String(IVA_RATE), `${tp}.rate`);
      sawIva = true;
      return;
    }
    checkAdditionalTax(t, tt, tp, ctx);
    if (additional.includes(tt)) throw new EngineError("TAX_NOT_ALLOWED", `${tp}: tax ${tt} listed twice`, { field: `${tp}.type` });
    additional.push(tt);
  });
  if (!taxable && (sawIva || additional.length > 0)) {
    throw new EngineError("TAX_NOT_ALLOWED", `${p}: an exempt or not billable line cannot carry IVA or additional taxes`, { field: `${p}.taxes` });
  }
  if (additional.length > 2) throw new EngineError("TAX_NOT_ALLOWED", `${p}: at most 2 additional taxes per line (CodImpAdic)`, { field: `${p}.taxes` });
  return additional;
}

/** An additional tax, withholding or specific tax code: known, allowed on the type, with net prices, at its rate. */
function checkAdditionalTax(t: ItemTax, tt: string, tp: string, ctx: LineContext): void {
  const specific = SPECIFIC_TAXES[tt];
  const info = ADDITIONAL_TAXES[tt];
  if (!specific && (t.cubic_metres !== undefined || t.per_cubic_metre !== undefined)) {
    notAllowed(`${tp}.${t.cubic_metres !== undefined ? "cubic_metres" : "per_cubic_metre"}`, "volumes and sums per m³ belong to the specific fuel taxes 28 and 35");
  }
  if (!specific && !info) {
    throw new EngineError("TAX_NOT_ALLOWED", `${tp}: tax type "${t.type}" is not issued by this service; use IVA, EXE or one of ${[...Object.keys(ADDITIONAL_TAXES), ...Object.keys(SPECIFIC_TAXES)].join(", ")} (GET /api/catalogs/CL/tax-types, attribute supported)`, { field: `${tp}.type` });
  }
  const allowed = tt === "15" ? TOTAL_RETENTION_TYPES : ADDITIONAL_TAX_TYPES;
  if (!allowed.includes(ctx.type.code)) {
    const what = specific ? "specific tax" : info!.kind === "R" ? "withholding" : "additional tax";
    throw new EngineError("TAX_NOT_ALLOWED", `${tp}: ${what} ${tt} (${(specific ?? info)!.name}) is not allowed on ${ctx.type.name}; it is used on ${allowed.join(", ")}`, { field: `${tp}.type` });
  }
  if (ctx.grossPrices) throw new EngineError("TAX_NOT_ALLOWED", `${tp}: additional taxes and withholdings need net prices; gross_prices cannot be used with them`, { field: `${tp}.type` });
  if (info) sameRate(t.rate, info.rate, `${tp}.rate`);
}

function optionalAmount(v: unknown, scale: number, field: string): bigint | undefined {
  return v === undefined ? undefined : parseScaled(v, scale, field);
}

function buildLine(it: Item, i: number, ctx: LineContext): ComputedLine {
  const { type, scale } = ctx;
  const p = `items[${i}]`;
  const qty = parseScaled(it.quantity, QTY_SCALE, `${p}.quantity`);
  if (qty === 0n) throw new EngineError("INVALID_NUMBER", `${p}.quantity must be greater than 0`, { field: `${p}.quantity` });
  const price = parseScaled(it.unit_price, QTY_SCALE, `${p}.unit_price`);
  const gross = divRound(qty * price * pow10(scale), pow10(2 * QTY_SCALE));
  const disc = adjustment(gross, it, p, "discount", ctx);
  const surch = adjustment(gross, it, p, "surcharge", ctx);
  if (disc.amount > gross + surch.amount) {
    const max = formatScaled(gross + surch.amount, scale);
    throw new EngineError("AMOUNT_OUT_OF_RANGE", `${p}: the discount ${formatScaled(disc.amount, scale)} exceeds the line amount ${max}`, { field: `${p}.discount_amount`, expected: `≤ ${max}` });
  }
  if (type.code === 43 && (disc.amount > 0n || surch.amount > 0n)) notAllowed(`${p}.discount_amount`, "a liquidación-factura line carries no discounts or surcharges");
  const amount = gross - disc.amount + surch.amount;
  if (amount > MAX_AMOUNT) throw new EngineError("AMOUNT_OUT_OF_RANGE", `${p} amount exceeds 18 digits`, { field: p });
  const indicator = indicatorOf(it, p, type);
  const exempt = indicator === 1 || (indicator === undefined && type.exempt);
  const taxable = !exempt && indicator === undefined;
  const line: ComputedLine = {
    lineNo: i + 1,
    name: it.description,
    codes: (it.item_codes ?? []).map((c) => ({ type: c.type, value: c.value })),
    discount: disc.amount,
    surcharge: surch.amount,
    gross,
    exempt,
    additionalTaxCodes: lineTaxes(it, p, ctx, taxable),
    amount,
  };
  if (indicator !== undefined) line.indicator = indicator;
  if (disc.pct) line.discountPct = disc.pct;
  if (surch.pct) line.surchargePct = surch.pct;
  if (disc.parts) line.discountParts = disc.parts;
  if (surch.parts) line.surchargeParts = surch.parts;
  if (it.long_description) line.longDescription = it.long_description;
  line.qty = formatScaled(qty, QTY_SCALE);
  if (price !== 0n) line.price = formatScaled(price, QTY_SCALE);
  if (it.code_unit_of_measure) line.unit = it.code_unit_of_measure;
  if (it.reference_quantity !== undefined) line.refQty = formatScaled(parseScaled(it.reference_quantity, QTY_SCALE, `${p}.reference_quantity`), QTY_SCALE);
  if (it.reference_unit) line.refUnit = it.reference_unit;
  if (it.reference_price !== undefined) line.refPrice = formatScaled(parseScaled(it.reference_price, QTY_SCALE, `${p}.reference_price`), QTY_SCALE);
  if (it.retainer) line.retainer = retainer(it.retainer, p, ctx);
  const specific = specificTaxes(it, p, line.additionalTaxCodes);
  if (specific.length > 0) line.specificTaxes = specific;
  addLineExtras(line, it, p, type, qty);
  if (type.code === 43) {
    if (!it.settled_type) throw new EngineError("INVALID_INPUT", `${p}.settled_type (TpoDocLiq) is required on a liquidación-factura`, { field: `${p}.settled_type` });
    line.settledType = it.settled_type;
  } else if (it.settled_type !== undefined) notAllowed(`${p}.settled_type`, `settled_type is for liquidaciones-factura (43) only`);
  return line;
}

function retainer(r: NonNullable<Item["retainer"]>, p: string, ctx: LineContext): NonNullable<ComputedLine["retainer"]> {
  if (ctx.type.boleta || ctx.type.export) notAllowed(`${p}.retainer`, `the retention-agent mark is not used on ${ctx.type.name}`);
  const out: NonNullable<ComputedLine["retainer"]> = {};
  const base = optionalAmount(r.base_amount, ctx.scale, `${p}.retainer.base_amount`);
  const margin = optionalAmount(r.margin_amount, ctx.scale, `${p}.retainer.margin_amount`);
  const finalPrice = optionalAmount(r.final_price, ctx.scale, `${p}.retainer.final_price`);
  if (base !== undefined) out.baseAmount = base;
  if (margin !== undefined) out.margin = margin;
  if (finalPrice !== undefined) out.finalPrice = finalPrice;
  return out;
}

/** The amounts of the specific fuel taxes (28, 35) on a line: sent, or cubic_metres × per_cubic_metre. */
function specificTaxes(it: Item, p: string, codes: string[]): { code: string; amount: bigint }[] {
  return (it.taxes ?? []).flatMap((t, j) => {
    const tt = t.type.trim().toUpperCase();
    if (!SPECIFIC_TAXES[tt] || !codes.includes(tt)) return [];
    const tp = `${p}.taxes[${j}]`;
    if (t.rate !== undefined) notAllowed(`${tp}.rate`, `the specific tax ${tt} has no percentage rate; send amount, or cubic_metres and per_cubic_metre`);
    let computed: bigint | undefined;
    if (t.cubic_metres !== undefined || t.per_cubic_metre !== undefined) {
      if (t.cubic_metres === undefined || t.per_cubic_metre === undefined) {
        const missing = t.cubic_metres === undefined ? "cubic_metres" : "per_cubic_metre";
        throw new EngineError("INVALID_INPUT", `${tp}.${missing} is required with ${missing === "cubic_metres" ? "per_cubic_metre" : "cubic_metres"}`, { field: `${tp}.${missing}` });
      }
      const m3 = parseScaled(t.cubic_metres, QTY_SCALE, `${tp}.cubic_metres`);
      const per = parseScaled(t.per_cubic_metre, QTY_SCALE, `${tp}.per_cubic_metre`);
      computed = divRound(m3 * per, pow10(2 * QTY_SCALE));
      sameAmount(t.amount, computed, 0, `${tp}.amount`);
    }
    if (computed === undefined && t.amount === undefined) {
      throw new EngineError("INVALID_INPUT", `${tp}.amount is required for the specific tax ${tt} (or cubic_metres and per_cubic_metre)`, { field: `${tp}.amount` });
    }
    const amount = computed ?? parseScaled(t.amount, 0, `${tp}.amount`);
    if (amount === 0n) throw new EngineError("INVALID_NUMBER", `${tp}.amount must be greater than 0`, { field: `${tp}.amount` });
    return [{ code: tt, amount }];
  });
}
