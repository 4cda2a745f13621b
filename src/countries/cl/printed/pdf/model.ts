/**
 * Input model of the printed representation of a DTE: everything the page shows, already computed.
 * The issuance pipeline maps its stored document onto `PrintableDocument`; the renderer does no tax
 * arithmetic, only formatting and layout.
 *
 * Amounts (`Amount`) are integers (number or bigint) or decimal strings ("1234", "-5", "10.5"); the
 * renderer never turns them into binary floats. CLP amounts are integers; a foreign currency (exports)
 * may carry decimals.
 */

import { DOCUMENT_TYPE_CODES, DOCUMENT_TYPES, type SiiDocumentCode } from "../../documents/document-types";

export type DteTypeCode = SiiDocumentCode;

export const DTE_TYPE_CODES: readonly DteTypeCode[] = DOCUMENT_TYPE_CODES;

/** Printed document names (capitals, as on the red box): the document-type table's names. */
export const DTE_TYPE_NAMES: Readonly<Record<DteTypeCode, string>> = Object.fromEntries(DOCUMENT_TYPE_CODES.map((c) => [c, DOCUMENT_TYPES[c].name])) as Record<DteTypeCode, string>;

/**
 * Names of reference document types (TpoDocRef) in words: DTE codes, paper documents and the 8xx
 * codes (AO Formato §E). Unknown or free codes (e.g. "HES", "SET") print as given.
 */
export const REFERENCE_TYPE_NAMES: Readonly<Record<string, string>> = {
  "30": "Factura",
  "32": "Factura de venta bienes y servicios no afectos o exentos de IVA",
  "33": "Factura Electrónica",
  "34": "Factura No Afecta o Exenta Electrónica",
  "35": "Boleta",
  "38": "Boleta Exenta",
  "39": "Boleta Electrónica",
  "40": "Liquidación Factura",
  "41": "Boleta No Afecta o Exenta Electrónica",
  "43": "Liquidación Factura Electrónica",
  "45": "Factura de Compra",
  "46": "Factura de Compra Electrónica",
  "50": "Guía de Despacho",
  "52": "Guía de Despacho Electrónica",
  "55": "Nota de Débito",
  "56": "Nota de Débito Electrónica",
  "60": "Nota de Crédito",
  "61": "Nota de Crédito Electrónica",
  "103": "Liquidación",
  "110": "Factura de Exportación Electrónica",
  "111": "Nota de Débito de Exportación Electrónica",
  "112": "Nota de Crédito de Exportación Electrónica",
  "801": "Orden de Compra",
  "802": "Nota de Pedido",
  "803": "Contrato",
  "804": "Resolución",
  "805": "Proceso ChileCompra",
  "806": "Ficha ChileCompra",
  "807": "DUS",
  "808": "B/L (Conocimiento de embarque)",
  "809": "AWB (Air Will Bill)",
  "810": "MIC/DTA",
  "811": "Carta de Porte",
  "812": "Resolución del SNA donde califica Servicios de Exportación",
  "813": "Pasaporte",
  "814": "Certificado de Depósito Bolsa Prod. Chile",
  "815": "Vale de Prenda Bolsa Prod. Chile",
  "820": "Código de Inscripción en el Registro de Acuerdos con Plazo de Pago Excepcional",
  HES: "Hoja de Entrada de Servicios",
  HEM: "Hoja de Entrada de Materiales",
  SET: "SET",
};

/** CodRef in words. */
export const REFERENCE_REASON_NAMES: Readonly<Record<1 | 2 | 3, string>> = {
  1: "Anula documento de referencia",
  2: "Corrige texto del documento de referencia",
  3: "Corrige montos",
};

/** IndTraslado of a guía de despacho (52) in words. */
export const TRANSFER_TYPE_NAMES: Readonly<Record<number, string>> = {
  1: "Operación constituye venta",
  2: "Ventas por efectuar",
  3: "Consignaciones",
  4: "Entrega gratuita",
  5: "Traslados internos",
  6: "Otros traslados no venta",
  7: "Guía de devolución",
  8: "Traslado para exportación (no venta)",
  9: "Venta para exportación",
};

export type Amount = number | bigint | string;

export interface PrintableParty {
  /** RUT in any accepted form (76086428-5, 76.086.428-5); printed with dots. */
  rut: string;
  /** Razón social (or the buyer's name). */
  name: string;
  /** Giro. */
  activity?: string;
  address?: string;
  comuna?: string;
  city?: string;
  email?: string;
  phone?: string;
}

export interface PrintableIssuer extends PrintableParty {
  /** "S.I.I. - SANTIAGO ORIENTE" or "SANTIAGO ORIENTE": the SII unit of the issuer's commune (communes catalog); not printed when absent. */
  siiOffice?: string;
  /** Branch code (CdgSIISucur) or name, printed when present. */
  branch?: string;
}

export interface PrintableLine {
  /** NmbItem. */
  description: string;
  /** DscItem: a longer description printed under the name. */
  detail?: string;
  /** Item code (CdgItem VlrCodigo). */
  code?: string;
  /** QtyItem: integer or decimal string, up to 6 decimals. */
  quantity?: Amount;
  /** UnmdItem. */
  unit?: string;
  /** PrcItem: may have decimals. */
  unitPrice?: Amount;
  /** DescuentoMonto (amount, document currency). */
  discount?: Amount;
  /** DescuentoPct, printed next to the discount when given, e.g. "10". */
  discountPercent?: string;
  /** RecargoMonto and RecargoPct. */
  surcharge?: Amount;
  surchargePercent?: string;
  /** MontoItem. */
  amount: Amount;
  /** IndExe = 1: exempt line (marked "EX" in the table). */
  exempt?: boolean;
}

export interface PrintableReference {
  /** TpoDocRef: a DTE code, a paper code, 8xx, or free text (HES, SET...). */
  typeCode: string | number;
  /** FolioRef. */
  folio: string | number;
  /** FchRef, YYYY-MM-DD. */
  date?: string;
  /** CodRef 1 | 2 | 3. */
  reasonCode?: 1 | 2 | 3;
  /** RazonRef. */
  reason?: string;
}

export interface PrintableOtherTax {
  /** SII code (ImptoReten TipoImp), printed before the name when given. */
  code?: number;
  name: string;
  /** Rate as a decimal string ("10", "20.5"); printed as a percentage. */
  rate?: string;
  amount: Amount;
  /** A withholding (IVA retenido): printed as a deduction. */
  withholding?: boolean;
}

/** A global discount or surcharge (DscRcgGlobal). */
export interface PrintableAdjustment {
  kind: "discount" | "surcharge";
  description?: string;
  /** Printed as "10 %" when the adjustment is a percentage. */
  percent?: string;
  amount: Amount;
  /** The base it changes when not the taxed one. */
  base?: "exempt" | "nonBillable";
}

/** An amount inside a block's value: printed as the totals print money (separators, currency). */
export interface PrintableMoney {
  money: Amount;
}

/** A block's value: text as given, or text and amounts in sequence (e.g. a sub-total and its parts). */
export type PrintableFieldValue = string | (string | PrintableMoney)[];

/** Labelled values of a block (transport, customs), printed as given; amounts formatted like the totals. */
export interface PrintableBlock {
  title: string;
  fields: [string, PrintableFieldValue][];
}

/** Periodic services (MontoPeriodo or TotalPeriodo, SaldoAnterior, VlrPagar): printed under the total, the amount to pay boxed. */
export interface PrintablePeriod {
  amount?: Amount;
  previousBalance?: Amount;
  amountToPay?: Amount;
}

export interface PrintableTotals {
  /** MntNeto. Omit for exempt documents. */
  net?: Amount;
  /** MntExe. */
  exempt?: Amount;
  /** TasaIVA, e.g. "19". */
  ivaRate?: string | number;
  /** IVA. */
  iva?: Amount;
  /** Additional taxes and withholdings (ImptoReten). */
  otherTaxes?: PrintableOtherTax[];
  /** IVANoRet, GrntDep, Comisiones (43, net + exempt + IVA, deducted), MontoNF (outside the total). */
  ivaNotRetained?: Amount;
  /** IVAProp and IVATerc: the IVA split into the issuer's own and third parties'. */
  ivaOwn?: Amount;
  ivaThirdParty?: Amount;
  /** CredEC: printed as a deduction. */
  constructionCredit?: Amount;
  deposit?: Amount;
  commissions?: Amount;
  nonBillable?: Amount;
  /** OtraMoneda: the total in a second currency. */
  otherCurrency?: { name: string; rate: string; total: Amount };
  /** MntTotal. */
  total: Amount;
  /** The period's amount, the previous balance and the amount to pay (utilities, subscriptions). */
  period?: PrintablePeriod;
  /** Currency code when not CLP (exports): amounts then print with `settings.decimal_places`. */
  currency?: string;
}

export interface PrintableSettings {
  /** 0..4: decimals printed for quantities and unit prices (and foreign-currency amounts). */
  decimal_places: number;
  thousand_separator: "." | ",";
  decimal_separator: "." | ",";
  /** BCP 47; "es-CL" by default. Labels are English when it starts with "en". */
  language: string;
}

export const DEFAULT_SETTINGS: PrintableSettings = {
  decimal_places: 0,
  thousand_separator: ".",
  decimal_separator: ",",
  language: "es-CL",
};

export interface PrintableDocument {
  type: DteTypeCode;
  /** Overrides the document name in words (default DTE_TYPE_NAMES[type]). */
  typeName?: string;
  folio: number;
  /** FchEmis, YYYY-MM-DD. */
  issueDate: string;
  /** FchVenc, YYYY-MM-DD. */
  dueDate?: string;
  /** FmaPago: 1 contado, 2 crédito, 3 sin costo. */
  paymentMethod?: 1 | 2 | 3;
  /** IndTraslado of a 52 (1 = sale ... 9 = export sale). A 52 is cedible only for 1 and 9. */
  transferType?: number;
  issuer: PrintableIssuer;
  recipient: PrintableParty;
  lines: PrintableLine[];
  references?: PrintableReference[];
  totals: PrintableTotals;
  /**
   * The SII resolution authorising the issuer (NroResol, FchResol YYYY-MM-DD); null when not known
   * (a received DTE that came without its envelope's Caratula): the legend says so.
   */
  resolution: { number: number; date: string } | null;
  /** The flattened `<TED version="1.0">…</TED>` string: every char must be ISO-8859-1. */
  ted: string;
  /** Global discounts and surcharges, printed above the totals. */
  adjustments?: PrintableAdjustment[];
  /** Transport and customs data, printed under the recipient. */
  blocks?: PrintableBlock[];
  /** Free text printed under the lines (e.g. observations). */
  notes?: string;
  /** Company settings; missing fields take DEFAULT_SETTINGS. */
  settings?: Partial<PrintableSettings>;
  /** Logo, PNG or JPEG bytes. */
  logo?: Uint8Array;
  /** Boletas print the issuer's own verification URL instead of www.sii.cl. */
  verificationUrl?: string;
}

/** Types whose printed form carries the receipt box and a CEDIBLE copy (52 only when it is a sale; sii-formats.md §1.1). */
export function isCedible(doc: Pick<PrintableDocument, "type" | "transferType">): boolean {
  if (doc.type === 33 || doc.type === 34 || doc.type === 43 || doc.type === 46) return true;
  if (doc.type === 52) return doc.transferType === 1 || doc.transferType === 9;
  return false;
}

export function documentName(doc: Pick<PrintableDocument, "type" | "typeName">): string {
  return doc.typeName ?? DTE_TYPE_NAMES[doc.type];
}

export function referenceTypeName(code: string | number): string {
  const key = String(code).trim();
  return REFERENCE_TYPE_NAMES[key.toUpperCase()] ?? key;
}

/**
 * The office printed under the red box, as the caller gives it (the issuer's SII unit comes from the
 * communes catalog, src/countries/cl/catalogs/communes.ts, which the callers of the renderer read).
 */
export function issuerSiiOffice(issuer: PrintableIssuer): string | undefined {
  if (!issuer.siiOffice) return undefined;
  return issuer.siiOffice.startsWith("S.I.I.") ? issuer.siiOffice : `S.I.I. - ${issuer.siiOffice.toUpperCase()}`;
}
