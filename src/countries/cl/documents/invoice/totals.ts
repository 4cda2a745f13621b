/**
 * Totales: the amount rules of Formato DTE v2.2, one computation for every type. Amounts are in
 * currency units (pesos; cents on exports); "round" is half away from zero.
 *
 * | amount | rule |
 * |---|---|
 * | line gross | round(QtyItem × PrcItem) |
 * | DescuentoMonto / RecargoMonto | the amount sent, or round(line gross × Pct / 100); whole units of the currency, exports too (MntImpType) |
 * | MontoItem | line gross − DescuentoMonto + RecargoMonto |
 * | taxed / exempt / not billable base | Σ MontoItem of lines without IndExe / IndExe 1 (every line of 34, 41, 110–112) / IndExe 2 minus IndExe 6 |
 * | global adjustment | the amount sent, or round(base × ValorDR / 100) of the base it names (IndExeDR) before any adjustment |
 * | MntNeto (net prices) | taxed base ± its global adjustments |
 * | MntNeto (gross prices: boletas, MntBruto 1) | round(taxed × 100 / 119); IVA = taxed − MntNeto |
 * | IVA | round(MntNeto × 19 / 100) |
 * | MntExe | exempt base ± its global adjustments |
 * | ImptoReten (per code) | round(base × TasaImp / 100), base = Σ MontoItem of the lines carrying the code (MntBaseFaena for 17 and 18 when sent), moved by the taxed percentage adjustments |
 * | ImptoReten 28, 35 (specific fuel taxes) | the amounts sent per line (or round(m³ × sum per m³)), added up; no TasaImp; outside the IVA base; not moved by global adjustments |
 * | IVATerc | IVA of the lines marked third_party: round(their MontoItem, moved by the taxed percentage adjustments, × 19 / 100) (gross prices: amount − round(amount × 100 / 119)) |
 * | IVAProp | IVA − IVATerc (written only with IVATerc) |
 * | CredEC (33, 56, 61) | round(IVA × 65 / 100), or a smaller amount sent (the cap per dwelling) |
 * | IVANoRet | IVA − Σ withholdings, when withholdings take only part of the IVA |
 * | GrntDep | Σ MontoItem IndExe 3 (deposits charged) and IndExe 5 (deposits returned, on the credit note that returns them; on a guía IndExe 5 is an item taken back, outside the totals) |
 * | Comisiones (43; 46 and its notes) | Σ ValComNeto, ValComExe, ValComIVA = round(ValComNeto × 19 / 100) |
 * | MntTotal | MntNeto + MntExe + IVA + additional taxes (28 and 35 included) − withholdings + GrntDep − commissions − CredEC |
 * | MontoNF | not-billable base ± its global adjustments (outside MntTotal) |
 */
import { EngineError } from "../../errors";
import { divRound, parseScaled, pow10 } from "../decimal";
import type { DocumentTypeInfo } from "../document-types";
import { MAX_AMOUNT, notAllowed, sameAmount, sameRate } from "./checks";
import { type Bases, scaleTaxBase } from "./discounts";
import type { ComputedAdjustment, ComputedCommission, ComputedLine, ComputedTax, ComputedTotals } from "./model";
import type { InvoiceInput } from "./schema";
import { ADDITIONAL_TAXES, IVA_RATE, RATE_SCALE, SLAUGHTER_BASE_TAXES, SPECIFIC_TAXES } from "./tax-codes";

const sum = (xs: bigint[]) => xs.reduce((s, x) => s + x, 0n);

/** A line goes to the taxed base when it carries no IndExe and its type is not exempt. */
export function isTaxed(l: ComputedLine): boolean {
  return !l.exempt && l.indicator === undefined;
}

/** The three bases of the lines, before global adjustments. */
export function lineBases(lines: ComputedLine[]): Bases {
  return {
    taxed: sum(lines.filter(isTaxed).map((l) => l.amount)),
    exempt: sum(lines.filter((l) => l.exempt).map((l) => l.amount)),
    nonBillable: sum(lines.map((l) => (l.indicator === 2 ? l.amount : l.indicator === 6 ? -l.amount : 0n))),
  };
}

/** Net and IVA of a taxed base, with line prices net or gross (IVA included). */
export function netAndIva(taxed: bigint, gross: boolean): { net: bigint; iva: bigint } {
  if (gross) {
    const net = divRound(taxed * 100n, 100n + IVA_RATE);
    return { net, iva: taxed - net };
  }
  return { net: taxed, iva: divRound(taxed * IVA_RATE, 100n) };
}

function additionalTaxes(lines: ComputedLine[], adjustments: ComputedAdjustment[]): ComputedTax[] {
  const codes = [...new Set(lines.flatMap((l) => l.additionalTaxCodes))].sort((a, b) => Number(a) - Number(b));
  return codes.map((c) => {
    const carrying = lines.filter((l) => l.additionalTaxCodes.includes(c));
    if (SPECIFIC_TAXES[c]) {
      const amount = sum(carrying.map((l) => l.specificTaxes!.find((x) => x.code === c)!.amount));
      return { type: c, kind: "A" as const, base: sum(carrying.map((l) => l.amount)), amount };
    }
    const info = ADDITIONAL_TAXES[c]!;
    const lineBase = sum(carrying.map((l) => (SLAUGHTER_BASE_TAXES.includes(c) && l.retainer?.baseAmount !== undefined ? l.retainer.baseAmount : l.amount)));
    const base = scaleTaxBase(lineBase, adjustments, "global_adjustments");
    const amount = divRound(base * parseScaled(info.rate, RATE_SCALE, "rate"), 100n * pow10(RATE_SCALE));
    return { type: c, kind: info.kind, rate: info.rate, base, amount };
  });
}

export interface TotalsInput {
  lines: ComputedLine[];
  adjustments: ComputedAdjustment[];
  /** The bases after global adjustments. */
  bases: Bases;
  commissions: ComputedCommission[];
  /** Line prices include IVA (boletas unless IndMntNeto 2; MntBruto 1). */
  grossPrices: boolean;
  /** construction_credit of the body (CredEC). */
  constructionCredit?: InvoiceInput["construction_credit"];
}

/** Types that may carry CredEC: facturas, guías and the notes that modify them (Formato DTE v2.2, CredEC). */
export const CONSTRUCTION_CREDIT_TYPES: readonly number[] = [33, 52, 56, 61];
/** DL 910 art. 21: 65 % of the IVA. */
const CONSTRUCTION_CREDIT_PCT = 65n;

/** CredEC: 65 % of the IVA, rounded, or a smaller amount the client sends (a cap). */
function constructionCredit(c: TotalsInput["constructionCredit"], type: DocumentTypeInfo, iva: bigint | undefined): bigint | undefined {
  if (c === undefined) return undefined;
  if (!CONSTRUCTION_CREDIT_TYPES.includes(type.code)) notAllowed("construction_credit", `CredEC is carried by ${CONSTRUCTION_CREDIT_TYPES.join(", ")}, not by ${type.name}`);
  if (!iva) notAllowed("construction_credit", "CredEC is a part of the IVA, and this document has none");
  const max = divRound(iva * CONSTRUCTION_CREDIT_PCT, 100n);
  if (c.amount === undefined) return max;
  const amount = parseScaled(c.amount, 0, "construction_credit.amount");
  if (amount === 0n || amount > max) throw new EngineError("AMOUNT_OUT_OF_RANGE", `construction_credit.amount must be greater than 0 and at most 65 % of the IVA (${max})`, { field: "construction_credit.amount", expected: `1–${max}` });
  return amount;
}

/** IVATerc (the IVA of the third-party lines, after the taxed global adjustments) and IVAProp (the rest). */
function thirdPartyIva(t: TotalsInput, iva: bigint | undefined): { own: bigint; third: bigint } | undefined {
  const lines = t.lines.filter((l) => l.thirdParty);
  if (lines.length === 0 || iva === undefined) return undefined;
  const base = scaleTaxBase(sum(lines.map((l) => l.amount)), t.adjustments, "global_adjustments");
  const third = netAndIva(base, t.grossPrices).iva;
  return { own: iva - third, third };
}

/**
 * MntBase and MntMargenCom: the sums of the lines' slaughter bases (MntBaseFaena) and marketing
 * margins (MntMargComer) of a retention agent (our reading of DTE_v10: "Monto Base Faenamiento
 * Carne", "Monto Base de Márgenes de Comercialización"). Informative: they do not change the total.
 */
function retainerBases(lines: ComputedLine[], totals: ComputedTotals): void {
  const bases = lines.flatMap((l) => (l.retainer?.baseAmount !== undefined ? [l.retainer.baseAmount] : []));
  const margins = lines.flatMap((l) => (l.retainer?.margin !== undefined ? [l.retainer.margin] : []));
  if (bases.length > 0) totals.meatBase = sum(bases);
  if (margins.length > 0) totals.marginBase = sum(margins);
}

export function buildTotals(t: TotalsInput, type: DocumentTypeInfo): ComputedTotals {
  const { lines, bases } = t;
  const totals: ComputedTotals = {
    subTotal: sum(lines.map((l) => l.gross)),
    discount: sum(lines.map((l) => l.discount)),
    surcharge: sum(lines.map((l) => l.surcharge)),
    additional: [],
    total: 0n,
  };
  const hasTaxed = !type.exempt && (lines.some(isTaxed) || t.adjustments.some((a) => a.base === undefined));
  if (hasTaxed) {
    const { net, iva } = netAndIva(bases.taxed, t.grossPrices);
    totals.net = net;
    totals.iva = iva;
    totals.ivaRate = String(IVA_RATE);
  }
  if (type.exempt || lines.some((l) => l.exempt) || t.adjustments.some((a) => a.base === 1)) totals.exempt = bases.exempt;
  if (lines.some((l) => l.indicator === 2 || l.indicator === 6)) totals.nonBillable = bases.nonBillable;
  // IndExe 5 is a deposit returned on a credit note; on a guía it is an item taken back, outside the totals.
  const isDeposit = (l: ComputedLine) => l.indicator === 3 || (l.indicator === 5 && type.code !== 52);
  if (lines.some(isDeposit)) totals.deposit = sum(lines.filter(isDeposit).map((l) => l.amount));
  totals.additional = additionalTaxes(lines, t.adjustments);
  const add = sum(totals.additional.filter((x) => x.kind === "A").map((x) => x.amount));
  const withheld = sum(totals.additional.filter((x) => x.kind === "R").map((x) => x.amount));
  if (withheld > 0n && totals.iva !== undefined && totals.iva > withheld) totals.ivaNotRetained = totals.iva - withheld;
  let commissions = 0n;
  if (t.commissions.length > 0) {
    totals.commissions = {
      net: sum(t.commissions.map((c) => c.net)),
      exempt: sum(t.commissions.map((c) => c.exempt)),
      iva: sum(t.commissions.map((c) => c.iva)),
    };
    commissions = totals.commissions.net + totals.commissions.exempt + totals.commissions.iva;
  }
  const split = thirdPartyIva(t, totals.iva);
  if (split) {
    totals.ivaOwn = split.own;
    totals.ivaThirdParty = split.third;
  }
  retainerBases(lines, totals);
  const credit = constructionCredit(t.constructionCredit, type, totals.iva);
  if (credit !== undefined) totals.constructionCredit = credit;
  totals.total = (totals.net ?? 0n) + (totals.exempt ?? 0n) + (totals.iva ?? 0n) + add - withheld + (totals.deposit ?? 0n) - commissions - (credit ?? 0n);
  if (totals.total > MAX_AMOUNT) throw new EngineError("AMOUNT_OUT_OF_RANGE", `The total exceeds 18 digits`, { field: "totals.total" });
  if (totals.total < 0n && type.code !== 43) throw new EngineError("AMOUNT_OUT_OF_RANGE", `The total is negative`, { field: "totals.total" });
  if (withheld > (totals.iva ?? 0n)) throw new EngineError("TAX_NOT_ALLOWED", `The withholdings (${withheld}) exceed the IVA of the document (${totals.iva ?? 0n})`, { field: "items" });
  return totals;
}

/** The IVA of one line, as the client may send it in items[].taxes[].amount. */
function lineIva(amount: bigint, gross: boolean): bigint {
  return netAndIva(amount, gross).iva;
}

/** Every amount the client sent (line taxes, totals) must equal the engine's. */
export function checkClientAmounts(input: InvoiceInput, lines: ComputedLine[], totals: ComputedTotals, grossPrices: boolean, scale: number): void {
  input.items.forEach((it, i) => {
    const line = lines[i]!;
    (it.taxes ?? []).forEach((t, j) => {
      if (t.amount === undefined) return;
      const tt = t.type.trim().toUpperCase();
      const f = `items[${i}].taxes[${j}].amount`;
      if (tt === "EXE") sameAmount(t.amount, 0n, scale, f);
      else if (tt === "IVA") sameAmount(t.amount, lineIva(line.amount, grossPrices), scale, f);
      else if (SPECIFIC_TAXES[tt]) sameAmount(t.amount, line.specificTaxes?.find((x) => x.code === tt)?.amount ?? 0n, scale, f);
      else sameAmount(t.amount, divRound(line.amount * parseScaled(ADDITIONAL_TAXES[tt]!.rate, RATE_SCALE, f), 100n * pow10(RATE_SCALE)), scale, f);
    });
  });
  const t = input.totals;
  if (!t) return;
  sameAmount(t.sub_total, totals.subTotal, scale, "totals.sub_total");
  sameAmount(t.discount, totals.discount, scale, "totals.discount");
  sameAmount(t.surcharge, totals.surcharge, scale, "totals.surcharge");
  sameAmount(t.non_billable, totals.nonBillable ?? 0n, scale, "totals.non_billable");
  (t.taxes ?? []).forEach((tx, j) => checkClientTax(tx, `totals.taxes[${j}]`, totals, scale));
  sameAmount(t.total, totals.total, scale, "totals.total");
}

function checkClientTax(tx: NonNullable<NonNullable<InvoiceInput["totals"]>["taxes"]>[number], f: string, totals: ComputedTotals, scale: number): void {
  const tt = tx.type.trim().toUpperCase();
  if (tt === "IVA") {
    if (totals.iva === undefined) throw new EngineError("TOTALS_MISMATCH", `${f}: the document has no IVA`, { field: `${f}.type`, expected: "no IVA entry" });
    sameAmount(tx.amount, totals.iva, scale, `${f}.amount`);
    sameAmount(tx.base_amount, totals.net ?? 0n, scale, `${f}.base_amount`);
    sameRate(tx.rate, String(IVA_RATE), `${f}.rate`);
  } else if (tt === "EXE") {
    sameAmount(tx.amount, 0n, scale, `${f}.amount`);
    sameAmount(tx.base_amount, totals.exempt ?? 0n, scale, `${f}.base_amount`);
  } else {
    const c = totals.additional.find((a) => a.type === tt);
    if (!c) throw new EngineError("TOTALS_MISMATCH", `${f}: no line carries tax ${tx.type}`, { field: `${f}.type`, expected: "absent" });
    sameAmount(tx.amount, c.amount, scale, `${f}.amount`);
    sameAmount(tx.base_amount, c.base, scale, `${f}.base_amount`);
    if (c.rate === undefined && tx.rate !== undefined) throw new EngineError("TAX_RATE_MISMATCH", `${f}.rate: the specific tax ${tt} has no percentage rate`, { field: `${f}.rate`, expected: "absent" });
    if (c.rate !== undefined) sameRate(tx.rate, c.rate, `${f}.rate`);
  }
}
