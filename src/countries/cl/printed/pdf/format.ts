/**
 * Number, date and label formatting for the printed DTE. Amounts are handled as decimal strings, never
 * as binary floats: rounding to the printed decimals is half away from zero on the digits.
 */
import type { Amount, PrintableSettings } from "./model";

export class PdfInputError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = "PdfInputError";
  }
}

interface Dec {
  neg: boolean;
  int: string; // no leading zeros except "0"
  frac: string; // may be ""
}

const DEC = /^([+-]?)(\d+)(?:\.(\d*))?$/;

/** Parses an Amount into sign/integer/fraction digits. Throws PdfInputError on garbage. */
export function toDecimal(value: Amount, field: string): Dec {
  let s: string;
  if (typeof value === "bigint") s = value.toString();
  else if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new PdfInputError(field, `${field} is not a finite number`);
    s = Number.isInteger(value) ? BigInt(value).toString() : value.toFixed(6);
  } else if (typeof value === "string") s = value.trim();
  else throw new PdfInputError(field, `${field} must be a number or a decimal string`);
  const m = DEC.exec(s);
  if (!m) throw new PdfInputError(field, `${field} is not a decimal number: ${JSON.stringify(String(value))}`);
  const int = m[2]!.replace(/^0+(?=\d)/, "");
  const frac = (m[3] ?? "").replace(/0+$/, "");
  const neg = m[1] === "-" && (int !== "0" || frac !== "");
  return { neg, int, frac };
}

/** Rounds to `places` decimals, half away from zero, on the digits. */
function roundDec(d: Dec, places: number): Dec {
  if (d.frac.length <= places) return { ...d, frac: d.frac.padEnd(places, "0") };
  const keep = d.int + d.frac.slice(0, places);
  const up = d.frac.charCodeAt(places) >= 53; // '5'
  let digits = keep;
  if (up) {
    const arr = keep.split("");
    let i = arr.length - 1;
    for (; i >= 0; i--) {
      if (arr[i] === "9") arr[i] = "0";
      else {
        arr[i] = String(Number(arr[i]) + 1);
        break;
      }
    }
    digits = (i < 0 ? "1" : "") + arr.join("");
  }
  const int = digits.slice(0, digits.length - places).replace(/^0+(?=\d)/, "") || "0";
  const frac = places ? digits.slice(digits.length - places) : "";
  const neg = d.neg && /[1-9]/.test(int + frac);
  return { neg, int, frac };
}

function groupThousands(int: string, sep: string): string {
  if (int.length <= 3) return int;
  let out = "";
  const head = int.length % 3;
  if (head) out = int.slice(0, head);
  for (let i = head; i < int.length; i += 3) out += (out ? sep : "") + int.slice(i, i + 3);
  return out;
}

function render(d: Dec, s: PrintableSettings): string {
  const int = groupThousands(d.int, s.thousand_separator);
  return (d.neg ? "-" : "") + int + (d.frac ? s.decimal_separator + d.frac : "");
}

/** Resolved settings, validated. */
export function resolveSettings(input: Partial<PrintableSettings> | undefined): PrintableSettings {
  const s: PrintableSettings = {
    decimal_places: input?.decimal_places ?? 0,
    thousand_separator: input?.thousand_separator ?? ".",
    decimal_separator: input?.decimal_separator ?? (input?.thousand_separator === "," ? "." : ","),
    language: input?.language || "es-CL",
  };
  if (!Number.isInteger(s.decimal_places) || s.decimal_places < 0 || s.decimal_places > 4) {
    throw new PdfInputError("settings.decimal_places", "settings.decimal_places must be an integer from 0 to 4");
  }
  if (s.thousand_separator !== "." && s.thousand_separator !== ",") {
    throw new PdfInputError("settings.thousand_separator", 'settings.thousand_separator must be "." or ","');
  }
  if (s.decimal_separator !== "." && s.decimal_separator !== ",") {
    throw new PdfInputError("settings.decimal_separator", 'settings.decimal_separator must be "." or ","');
  }
  if (s.decimal_separator === s.thousand_separator) {
    throw new PdfInputError("settings.decimal_separator", "settings.decimal_separator must differ from settings.thousand_separator");
  }
  return s;
}

/**
 * A money amount: CLP (no currency, or "CLP") prints as an integer (rounded half away from zero if
 * decimals were given); another currency prints with `decimal_places` decimals, at least 2 (export
 * amounts carry cents: 1233.25 USD is never printed as 1.233).
 */
export function formatAmount(value: Amount, s: PrintableSettings, field: string, currency?: string): string {
  const d = toDecimal(value, field);
  const places = !currency || currency.toUpperCase() === "CLP" || currency.toUpperCase() === "PESO CL" ? 0 : Math.max(s.decimal_places, 2);
  return render(roundDec(d, places), s);
}

/**
 * A quantity or unit price: `decimal_places` decimals, but never fewer than the value's own significant
 * decimals (up to 6, the SII's limit), so 1.5 units is never printed as 2.
 */
export function formatQuantity(value: Amount, s: PrintableSettings, field: string): string {
  const d = toDecimal(value, field);
  const places = Math.min(6, Math.max(s.decimal_places, d.frac.length));
  return render(roundDec(d, places), s);
}

/** A rate such as "19" or "10.5" -> "19%" / "10,5%". */
export function formatRate(value: string | number, s: PrintableSettings, field: string): string {
  const d = toDecimal(typeof value === "number" && Number.isInteger(value) ? value : String(value), field);
  return render(d, s) + "%";
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** YYYY-MM-DD -> "22-11-2026" (Spanish) or "2026-11-22" (English). */
export function formatDate(iso: string, language: string, field: string): string {
  const m = ISO_DATE.exec(iso.trim());
  if (!m) throw new PdfInputError(field, `${field} must be a date YYYY-MM-DD, got ${JSON.stringify(iso)}`);
  return isEnglish(language) ? `${m[1]}-${m[2]}-${m[3]}` : `${m[3]}-${m[2]}-${m[1]}`;
}

export function dateYear(iso: string, field: string): string {
  const m = ISO_DATE.exec(iso.trim());
  if (!m) throw new PdfInputError(field, `${field} must be a date YYYY-MM-DD, got ${JSON.stringify(iso)}`);
  return m[1]!;
}

export function isEnglish(language: string): boolean {
  return /^en\b/i.test(language);
}

export interface Labels {
  rut: string;
  folio: string;
  issueDate: string;
  dueDate: string;
  recipient: string;
  rutShort: string;
  activity: string;
  address: string;
  comuna: string;
  city: string;
  payment: string;
  contact: string;
  paymentMethods: Record<1 | 2 | 3, string>;
  transfer: string;
  references: string;
  refType: string;
  refFolio: string;
  refDate: string;
  refReason: string;
  code: string;
  description: string;
  quantity: string;
  unit: string;
  unitPrice: string;
  discount: string;
  surcharge: string;
  lineTotal: string;
  globalDiscount: string;
  globalSurcharge: string;
  onExempt: string;
  onNonBillable: string;
  ivaNotRetained: string;
  ivaOwn: string;
  ivaThirdParty: string;
  constructionCredit: string;
  deposit: string;
  commissions: string;
  nonBillable: string;
  periodAmount: string;
  previousBalance: string;
  amountToPay: string;
  otherCurrency: (name: string, rate: string) => string;
  exemptMark: string;
  net: string;
  exempt: string;
  iva: string;
  total: string;
  notes: string;
  page: (n: number, of: number) => string;
  continued: string;
  timbre: string;
  resolution: (n: number, year: string) => string;
  /** The resolution line when the issuer's resolution is not known (a received DTE that came without its envelope). */
  resolutionUnknown: string;
  verify: (url: string) => string;
  receiptTitle: string;
  receiptFields: string[];
  receiptLaw: string;
  cedible: string;
  cedibleGuia: string;
  cutHere: string;
}

const ES: Labels = {
  rut: "R.U.T.",
  folio: "N°",
  issueDate: "Fecha Emisión",
  dueDate: "Vencimiento",
  recipient: "Señor(es)",
  rutShort: "R.U.T.",
  activity: "Giro",
  address: "Dirección",
  comuna: "Comuna",
  city: "Ciudad",
  payment: "Forma de pago",
  contact: "Contacto",
  paymentMethods: { 1: "Contado", 2: "Crédito", 3: "Sin costo (entrega gratuita)" },
  transfer: "Traslado",
  references: "Referencias",
  refType: "Tipo documento",
  refFolio: "Folio",
  refDate: "Fecha",
  refReason: "Razón",
  code: "Código",
  description: "Descripción",
  quantity: "Cant.",
  unit: "Unidad",
  unitPrice: "P. Unitario",
  discount: "Dscto.",
  surcharge: "Rec.",
  lineTotal: "Valor",
  globalDiscount: "Descuento global",
  globalSurcharge: "Recargo global",
  onExempt: "(exento)",
  onNonBillable: "(no facturable)",
  ivaNotRetained: "IVA no retenido",
  ivaOwn: "IVA propio",
  ivaThirdParty: "IVA terceros",
  constructionCredit: "Crédito 65% empresas constructoras",
  deposit: "Garantía por envases",
  commissions: "Comisiones y otros cargos",
  nonBillable: "Monto no facturable",
  periodAmount: "Monto del período",
  previousBalance: "Saldo anterior",
  amountToPay: "TOTAL A PAGAR",
  otherCurrency: (name, rate) => `Total en ${name} (T/C ${rate})`,
  exemptMark: "(EX)",
  net: "Monto Neto",
  exempt: "Monto Exento",
  iva: "IVA",
  total: "TOTAL",
  notes: "Observaciones",
  page: (n, of) => `Página ${n} de ${of}`,
  continued: "Continúa en la página siguiente",
  timbre: "Timbre Electrónico SII",
  resolution: (n, y) => `Res. N° ${n} de ${y}`,
  resolutionUnknown: "Res. SII del emisor no informada",
  verify: (url) => `Verifique documento: ${url}`,
  receiptTitle: "ACUSE DE RECIBO",
  receiptFields: ["Nombre", "RUN", "Fecha", "Recinto", "Firma"],
  receiptLaw:
    "El acuse de recibo que se declara en este acto, de acuerdo a lo dispuesto en la letra b) del Art. 4°, y la letra c) del Art. 5° de la Ley 19.983, acredita que la entrega de mercaderías o servicio(s) prestado(s) ha(n) sido recibido(s).",
  cedible: "CEDIBLE",
  cedibleGuia: "CEDIBLE CON SU FACTURA",
  cutHere: "- - - - - - - - corte aquí - - - - - - - -",
};

const EN: Labels = {
  ...ES,
  issueDate: "Issue date",
  dueDate: "Due date",
  recipient: "Customer",
  activity: "Business activity",
  address: "Address",
  city: "City",
  payment: "Payment",
  contact: "Contact",
  paymentMethods: { 1: "Cash", 2: "Credit", 3: "No charge" },
  transfer: "Transfer",
  references: "References",
  refType: "Document type",
  refFolio: "Number",
  refDate: "Date",
  refReason: "Reason",
  code: "Code",
  description: "Description",
  quantity: "Qty",
  unit: "Unit",
  unitPrice: "Unit price",
  discount: "Disc.",
  surcharge: "Surch.",
  lineTotal: "Amount",
  globalDiscount: "Global discount",
  globalSurcharge: "Global surcharge",
  onExempt: "(exempt)",
  onNonBillable: "(non-billable)",
  ivaNotRetained: "VAT not withheld",
  ivaOwn: "Own VAT",
  ivaThirdParty: "Third-party VAT",
  constructionCredit: "Construction companies' 65% credit",
  deposit: "Container deposit",
  commissions: "Commissions and charges",
  nonBillable: "Non-billable amount",
  periodAmount: "Amount for the period",
  previousBalance: "Previous balance",
  amountToPay: "AMOUNT TO PAY",
  otherCurrency: (name, rate) => `Total in ${name} (rate ${rate})`,
  exemptMark: "(EX)",
  net: "Net amount",
  exempt: "Exempt amount",
  iva: "VAT (IVA)",
  notes: "Notes",
  page: (n, of) => `Page ${n} of ${of}`,
  continued: "Continued on next page",
  cutHere: "- - - - - - - - cut here - - - - - - - -",
  // The legends required by the SII (timbre, resolution, receipt box, CEDIBLE) stay in Spanish.
};

export function labelsFor(language: string): Labels {
  return isEnglish(language) ? EN : ES;
}
