/** What the section builders produce: the validated document the XML and PDF are made from. */
import type { DocumentTypeInfo } from "../document-types";
import { formatScaled } from "../decimal";

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

