/**
 * Whether a received DTE's amounts agree with each other: the edits its stamp (TED) does not
 * cover. The stamp binds MntTotal and the first line's name, so a document re-signed after its
 * net, IVA or lines were changed, the total kept, still carries a valid stamp; this check catches
 * it. The rules are Formato DTE v2.2's, as the engine's own issuance applies them
 * (invoice/totals.ts):
 *
 * - each line: MontoItem = round(QtyItem × PrcItem) − DescuentoMonto + RecargoMonto, when QtyItem
 *   and PrcItem are given (DescuentoPct / RecargoPct without an amount: round(gross × Pct / 100));
 * - the lines' bases: taxed (no IndExe, on a type that is not exempt), exempt (IndExe 1, or every
 *   line of an exempt type), not billable (IndExe 2, minus IndExe 6), each moved by its DscRcgGlobal
 *   (an amount, or round(base × ValorDR / 100) of the base before any adjustment): MntNeto, MntExe
 *   and MontoNF (with MntBruto 1, line prices include IVA: MntNeto = round(taxed × 100 / (100 + TasaIVA)));
 * - IVA = round(MntNeto × TasaIVA / 100);
 * - MntTotal = MntNeto + MntExe + IVA + additional taxes − IVA withheld (ImptoReten, by code) +
 *   GrntDep − Comisiones (ValComNeto + ValComExe + ValComIVA) − CredEC, exactly (a sum of written
 *   amounts, nothing rounded).
 *
 * Rounding tolerated: one unit of the document's currency (a peso) for each rounded amount (the
 * engine rounds half away from zero; other issuers round half even or truncate), none for the
 * total's sum. Boletas (39, 41) are not checked (gross prices, no acknowledgment); exports are
 * checked in their currency. Pure: reads the DTE element, never throws for bad input.
 */
import { childElements, childText, firstChild, type XElement } from "../xml/xml";
import { ADDITIONAL_TAXES, SPECIFIC_TAXES } from "./invoice/tax-codes";
import { BRANCH_NAMES } from "./document-types";

export interface TotalsCheck {
  result: "PASSED" | "FAILED" | "NOT_APPLICABLE";
  message: string | null;
}

/** Amounts are read as integers scaled by 10^6 (exports carry decimals; QtyItem and PrcItem up to 6). */
const SCALE = 1_000_000n;
const UNIT = SCALE;
const EXEMPT_TYPES = [34, 110, 111, 112];
const BOLETAS = [39, 41];
const DECIMAL = /^(-?)(\d{1,18})(?:\.(\d{1,6}))?$/;

function dec(text: string | undefined): bigint | null {
  const m = text === undefined ? null : DECIMAL.exec(text);
  if (!m) return null;
  const v = BigInt(m[2]!) * SCALE + BigInt((m[3] ?? "").padEnd(6, "0"));
  return m[1] === "-" ? -v : v;
}

/** n / d rounded half away from zero to whole units (the result still scaled). */
function roundUnits(n: bigint, d: bigint): bigint {
  const neg = n < 0n;
  const a = neg ? -n : n;
  const q = a / d;
  const r = (a % d) * 2n >= d ? q + 1n : q;
  return (neg ? -r : r) * UNIT;
}

const abs = (v: bigint) => (v < 0n ? -v : v);
/** Scaled amount as written ("12.5", "100"). */
function show(v: bigint): string {
  const neg = v < 0n;
  const a = neg ? -v : v;
  const frac = (a % SCALE).toString().padStart(6, "0").replace(/0+$/, "");
  return `${neg ? "-" : ""}${a / SCALE}${frac ? `.${frac}` : ""}`;
}
const near = (a: bigint, b: bigint, units: number) => abs(a - b) <= BigInt(units) * UNIT;

interface Line {
  n: string;
  amount: bigint;
  indExe: number | null;
}

/** The lines' amounts, and where a line's MontoItem disagrees with its quantity, price, discount and surcharge. */
function readLines(branch: XElement, textCorrection: boolean, problems: string[]): Line[] {
  return childElements(branch, "Detalle").map((d, i) => {
    const n = childText(d, "NroLinDet") ?? String(i + 1);
    const amount = dec(childText(d, "MontoItem")) ?? 0n;
    const indExe = childText(d, "IndExe") === undefined ? null : Number(childText(d, "IndExe"));
    const qty = dec(childText(d, "QtyItem"));
    const price = dec(childText(d, "PrcItem"));
    if (qty !== null && price !== null && !(amount === 0n && (textCorrection || indExe === 4 || indExe === 5))) {
      const gross = roundUnits(qty * price, SCALE * UNIT);
      let rounded = 1;
      const part = (amountName: string, pctName: string): bigint => {
        const written = dec(childText(d, amountName));
        if (written !== null) return written;
        const pct = dec(childText(d, pctName));
        if (pct === null) return 0n;
        rounded++;
        return roundUnits(gross * pct, 100n * SCALE * UNIT);
      };
      const expected = gross - part("DescuentoMonto", "DescuentoPct") + part("RecargoMonto", "RecargoPct");
      if (!near(amount, expected, rounded)) problems.push(`line ${n}: MontoItem ${show(amount)} is not QtyItem ${show(qty)} × PrcItem ${show(price)} less its discount plus its surcharge (${show(expected)})`);
    }
    return { n, amount, indExe };
  });
}

type Base = "taxed" | "exempt" | "nonBillable";

/** The bases after the global discounts and surcharges, and how many rounded amounts each carries. */
function bases(branch: XElement, lines: Line[], exemptType: boolean): Record<Base, { value: bigint; rounded: number }> {
  const sum = (f: (l: Line) => bigint) => lines.reduce((s, l) => s + f(l), 0n);
  const before: Record<Base, bigint> = {
    taxed: exemptType ? 0n : sum((l) => (l.indExe === null ? l.amount : 0n)),
    exempt: sum((l) => (l.indExe === 1 || (exemptType && l.indExe === null) ? l.amount : 0n)),
    nonBillable: sum((l) => (l.indExe === 2 ? l.amount : l.indExe === 6 ? -l.amount : 0n)),
  };
  const out: Record<Base, { value: bigint; rounded: number }> = { taxed: { value: before.taxed, rounded: 0 }, exempt: { value: before.exempt, rounded: 0 }, nonBillable: { value: before.nonBillable, rounded: 0 } };
  for (const g of childElements(branch, "DscRcgGlobal")) {
    const ind = childText(g, "IndExeDR");
    const base: Base = ind === "1" ? "exempt" : ind === "2" ? "nonBillable" : before.taxed === 0n && before.exempt !== 0n ? "exempt" : "taxed";
    const v = dec(childText(g, "ValorDR")) ?? 0n;
    const pct = childText(g, "TpoValor") === "%";
    const amount = pct ? roundUnits(before[base] * v, 100n * SCALE * UNIT) : v;
    if (pct) out[base].rounded++;
    out[base].value += childText(g, "TpoMov") === "R" ? amount : -amount;
  }
  return out;
}

interface Taxes {
  /** Additional taxes (kind A, specific 28 and 35) less IVA withheld (kind R), by the codes' table. */
  known: bigint;
  /** Amounts of codes the table does not hold: added or withheld, either is accepted. */
  unknown: bigint[];
}

function taxes(totales: XElement): Taxes {
  const t: Taxes = { known: 0n, unknown: [] };
  for (const x of childElements(totales, "ImptoReten")) {
    const code = childText(x, "TipoImp") ?? "";
    const amount = dec(childText(x, "MontoImp")) ?? 0n;
    const kind = SPECIFIC_TAXES[code] ? "A" : ADDITIONAL_TAXES[code]?.kind;
    if (kind === "A") t.known += amount;
    else if (kind === "R") t.known -= amount;
    else t.unknown.push(amount);
  }
  return t;
}

/** Whether `rest` is some signed sum of the unknown codes' amounts (at most 8 of them tried). */
function signedSum(rest: bigint, unknown: bigint[]): boolean {
  if (unknown.length > 8) return true;
  const go = (i: number, acc: bigint): boolean => (i === unknown.length ? acc === rest : go(i + 1, acc + unknown[i]!) || go(i + 1, acc - unknown[i]!));
  return go(0, 0n);
}

/** Where Totales disagree with themselves: the IVA with the net, and MntTotal with its parts. */
function totalsProblems(totales: XElement, problems: string[]): void {
  const v = (n: string) => dec(childText(totales, n)) ?? 0n;
  const net = v("MntNeto");
  const iva = v("IVA");
  const rate = dec(childText(totales, "TasaIVA"));
  if (childText(totales, "IVA") !== undefined && rate !== null) {
    const expected = roundUnits(net * rate, 100n * SCALE * UNIT);
    if (!near(iva, expected, 1)) problems.push(`IVA ${show(iva)} is not ${show(rate)} % of MntNeto ${show(net)} (${show(expected)})`);
  }
  const com = firstChild(totales, "Comisiones");
  const commissions = com ? (dec(childText(com, "ValComNeto")) ?? 0n) + (dec(childText(com, "ValComExe")) ?? 0n) + (dec(childText(com, "ValComIVA")) ?? 0n) : 0n;
  const t = taxes(totales);
  const parts = net + v("MntExe") + iva + t.known + v("GrntDep") - commissions - v("CredEC");
  const total = v("MntTotal");
  if (!signedSum(total - parts, t.unknown)) {
    problems.push(`MntNeto ${show(net)} + MntExe ${show(v("MntExe"))} + IVA ${show(iva)} + other taxes less IVA withheld ${show(t.known)}${commissions ? ` − commissions ${show(commissions)}` : ""} come to ${show(parts)}, not MntTotal ${show(total)}`);
  }
}

/** The totals check of one <DTE> element. */
export function checkTotals(dte: XElement): TotalsCheck {
  const branch = childElements(dte).find((c) => BRANCH_NAMES.includes(c.localName ?? ""));
  const enc = branch && firstChild(branch, "Encabezado");
  const idDoc = enc && firstChild(enc, "IdDoc");
  const totales = enc && firstChild(enc, "Totales");
  if (!branch || !idDoc || !totales) return { result: "FAILED", message: "The document has no Encabezado with IdDoc and Totales to check." };
  const type = Number(childText(idDoc, "TipoDTE"));
  if (BOLETAS.includes(type)) return { result: "NOT_APPLICABLE", message: "A boleta states its line prices with IVA included and is not acknowledged; its totals are not checked." };
  const textCorrection = childElements(branch, "Referencia").some((r) => childText(r, "CodRef") === "2");
  const problems: string[] = [];
  const lines = readLines(branch, textCorrection, problems);
  const b = bases(branch, lines, EXEMPT_TYPES.includes(type));
  const v = (n: string) => dec(childText(totales, n)) ?? 0n;
  const rate = dec(childText(totales, "TasaIVA")) ?? 19n * SCALE;
  const grossPrices = childText(idDoc, "MntBruto") === "1";
  const net = grossPrices ? roundUnits(b.taxed.value * 100n * SCALE, (100n * SCALE + rate) * UNIT) : b.taxed.value;
  const netTolerance = b.taxed.rounded + (grossPrices ? 1 : 0);
  if (!near(v("MntNeto"), net, netTolerance)) problems.push(`the taxed lines come to ${show(net)} after global discounts and surcharges, not MntNeto ${show(v("MntNeto"))}`);
  if (!near(v("MntExe"), b.exempt.value, b.exempt.rounded)) problems.push(`the exempt lines come to ${show(b.exempt.value)} after global discounts and surcharges, not MntExe ${show(v("MntExe"))}`);
  if (childText(totales, "MontoNF") !== undefined && !near(v("MontoNF"), b.nonBillable.value, b.nonBillable.rounded)) problems.push(`the lines not billed come to ${show(b.nonBillable.value)}, not MontoNF ${show(v("MontoNF"))}`);
  totalsProblems(totales, problems);
  if (problems.length === 0) return { result: "PASSED", message: null };
  const shown = problems.slice(0, 6).join("; ") + (problems.length > 6 ? `; and ${problems.length - 6} more` : "");
  return { result: "FAILED", message: `The amounts do not add up: ${shown}. The stamp does not cover these amounts: the document may have been altered after it was issued.` };
}
