/** The document's data validated and formatted once, shared by every layout. */
import { formatRutWithDots, parseRut } from "../../../documents/rut";
import { dateYear, formatAmount, formatDate, formatQuantity, formatRate, labelsFor, PdfInputError, resolveSettings, toDecimal, type Labels } from "../format";
import { DTE_TYPE_CODES, documentName, isCedible, issuerSiiOffice, referenceTypeName, REFERENCE_REASON_NAMES, TRANSFER_TYPE_NAMES, type Amount, type PrintableBlock, type PrintableDocument, type PrintableSettings } from "../model";
import { latin1Bytes, Pdf417Error } from "../pdf417";

// ---------------------------------------------------------------------------------------------------
// Prepared data (validated and formatted once, shared by every layout)

export interface Row {
  code: string;
  description: string;
  detail: string;
  quantity: string;
  unit: string;
  unitPrice: string;
  discount: string;
  amount: string;
  exempt: boolean;
}

export interface Prepared {
  doc: PrintableDocument;
  s: PrintableSettings;
  L: Labels;
  name: string;
  issuerRut: string;
  recipientRut: string;
  office: string | undefined;
  issueDate: string;
  dueDate: string | undefined;
  rows: Row[];
  refs: { type: string; folio: string; date: string; reason: string }[];
  /** Transport and customs blocks, as given. */
  blocks: { title: string; fields: [string, string][] }[];
  totals: [string, string][];
  total: [string, string];
  /** Lines under the total, outside it: not billable amount, the second currency (value with its own unit). */
  after: [string, string][];
  /** Under the total (and `after`): the period's amount and the previous balance, then the amount to pay, boxed (when present). */
  period: [string, string][];
  toPay: [string, string] | undefined;
  /** "$ " for CLP, "USD " etc. otherwise. */
  money: string;
  transfer: string | undefined;
  resolution: string;
  verify: string;
  ted: Uint8Array;
  cedible: boolean;
}

function printedRut(rut: string, field: string): string {
  try {
    return formatRutWithDots(parseRut(rut));
  } catch (e) {
    if (e instanceof Error) throw new PdfInputError(field, `${field}: ${e.message}`);
    throw e;
  }
}

function requireText(v: unknown, field: string): string {
  if (typeof v !== "string" || v.trim() === "") throw new PdfInputError(field, `${field} is required`);
  return v;
}

/** Blocks with their empty fields left out and their amounts printed as the totals print money. */
function prepareBlocks(blocks: PrintableBlock[], money: (v: Amount, field: string) => string): Prepared["blocks"] {
  const text = (v: PrintableBlock["fields"][number][1], f: string) =>
    typeof v === "string" ? v : v.map((part, k) => (typeof part === "string" ? part : money(part.money, `${f}[${k}]`))).join("");
  return blocks
    .map((b, i) => ({ title: b.title, fields: b.fields.map(([label, v], j): [string, string] => [label, text(v, `blocks[${i}].fields[${j}]`)]).filter(([, v]) => v !== "") }))
    .filter((b) => b.fields.length > 0);
}

/** Refuses a document without what every layout prints (type, folio, parties, lines, totals, resolution). */
function checkDocument(doc: PrintableDocument): void {
  if (!doc || typeof doc !== "object") throw new PdfInputError("document", "The document must be an object");
  if (!DTE_TYPE_CODES.includes(doc.type)) throw new PdfInputError("type", `Unsupported document type ${String(doc.type)}`);
  if (!Number.isSafeInteger(doc.folio) || doc.folio <= 0) throw new PdfInputError("folio", "folio must be a positive integer");
  if (!doc.issuer || !doc.recipient) throw new PdfInputError(doc.issuer ? "recipient" : "issuer", "issuer and recipient are required");
  requireText(doc.issuer.name, "issuer.name");
  requireText(doc.recipient.name, "recipient.name");
  if (!Array.isArray(doc.lines)) throw new PdfInputError("lines", "lines must be an array");
  if (!doc.totals) throw new PdfInputError("totals", "totals are required");
  if (doc.resolution === undefined || (doc.resolution !== null && (!Number.isInteger(doc.resolution.number) || doc.resolution.number < 0))) {
    throw new PdfInputError("resolution.number", "resolution.number must be a non-negative integer");
  }
}

/** The TED as the ISO-8859-1 bytes the stamp encodes. */
function tedBytes(ted: unknown): Uint8Array {
  try {
    return latin1Bytes(requireText(ted, "ted"));
  } catch (e) {
    if (e instanceof Pdf417Error) throw new PdfInputError("ted", `ted: ${e.message}`);
    throw e;
  }
}

/** Formats an amount of the document's currency; `field` names it in an error. */
type Money = (v: Amount, field: string) => string;

/** One detail line as printed; `markExempt` when the document mixes exempt and taxable lines. */
function prepareRow(l: PrintableDocument["lines"][number], i: number, s: Prepared["s"], amt: Money, markExempt: boolean): Row {
  const f = `lines[${i}]`;
  requireText(l?.description, `${f}.description`);
  const d = l.discount !== undefined ? toDecimal(l.discount, `${f}.discount`) : undefined;
  const hasDiscount = d !== undefined && (d.int !== "0" || d.frac !== "");
  const sc = l.surcharge !== undefined ? toDecimal(l.surcharge, `${f}.surcharge`) : undefined;
  const hasSurcharge = sc !== undefined && (sc.int !== "0" || sc.frac !== "");
  const discountText = hasDiscount
    ? "-" + (l.discountPercent ? `${formatRate(l.discountPercent, s, `${f}.discountPercent`)} ` : "") + amt(l.discount!, `${f}.discount`)
    : "";
  const surchargeText = hasSurcharge
    ? "+" + (l.surchargePercent ? `${formatRate(l.surchargePercent, s, `${f}.surchargePercent`)} ` : "") + amt(l.surcharge!, `${f}.surcharge`)
    : "";
  const discount = [discountText, surchargeText].filter(Boolean).join(" ");
  return {
    code: l.code ?? "",
    description: l.description,
    detail: l.detail ?? "",
    quantity: l.quantity !== undefined ? formatQuantity(l.quantity, s, `${f}.quantity`) : "",
    unit: l.unit ?? "",
    unitPrice: l.unitPrice !== undefined ? formatQuantity(l.unitPrice, s, `${f}.unitPrice`) : "",
    discount,
    amount: amt(l.amount, `${f}.amount`),
    exempt: markExempt && l.exempt === true,
  };
}

/** The lines above the total: global discounts and surcharges, then net, exempt, taxes and the other amounts. */
function prepareTotals(doc: PrintableDocument, s: Prepared["s"], L: Labels, amt: Money): [string, string][] {
  const t = doc.totals;
  const totals: [string, string][] = [];
  (doc.adjustments ?? []).forEach((a, i) => {
    const f = `adjustments[${i}]`;
    const base = a.base === "exempt" ? ` ${L.onExempt}` : a.base === "nonBillable" ? ` ${L.onNonBillable}` : "";
    const pct = a.percent !== undefined ? ` ${formatRate(a.percent, s, `${f}.percent`)}` : "";
    const label = `${a.description ?? (a.kind === "discount" ? L.globalDiscount : L.globalSurcharge)}${pct}${base}`;
    totals.push([label, `${a.kind === "discount" ? "-" : "+"}${amt(a.amount, `${f}.amount`)}`]);
  });
  if (t.net !== undefined) totals.push([L.net, amt(t.net, "totals.net")]);
  if (t.exempt !== undefined) totals.push([L.exempt, amt(t.exempt, "totals.exempt")]);
  if (t.iva !== undefined) {
    const rate = t.ivaRate !== undefined ? ` ${formatRate(t.ivaRate, s, "totals.ivaRate")}` : "";
    totals.push([`${L.iva}${rate}`, amt(t.iva, "totals.iva")]);
  }
  (t.otherTaxes ?? []).forEach((o, i) => {
    const rate = o.rate !== undefined ? ` ${formatRate(o.rate, s, `totals.otherTaxes[${i}].rate`)}` : "";
    totals.push([`${o.name}${rate}`, `${o.withholding ? "-" : ""}${amt(o.amount, `totals.otherTaxes[${i}].amount`)}`]);
  });
  if (t.ivaOwn !== undefined) totals.push([L.ivaOwn, amt(t.ivaOwn, "totals.ivaOwn")]);
  if (t.ivaThirdParty !== undefined) totals.push([L.ivaThirdParty, amt(t.ivaThirdParty, "totals.ivaThirdParty")]);
  if (t.ivaNotRetained !== undefined) totals.push([L.ivaNotRetained, amt(t.ivaNotRetained, "totals.ivaNotRetained")]);
  if (t.constructionCredit !== undefined) totals.push([L.constructionCredit, `-${amt(t.constructionCredit, "totals.constructionCredit")}`]);
  if (t.deposit !== undefined) totals.push([L.deposit, amt(t.deposit, "totals.deposit")]);
  if (t.commissions !== undefined) totals.push([L.commissions, `-${amt(t.commissions, "totals.commissions")}`]);
  return totals;
}

/** The lines under the total, outside it: the not billable amount and the second currency. */
function prepareAfter(t: PrintableDocument["totals"], s: Prepared["s"], L: Labels, amt: Money, money: string): [string, string][] {
  const after: [string, string][] = [];
  if (t.nonBillable !== undefined) after.push([L.nonBillable, `${money}${amt(t.nonBillable, "totals.nonBillable")}`]);
  if (t.otherCurrency) {
    const o = t.otherCurrency;
    const value = o.name === "PESO CL" ? `$ ${formatAmount(o.total, s, "totals.otherCurrency.total", "CLP")}` : formatQuantity(o.total, s, "totals.otherCurrency.total");
    after.push([L.otherCurrency(o.name, formatQuantity(o.rate, s, "totals.otherCurrency.rate")), value]);
  }
  return after;
}

export function prepare(doc: PrintableDocument): Prepared {
  checkDocument(doc);
  const s = resolveSettings(doc.settings);
  const L = labelsFor(s.language);
  const cur = doc.totals.currency;
  const ted = tedBytes(doc.ted);
  const amt: Money = (v, f) => formatAmount(v, s, f, cur);
  // Mark exempt lines only when the document mixes exempt and taxable lines.
  const markExempt = doc.lines.some((l) => l?.exempt === true) && doc.lines.some((l) => l?.exempt !== true);
  const rows: Row[] = doc.lines.map((l, i) => prepareRow(l, i, s, amt, markExempt));
  const refs = (doc.references ?? []).map((r, i) => ({
    type: referenceTypeName(r.typeCode),
    folio: String(r.folio),
    date: r.date ? formatDate(r.date, s.language, `references[${i}].date`) : "",
    reason: r.reason?.trim() || (r.reasonCode ? REFERENCE_REASON_NAMES[r.reasonCode] ?? "" : ""),
  }));
  const t = doc.totals;
  const totals = prepareTotals(doc, s, L, amt);
  const total: [string, string] = [L.total, amt(t.total, "totals.total")];
  const money = cur && cur.toUpperCase() !== "CLP" ? `${cur.toUpperCase()} ` : "$ ";
  const after = prepareAfter(t, s, L, amt, money);
  const period: [string, string][] = [];
  if (t.period) {
    if (t.period.amount !== undefined) period.push([L.periodAmount, amt(t.period.amount, "totals.period.amount")]);
    if (t.period.previousBalance !== undefined) period.push([L.previousBalance, amt(t.period.previousBalance, "totals.period.previousBalance")]);
  }
  return {
    doc,
    s,
    L,
    name: documentName(doc),
    issuerRut: printedRut(doc.issuer.rut, "issuer.rut"),
    recipientRut: printedRut(doc.recipient.rut, "recipient.rut"),
    office: issuerSiiOffice(doc.issuer),
    issueDate: formatDate(doc.issueDate, s.language, "issueDate"),
    dueDate: doc.dueDate ? formatDate(doc.dueDate, s.language, "dueDate") : undefined,
    rows,
    refs,
    totals,
    total,
    after,
    blocks: prepareBlocks(doc.blocks ?? [], (v, f) => `${money}${amt(v, f)}`),
    period,
    toPay: t.period?.amountToPay !== undefined ? [L.amountToPay, amt(t.period.amountToPay, "totals.period.amountToPay")] : undefined,
    money,
    transfer: doc.type === 52 && doc.transferType !== undefined ? TRANSFER_TYPE_NAMES[doc.transferType] ?? String(doc.transferType) : undefined,
    resolution: doc.resolution === null ? L.resolutionUnknown : L.resolution(doc.resolution.number, dateYear(doc.resolution.date, "resolution.date")),
    verify: L.verify(doc.verificationUrl ?? "www.sii.cl"),
    ted,
    cedible: isCedible(doc),
  };
}
