/**
 * Invoice body (spec §2.7) and the amount engine.
 *
 * Over 500 lines, with a 230-line computeDocument, until the document-model issue (#14) rewrites it
 * as one small builder per DTE section (header, parties, lines, discounts, taxes, references,
 * transport, customs); that issue extends every section, so splitting it first would be done twice.
 *
 * Conventions decided here (documented in the schema descriptions too):
 * - Numbers may be JSON numbers or decimal strings; they are parsed into scaled BigInt, never floats.
 *   quantity and unit_price: up to 6 decimals; CLP amounts: integers; foreign-currency amounts on
 *   export documents (110/111/112): up to 2 decimals.
 * - items[].taxes says how a line is taxed:
 *   - `IVA` (19 %): the line is affected. This is also the default when `taxes` is empty or absent on
 *     a taxable type (33, 39, 46, 52, 56, 61).
 *   - `EXE`: the line is exempt (IndExe 1). Every line of 34, 41, 110, 111, 112 is exempt anyway.
 *   - SII additional-tax codes (ADDITIONAL_TAXES below: 15 IVA retenido total, 17, 18, 19, 23, 24,
 *     25, 26, 27, 271), at most 2 per line, on affected lines of 33/46/52/56/61 only. `rate` may be
 *     sent; it must equal the SII rate of that code.
 * - Boletas (39): unit prices are gross (IVA included); MntNeto = round(affected / 1.19), IVA = the
 *   difference.
 * - items[].discount_amount is the line's DescuentoMonto. There is no global discount.
 * - totals (optional) is checked, never trusted: sub_total = Σ round(qty × price); discount = Σ line
 *   discounts; taxes[] = one entry per tax present (IVA: base_amount = MntNeto; EXE: base_amount =
 *   MntExe, amount 0; additional codes: base = affected lines carrying the code); total = MntTotal.
 *   Any difference raises TOTALS_MISMATCH naming the field and carrying the expected value.
 * - Rounding: half away from zero, once per line (qty × price) and once per document total.
 */
import { z } from "zod";
import { divRound, formatScaled, parseScaled, pow10 } from "./decimal";
import { type DocumentTypeInfo, resolveDocumentType, resolveReasonCode, resolveReferenceType } from "./document-types";
import { EngineError } from "../errors";
import { ANONYMOUS_BUYER_RUT, FOREIGN_RECEIVER_RUT, parseRut, formatRut, RutError } from "./rut";

const num = z
  .union([z.number(), z.string().regex(/^-?\d+(\.\d+)?$/)])
  .describe("A number (JSON number or decimal string such as \"1190.5\"). Amounts are exact decimals, never floats.");

const addressSchema = z
  .object({
    country: z.string().max(3).optional().describe("Country code (CL/CHL)."),
    region: z.string().max(40).optional().describe("Region code from the catalog."),
    city: z.string().max(20).optional().describe("Comuna / city code or name; printed as CmnaOrigen/CiudadOrigen (SII max 20)."),
    address: z.string().max(70).optional().describe("Street address, free text (SII DirOrigen/DirRecep max 70)."),
  })
  .describe("Postal address.");

const taxInfoSchema = z
  .object({
    activity: z.string().max(80).optional().describe("Business activity in words (giro). Required for the issuer (GiroEmis max 80); recipient's GiroRecep max 40."),
    activity_codes: z.array(z.number().int().positive().max(999999)).max(4).optional().describe("SII economic activity codes (Acteco), 1 to 4 for the issuer of facturas."),
    resolution_date: z.string().optional().describe("Date of the SII resolution authorising the issuer (YYYY-MM-DD); goes into the envelope Caratula."),
    resolution_number: z.string().optional().describe("Number of the SII resolution (0 in certification)."),
  })
  .describe("Tax information.");

export const partySchema = z
  .object({
    legal_name: z.string().min(1).max(100).describe("Legal name (RznSoc max 100)."),
    document_type: z.string().optional().describe("Tax identification document code (RUT for Chile)."),
    document_number: z.string().min(1).max(20).describe("Tax id. For Chile a RUT in any usual form (76086428-5, 76.086.428-5, 760864285). Foreign recipients of export documents may send their own id."),
    address: addressSchema.optional(),
    tax_information: taxInfoSchema.optional(),
  })
  .describe("Issuer or recipient.");

export const itemTaxSchema = z
  .object({
    type: z.string().min(1).max(8).describe("IVA (19 %), EXE (exempt line) or an SII additional-tax code (15, 17, 18, 19, 23, 24, 25, 26, 27, 271)."),
    amount: num.optional().describe("Optional; when sent it must equal the line's tax computed by the engine."),
    rate: num.optional().describe("Optional; when sent it must equal the SII rate of the tax (IVA 19)."),
  })
  .describe("Tax applied to a line.");

export const itemSchema = z
  .object({
    quantity: num.describe("Quantity, > 0, up to 6 decimals."),
    code_unit_of_measure: z.string().max(4).optional().describe("Unit of measure (UnmdItem, max 4 characters)."),
    discount_amount: num.optional().describe("Line discount amount (DescuentoMonto) in the document currency; ≤ quantity × unit_price."),
    unit_price: num.describe("Unit price, ≥ 0, up to 6 decimals. Net on facturas and notes, gross (IVA included) on boletas 39."),
    description: z.string().min(1).max(80).describe("Item name (NmbItem, max 80)."),
    taxes: z.array(itemTaxSchema).max(3).optional().describe("See itemTaxSchema; empty means the document type's default (affected or exempt)."),
  })
  .describe("Detail line.");

export const totalsTaxSchema = z.object({
  type: z.string().min(1).max(8).describe("IVA, EXE or an additional-tax code."),
  amount: num.optional(),
  base_amount: num.optional(),
  rate: num.optional(),
});

export const totalsSchema = z
  .object({
    sub_total: num.optional().describe("Σ round(quantity × unit_price) over all lines."),
    discount: num.optional().describe("Σ items[].discount_amount."),
    taxes: z.array(totalsTaxSchema).max(25).optional().describe("Per-tax totals; each entry sent is checked."),
    total: num.optional().describe("MntTotal."),
  })
  .describe("Client-computed totals. Optional; every field sent is checked against the engine's result.");

export const billingReferenceSchema = z
  .object({
    branch_office: z.number().int().nonnegative().max(999_999_999).optional(),
    number: z.union([z.number().int().nonnegative(), z.string().min(1).max(18)]).describe("Folio of the referenced document (FolioRef)."),
    invoice_type: z.string().min(1).max(3).describe("Referenced document type: SII code, mnemonic, paper code or 8xx."),
    invoice_date: z.string().describe("Date of the referenced document, YYYY-MM-DD or YYYY-MM-DD HH:MM:SS."),
    reason: z.string().max(90).optional().describe("RazonRef (max 90)."),
  })
  .describe("Reference to another document.");

export const invoiceSchema = z
  .object({
    branch_office: z.number().int().nonnegative().max(999_999_999).optional().describe("Issuing branch number (printed as Sucursal), at most 9 digits like the SII's branch codes."),
    invoice_type: z.string().min(1).max(3).describe("SII code (33, 34, 39, 41, 46, 52, 56, 61, 110, 111, 112) or mnemonic (FAC, FEX, BEL, BEX, FCO, GDE, NDV, NCV, FEE, NDE, NCE)."),
    invoice_date: z.string().regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/).describe("Issue date-time YYYY-MM-DD HH:MM:SS, company time zone."),
    payment_due_date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).optional().describe("FchVenc, YYYY-MM-DD."),
    external_reference: z.string().max(100).optional().describe("Caller's reference; not sent to the SII."),
    issuer: partySchema,
    recipient: partySchema.optional().describe("Required except on boletas (then 66666666-6, anonymous buyer)."),
    currency: z
      .object({ code: z.string().min(3).max(3).describe("ISO 4217; CLP except on export documents."), exchange_rate: num.optional().describe("CLP per unit of `code` (exports).") })
      .optional()
      .describe("Defaults to CLP."),
    payment_method: z
      .object({ code: z.string().min(1).max(10).describe("1/CONTADO/CASH, 2/CREDITO/CREDIT or 3/SIN_COSTO/FREE (FmaPago)."), description: z.string().max(60).optional() })
      .optional(),
    items: z.array(itemSchema).min(1).describe("1..60 lines (1..1000 on boletas)."),
    totals: totalsSchema.optional(),
    reason_code: z.string().max(3).optional().describe("ANU cancels the referenced document (CodRef 1), COT corrects text (2), COM corrects amounts (3). Required on notes."),
    billing_reference: z.array(billingReferenceSchema).max(40).optional().describe("References; at least one on notes (56, 61, 111, 112)."),
  })
  .describe("Invoice issuance body (specification §2.7).");

export type InvoiceInput = z.infer<typeof invoiceSchema>;

/** SII additional taxes and withholdings supported (AO Formato v2.2 §4). kind A adds, R withholds. */
export const ADDITIONAL_TAXES: Readonly<Record<string, { rate: string; kind: "A" | "R"; name: string }>> = {
  "15": { rate: "19", kind: "R", name: "IVA retenido total" },
  "17": { rate: "5", kind: "A", name: "IVA anticipado faenamiento carne" },
  "18": { rate: "5", kind: "A", name: "IVA anticipado carne" },
  "19": { rate: "12", kind: "A", name: "IVA anticipado harina" },
  "23": { rate: "15", kind: "A", name: "Impuesto adicional art. 37 letras a, b, c" },
  "24": { rate: "31.5", kind: "A", name: "Licores, piscos, whisky y destilados" },
  "25": { rate: "20.5", kind: "A", name: "Vinos" },
  "26": { rate: "20.5", kind: "A", name: "Cervezas y bebidas alcohólicas" },
  "27": { rate: "10", kind: "A", name: "Bebidas analcohólicas y minerales" },
  "271": { rate: "18", kind: "A", name: "Bebidas analcohólicas con alto contenido de azúcar" },
};

export const IVA_RATE = 19n;
/** Rates are kept scaled by 10^RATE_SCALE. */
const RATE_SCALE = 2;
const QTY_SCALE = 6;

/** ISO 4217 -> SII customs currency name (TipMonType) for export documents. */
export const CURRENCY_SII_NAMES: Readonly<Record<string, string>> = {
  CLP: "PESO CL", USD: "DOLAR USA", EUR: "EURO", GBP: "LIBRA EST", CAD: "DOLAR CAN", AUD: "DOLAR AUST",
  NZD: "DOLAR NZ", HKD: "DOLAR HK", SGD: "DOLAR SIN", TWD: "DOLAR TAI", JPY: "YEN", CNY: "RENMINBI",
  CHF: "FRANCO SZ", SEK: "CORONA SC", NOK: "CORONA NOR", DKK: "CORONA DIN", MXN: "PESO MEX",
  COP: "PESO COL", UYU: "PESO URUG", PEN: "NUEVO SOL", BOB: "BOLIVIANO", PYG: "GUARANI", ZAR: "RAND",
  INR: "RUPIA", AED: "DIRHAM", VES: "BOLIVAR", ARS: "PESO",
};

export interface Party {
  rut: string;
  legalName: string;
  activity?: string;
  activityCodes: number[];
  address?: string;
  commune?: string;
  city?: string;
  /** Foreign id of an export recipient whose RUT is 55555555-5. */
  foreignId?: string;
  resolutionDate?: string;
  resolutionNumber?: string;
}

export interface ComputedLine {
  lineNo: number;
  name: string;
  /** Plain decimal strings, omitted when zero (SII: omit rather than send 0). */
  qty?: string;
  unit?: string;
  price?: string;
  /** DescuentoMonto in currency units (scaled by currency.scale). */
  discount: bigint;
  /** Gross of the line before discount: round(qty × price). */
  gross: bigint;
  /** IndExe 1 on an otherwise affected document. */
  exemptFlag: boolean;
  exempt: boolean;
  additionalTaxCodes: string[];
  /** MontoItem (scaled by currency.scale). */
  amount: bigint;
}

export interface ComputedTax {
  /** "IVA" or an additional-tax code. */
  type: string;
  kind: "IVA" | "A" | "R";
  /** Rate as decimal string (e.g. "19", "20.5"). */
  rate: string;
  base: bigint;
  amount: bigint;
}

export interface ComputedReference {
  lineNo: number;
  type: string;
  folio: string;
  date: string;
  codRef?: 1 | 2 | 3;
  reason?: string;
}

export interface ComputedTotals {
  subTotal: bigint;
  discount: bigint;
  /** MntNeto (affected net) — undefined when the document has no affected amount. */
  net?: bigint;
  /** MntExe. */
  exempt?: bigint;
  ivaRate?: string;
  iva?: bigint;
  /** ImptoReten entries (additional taxes A and withholdings R). */
  additional: ComputedTax[];
  total: bigint;
}

/** The result of computeDocument: everything the XML builder needs, already validated. */
export interface ComputedDocument {
  type: DocumentTypeInfo;
  /** FchEmis YYYY-MM-DD. */
  issueDate: string;
  /** invoice_date as given (local time, "YYYY-MM-DDTHH:MM:SS"). */
  issueDateTime: string;
  dueDate?: string;
  branchOffice?: number;
  /** FmaPago 1 contado, 2 crédito, 3 sin costo. */
  paymentForm?: 1 | 2 | 3;
  /** Boletas: IndServicio (3 = ventas y servicios). */
  serviceIndicator?: 1 | 2 | 3 | 4;
  issuer: Party;
  receiver: Party;
  currency: { code: string; siiName: string; scale: number; exchangeRate?: string };
  lines: ComputedLine[];
  totals: ComputedTotals;
  references: ComputedReference[];
  reason?: { code: "ANU" | "COT" | "COM"; codRef: 1 | 2 | 3 };
  externalReference?: string;
}

/** Formats an amount of the document for XML / display. */
export function formatAmount(doc: Pick<ComputedDocument, "currency">, v: bigint): string {
  return formatScaled(v, doc.currency.scale);
}

// ---------------------------------------------------------------------------------------------

/** Text limits enforced before anything is used (field path -> max length). */
const LIMITS = {
  legalName: 100,
  issuerActivity: 80,
  recipientActivity: 40,
  address: 70,
  commune: 20,
  itemName: 80,
  unit: 4,
  reason: 90,
  folioRef: 18,
};

function checkLatin1(value: unknown, path: string): void {
  if (typeof value === "string") {
    for (let i = 0; i < value.length; i++) {
      const c = value.charCodeAt(i);
      if (c > 0xff || (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) || (c >= 0x7f && c <= 0x9f)) {
        const ch = value.codePointAt(i)!;
        throw new EngineError("CHARACTER_NOT_LATIN1", `${path} contains the character U+${ch.toString(16).toUpperCase().padStart(4, "0")}, which ISO-8859-1 SII documents cannot carry`, { field: path });
      }
    }
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => checkLatin1(v, `${path}[${i}]`));
  } else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) checkLatin1(v, path ? `${path}.${k}` : k);
  }
}

function checkLength(value: string | undefined, max: number, field: string): void {
  if (value !== undefined && value.length > max) {
    throw new EngineError("FIELD_TOO_LONG", `${field} has ${value.length} characters; the SII allows at most ${max}`, { field, expected: `≤ ${max} characters` });
  }
}

function checkDate(value: string, field: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) throw new EngineError("INVALID_DATE", `${field} must be a date YYYY-MM-DD`, { field });
  const y = Number(m[1]), mo = Number(m[2]), d = Number(m[3]);
  const dt = new Date(Date.UTC(y, mo - 1, d));
  if (dt.getUTCFullYear() !== y || dt.getUTCMonth() !== mo - 1 || dt.getUTCDate() !== d) {
    throw new EngineError("INVALID_DATE", `${field} is not a calendar date: ${value}`, { field });
  }
  if (value < "2000-01-01" || value > "2050-12-31") {
    throw new EngineError("INVALID_DATE", `${field} must be between 2000-01-01 and 2050-12-31 (SII FechaType)`, { field });
  }
  return value;
}

function checkDateTime(value: string, field: string): { date: string; dateTime: string } {
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}):(\d{2}):(\d{2})$/.exec(value);
  if (!m) throw new EngineError("INVALID_DATE", `${field} must be YYYY-MM-DD HH:MM:SS`, { field });
  const date = checkDate(m[1]!, field);
  if (Number(m[2]) > 23 || Number(m[3]) > 59 || Number(m[4]) > 59) throw new EngineError("INVALID_DATE", `${field} has an invalid time`, { field });
  return { date, dateTime: `${date}T${m[2]}:${m[3]}:${m[4]}` };
}

function rutOf(value: string, field: string): string {
  try {
    return formatRut(parseRut(value));
  } catch (e) {
    if (e instanceof RutError) throw new EngineError("INVALID_RUT", `${field}: ${e.message}`, { field });
    throw e;
  }
}

function party(p: z.infer<typeof partySchema>, path: string, role: "issuer" | "recipient", type: DocumentTypeInfo): Party {
  checkLength(p.legal_name, LIMITS.legalName, `${path}.legal_name`);
  const activity = p.tax_information?.activity;
  checkLength(activity, role === "issuer" ? LIMITS.issuerActivity : LIMITS.recipientActivity, `${path}.tax_information.activity`);
  checkLength(p.address?.address, LIMITS.address, `${path}.address.address`);
  checkLength(p.address?.city, LIMITS.commune, `${path}.address.city`);
  let rut: string;
  let foreignId: string | undefined;
  if (role === "recipient" && type.export) {
    try {
      rut = formatRut(parseRut(p.document_number));
    } catch {
      rut = FOREIGN_RECEIVER_RUT;
      foreignId = p.document_number;
    }
  } else {
    rut = rutOf(p.document_number, `${path}.document_number`);
  }
  const out: Party = { rut, legalName: p.legal_name, activityCodes: p.tax_information?.activity_codes ?? [] };
  if (activity) out.activity = activity;
  if (p.address?.address) out.address = p.address.address;
  if (p.address?.city) {
    out.commune = p.address.city;
    out.city = p.address.city;
  }
  if (foreignId) out.foreignId = foreignId;
  if (p.tax_information?.resolution_date) out.resolutionDate = checkDate(p.tax_information.resolution_date, `${path}.tax_information.resolution_date`);
  if (p.tax_information?.resolution_number !== undefined) out.resolutionNumber = p.tax_information.resolution_number;
  if (role === "issuer" && !type.boleta) {
    if (!activity) throw new EngineError("INVALID_INPUT", `${path}.tax_information.activity (giro) is required for the issuer of a ${type.name}`, { field: `${path}.tax_information.activity` });
    if (out.activityCodes.length === 0) throw new EngineError("INVALID_INPUT", `${path}.tax_information.activity_codes needs 1 to 4 SII activity codes (Acteco)`, { field: `${path}.tax_information.activity_codes` });
  }
  return out;
}

function paymentForm(code: string, field: string): 1 | 2 | 3 {
  const c = code.trim().toUpperCase();
  if (["1", "CONTADO", "CASH"].includes(c)) return 1;
  if (["2", "CREDITO", "CRÉDITO", "CREDIT"].includes(c)) return 2;
  if (["3", "SIN_COSTO", "FREE"].includes(c)) return 3;
  throw new EngineError("INVALID_INPUT", `payment_method.code "${code}" is not 1/CONTADO, 2/CREDITO or 3/SIN_COSTO`, { field });
}

function sameRate(sent: unknown, expected: string, field: string): void {
  if (sent === undefined) return;
  const a = parseScaled(sent, RATE_SCALE + 2, field);
  const b = parseScaled(expected, RATE_SCALE + 2, field);
  if (a !== b) throw new EngineError("TAX_RATE_MISMATCH", `${field} is ${formatScaled(a, RATE_SCALE + 2)} but the rate is ${expected}`, { field, expected });
}

function sameAmount(sent: unknown, expected: bigint, scale: number, field: string): void {
  if (sent === undefined) return;
  const a = parseScaled(sent, scale, field, { allowNegative: true });
  if (a !== expected) {
    const e = formatScaled(expected, scale);
    throw new EngineError("TOTALS_MISMATCH", `${field} is ${formatScaled(a, scale)} but the engine computes ${e}`, { field, expected: e });
  }
}

const MAX_AMOUNT = 10n ** 18n - 1n;

/** Accepts an already-parsed object (e.g. JSON) or a typed InvoiceInput. Throws INVALID_INPUT with a path. */
export function parseInvoice(input: unknown): InvoiceInput {
  const r = invoiceSchema.safeParse(input);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const field = issue.path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join("");
    const i = issue as { code: string; origin?: string; maximum?: number | bigint };
    if (i.code === "too_big" && i.origin === "string") {
      throw new EngineError("FIELD_TOO_LONG", `${field} is longer than the SII allows (${String(i.maximum)} characters)`, { field, expected: `≤ ${String(i.maximum)} characters` });
    }
    throw new EngineError("INVALID_INPUT", `${field || "body"}: ${issue.message}`, { field: field || undefined });
  }
  return r.data;
}

/**
 * Validates the invoice body and computes every amount. Pure: no I/O, no clock. `typeInfo` defaults
 * to the resolution of input.invoice_type.
 */
export function computeDocument(raw: InvoiceInput | unknown, typeInfo?: DocumentTypeInfo): ComputedDocument {
  // 1. Limits that must hold before anything else is looked at.
  if (raw && typeof raw === "object" && Array.isArray((raw as { items?: unknown }).items)) {
    const t = typeInfo ?? (typeof (raw as { invoice_type?: unknown }).invoice_type === "string" ? resolveDocumentType((raw as { invoice_type: string }).invoice_type) : undefined);
    const n = (raw as { items: unknown[] }).items.length;
    const max = t?.maxLines ?? 1000;
    if (n > max) throw new EngineError("TOO_MANY_LINES", `${n} lines; ${t ? t.name : "a document"} allows at most ${max}`, { field: "items", expected: `≤ ${max}` });
  }
  const input = parseInvoice(raw);
  checkLatin1(input, "");
  const type = typeInfo ?? resolveDocumentType(input.invoice_type);
  if (input.items.length > type.maxLines) {
    throw new EngineError("TOO_MANY_LINES", `${input.items.length} lines; ${type.name} allows at most ${type.maxLines}`, { field: "items", expected: `≤ ${type.maxLines}` });
  }

  const { date: issueDate, dateTime: issueDateTime } = checkDateTime(input.invoice_date, "invoice_date");
  const dueDate = input.payment_due_date ? checkDate(input.payment_due_date, "payment_due_date") : undefined;
  if (dueDate !== undefined && dueDate < issueDate) {
    throw new EngineError("INVALID_DATE", `payment_due_date ${dueDate} is before the issue date ${issueDate}`, { field: "payment_due_date", expected: `≥ ${issueDate}` });
  }

  // Currency
  const code = (input.currency?.code ?? "CLP").toUpperCase();
  if (code !== "CLP" && !type.export) {
    throw new EngineError("CURRENCY_NOT_SUPPORTED", `${type.name} is issued in CLP; ${code} is only allowed on export documents (110, 111, 112)`, { field: "currency.code", expected: "CLP" });
  }
  const siiName = CURRENCY_SII_NAMES[code];
  if (!siiName) throw new EngineError("CURRENCY_NOT_SUPPORTED", `Currency ${code} has no SII customs name`, { field: "currency.code" });
  const scale = code === "CLP" ? 0 : 2;
  const currency: ComputedDocument["currency"] = { code, siiName, scale };
  if (input.currency?.exchange_rate !== undefined) {
    currency.exchangeRate = formatScaled(parseScaled(input.currency.exchange_rate, 4, "currency.exchange_rate"), 4);
  }

  const issuer = party(input.issuer, "issuer", "issuer", type);
  let receiver: Party;
  if (input.recipient) receiver = party(input.recipient, "recipient", "recipient", type);
  else if (type.boleta) receiver = { rut: ANONYMOUS_BUYER_RUT, legalName: "CONSUMIDOR FINAL", activityCodes: [] };
  else throw new EngineError("INVALID_INPUT", `recipient is required on ${type.name}`, { field: "recipient" });

  // Lines
  const lines: ComputedLine[] = input.items.map((it, i) => {
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
  });

  // Totals
  const subTotal = lines.reduce((s, l) => s + l.gross, 0n);
  const discount = lines.reduce((s, l) => s + l.discount, 0n);
  const affected = lines.filter((l) => !l.exempt).reduce((s, l) => s + l.amount, 0n);
  const exemptSum = lines.filter((l) => l.exempt).reduce((s, l) => s + l.amount, 0n);
  const totals: ComputedTotals = { subTotal, discount, additional: [], total: 0n };
  if (type.boleta) {
    if (!type.exempt && affected > 0n) {
      const net = divRound(affected * 100n, 100n + IVA_RATE);
      totals.net = net;
      totals.iva = affected - net;
      totals.ivaRate = String(IVA_RATE);
    }
    if (type.exempt || exemptSum > 0n) totals.exempt = exemptSum;
    totals.total = affected + exemptSum;
  } else if (type.export) {
    totals.exempt = exemptSum;
    totals.total = exemptSum;
  } else {
    const hasAffected = lines.some((l) => !l.exempt);
    if (hasAffected) {
      totals.net = affected;
      totals.ivaRate = String(IVA_RATE);
      totals.iva = divRound(affected * IVA_RATE, 100n);
    }
    if (type.exempt || exemptSum > 0n) totals.exempt = exemptSum;
    const codes = [...new Set(lines.flatMap((l) => l.additionalTaxCodes))].sort((a, b) => Number(a) - Number(b));
    for (const c of codes) {
      const info = ADDITIONAL_TAXES[c]!;
      const base = lines.filter((l) => l.additionalTaxCodes.includes(c)).reduce((s, l) => s + l.amount, 0n);
      const rateScaled = parseScaled(info.rate, RATE_SCALE, "rate");
      const amount = divRound(base * rateScaled, 100n * pow10(RATE_SCALE));
      totals.additional.push({ type: c, kind: info.kind, rate: info.rate, base, amount });
    }
    const add = totals.additional.filter((t) => t.kind === "A").reduce((s, t) => s + t.amount, 0n);
    const ret = totals.additional.filter((t) => t.kind === "R").reduce((s, t) => s + t.amount, 0n);
    totals.total = (totals.net ?? 0n) + (totals.exempt ?? 0n) + (totals.iva ?? 0n) + add - ret;
  }
  if (totals.total > MAX_AMOUNT) throw new EngineError("AMOUNT_OUT_OF_RANGE", `The total exceeds 18 digits`, { field: "totals.total" });

  // Per-line tax amounts sent by the client
  input.items.forEach((it, i) => {
    const line = lines[i]!;
    (it.taxes ?? []).forEach((t, j) => {
      if (t.amount === undefined) return;
      const tt = t.type.trim().toUpperCase();
      const f = `items[${i}].taxes[${j}].amount`;
      if (tt === "EXE") sameAmount(t.amount, 0n, scale, f);
      else if (tt === "IVA") sameAmount(t.amount, type.boleta ? line.amount - divRound(line.amount * 100n, 100n + IVA_RATE) : divRound(line.amount * IVA_RATE, 100n), scale, f);
      else sameAmount(t.amount, divRound(line.amount * parseScaled(ADDITIONAL_TAXES[tt]!.rate, RATE_SCALE, f), 100n * pow10(RATE_SCALE)), scale, f);
    });
  });

  // Client totals
  if (input.totals) {
    const t = input.totals;
    sameAmount(t.sub_total, subTotal, scale, "totals.sub_total");
    sameAmount(t.discount, discount, scale, "totals.discount");
    (t.taxes ?? []).forEach((tx, j) => {
      const f = `totals.taxes[${j}]`;
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
        sameRate(tx.rate, c.rate, `${f}.rate`);
      }
    });
    sameAmount(t.total, totals.total, scale, "totals.total");
  }

  // Reason and references
  let reason: ComputedDocument["reason"];
  if (input.reason_code !== undefined) {
    const r = resolveReasonCode(input.reason_code);
    reason = { code: r.reason, codRef: r.codRef };
  }
  const refsIn = input.billing_reference ?? [];
  if (type.note && refsIn.length === 0) {
    throw new EngineError("REFERENCE_REQUIRED", `${type.name} must reference the document it modifies (billing_reference)`, { field: "billing_reference" });
  }
  if (type.note && !reason) {
    throw new EngineError("REFERENCE_REQUIRED", `${type.name} needs reason_code ANU, COT or COM`, { field: "reason_code" });
  }
  if (reason && !type.note) throw new EngineError("REFERENCE_INVALID", `reason_code is only for notes (56, 61, 111, 112)`, { field: "reason_code" });
  const references: ComputedReference[] = refsIn.map((r, i) => {
    const p = `billing_reference[${i}]`;
    const rtype = resolveReferenceType(r.invoice_type, `${p}.invoice_type`);
    const folio = String(r.number);
    checkLength(folio, LIMITS.folioRef, `${p}.number`);
    checkLength(r.reason, LIMITS.reason, `${p}.reason`);
    const date = checkDate(r.invoice_date.slice(0, 10), `${p}.invoice_date`);
    if (!/^\d{4}-\d{2}-\d{2}( \d{2}:\d{2}:\d{2})?$/.test(r.invoice_date)) throw new EngineError("INVALID_DATE", `${p}.invoice_date must be YYYY-MM-DD or YYYY-MM-DD HH:MM:SS`, { field: `${p}.invoice_date` });
    const ref: ComputedReference = { lineNo: i + 1, type: rtype, folio, date };
    // The reason applies to the first reference to a modifiable document.
    if (reason && type.mayModify.includes(Number(rtype)) && !references_has_cod(i, refsIn, type)) {
      ref.codRef = reason.codRef;
      ref.reason = r.reason ?? defaultReason(reason.codRef);
    } else if (r.reason) ref.reason = r.reason;
    return ref;
  });
  if (reason && !references.some((r) => r.codRef)) {
    throw new EngineError("REFERENCE_INVALID", `${type.name} cannot modify ${refsIn.map((r) => r.invoice_type).join(", ")}; it may reference ${type.mayModify.join(", ")}`, { field: "billing_reference[0].invoice_type", expected: type.mayModify.join("|") });
  }
  if (reason?.codRef === 2 && totals.total !== 0n) {
    throw new EngineError("TOTALS_MISMATCH", `A text-correction note (COT) carries zero amounts`, { field: "items", expected: "0" });
  }

  const doc: ComputedDocument = {
    type,
    issueDate,
    issueDateTime,
    issuer,
    receiver,
    currency,
    lines,
    totals,
    references,
  };
  if (dueDate) doc.dueDate = dueDate;
  if (input.branch_office !== undefined) doc.branchOffice = input.branch_office;
  if (input.payment_method) doc.paymentForm = paymentForm(input.payment_method.code, "payment_method.code");
  if (type.boleta) doc.serviceIndicator = 3;
  if (reason) doc.reason = reason;
  if (input.external_reference) doc.externalReference = input.external_reference;
  return doc;
}

function references_has_cod(i: number, refs: { invoice_type: string }[], type: DocumentTypeInfo): boolean {
  for (let k = 0; k < i; k++) {
    const r = refs[k]!;
    try {
      if (type.mayModify.includes(Number(resolveReferenceType(r.invoice_type, "")))) return true;
    } catch {
      /* reported by its own iteration */
    }
  }
  return false;
}

function defaultReason(codRef: 1 | 2 | 3): string {
  return codRef === 1 ? "ANULA DOCUMENTO DE REFERENCIA" : codRef === 2 ? "CORRIGE TEXTO DEL DOCUMENTO DE REFERENCIA" : "CORRIGE MONTOS";
}
