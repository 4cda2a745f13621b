import { EngineError } from "../errors";

/**
 * SII document types the engine issues (sii-formats.md §1.1). `invoice_type` in the API accepts the
 * SII code ("33") or the mnemonic ("FAC"); the mnemonics are ours except NCV, which the spec fixes:
 *
 * | code | mnemonic | document |
 * |---|---|---|
 * | 33 | FAC | Factura electrónica |
 * | 34 | FEX | Factura no afecta o exenta electrónica |
 * | 39 | BEL | Boleta electrónica |
 * | 41 | BEX | Boleta no afecta o exenta electrónica |
 * | 43 | LFA | Liquidación-factura electrónica |
 * | 46 | FCO | Factura de compra electrónica |
 * | 52 | GDE | Guía de despacho electrónica |
 * | 56 | NDV | Nota de débito electrónica |
 * | 61 | NCV | Nota de crédito electrónica |
 * | 110 | FEE | Factura de exportación electrónica |
 * | 111 | NDE | Nota de débito de exportación electrónica |
 * | 112 | NCE | Nota de crédito de exportación electrónica |
 */
export type SiiDocumentCode = 33 | 34 | 39 | 41 | 43 | 46 | 52 | 56 | 61 | 110 | 111 | 112;

export interface DocumentTypeInfo {
  /** SII code (TipoDTE). */
  code: SiiDocumentCode;
  /** Our mnemonic, accepted in `invoice_type`. */
  mnemonic: string;
  /** Name in words as printed (capitals, Spanish). */
  name: string;
  /** Element under <DTE>. */
  xmlBranch: "Documento" | "Liquidacion" | "Exportaciones";
  /** Envelope family. */
  envelope: "EnvioDTE" | "EnvioBOLETA";
  /** CAF folios expire 6 months after FA (Caf::hasVencimiento: 33, 43, 46, 56, 61). */
  cafExpires: boolean;
  /** Printed with the "acuse de recibo" box and a CEDIBLE copy (52 only when IndTraslado is 1 or 9). */
  cedible: boolean | "sale-only";
  /** Lines are exempt unless marked otherwise (34, 41, exports). */
  exempt: boolean;
  /** Boleta: line prices are gross (IVA included), amounts computed gross-to-net. */
  boleta: boolean;
  /** Export document: amounts in foreign currency allowed. */
  export: boolean;
  /** Maximum detail lines. */
  maxLines: number;
  /** Debit or credit note (needs at least one reference with CodRef). */
  note: "credit" | "debit" | null;
  /** SII codes of documents this type may cancel (CodRef 1) or modify (CodRef 2/3). Empty = none. */
  mayModify: readonly number[];
}

const T = (t: DocumentTypeInfo) => t;

export const DOCUMENT_TYPES: Readonly<Record<SiiDocumentCode, DocumentTypeInfo>> = {
  33: T({ code: 33, mnemonic: "FAC", name: "FACTURA ELECTRÓNICA", xmlBranch: "Documento", envelope: "EnvioDTE", cafExpires: true, cedible: true, exempt: false, boleta: false, export: false, maxLines: 60, note: null, mayModify: [] }),
  34: T({ code: 34, mnemonic: "FEX", name: "FACTURA NO AFECTA O EXENTA ELECTRÓNICA", xmlBranch: "Documento", envelope: "EnvioDTE", cafExpires: false, cedible: true, exempt: true, boleta: false, export: false, maxLines: 60, note: null, mayModify: [] }),
  39: T({ code: 39, mnemonic: "BEL", name: "BOLETA ELECTRÓNICA", xmlBranch: "Documento", envelope: "EnvioBOLETA", cafExpires: false, cedible: false, exempt: false, boleta: true, export: false, maxLines: 1000, note: null, mayModify: [] }),
  41: T({ code: 41, mnemonic: "BEX", name: "BOLETA NO AFECTA O EXENTA ELECTRÓNICA", xmlBranch: "Documento", envelope: "EnvioBOLETA", cafExpires: false, cedible: false, exempt: true, boleta: true, export: false, maxLines: 1000, note: null, mayModify: [] }),
  43: T({ code: 43, mnemonic: "LFA", name: "LIQUIDACIÓN FACTURA ELECTRÓNICA", xmlBranch: "Liquidacion", envelope: "EnvioDTE", cafExpires: true, cedible: true, exempt: false, boleta: false, export: false, maxLines: 60, note: null, mayModify: [] }),
  46: T({ code: 46, mnemonic: "FCO", name: "FACTURA DE COMPRA ELECTRÓNICA", xmlBranch: "Documento", envelope: "EnvioDTE", cafExpires: true, cedible: true, exempt: false, boleta: false, export: false, maxLines: 60, note: null, mayModify: [] }),
  52: T({ code: 52, mnemonic: "GDE", name: "GUÍA DE DESPACHO ELECTRÓNICA", xmlBranch: "Documento", envelope: "EnvioDTE", cafExpires: false, cedible: "sale-only", exempt: false, boleta: false, export: false, maxLines: 60, note: null, mayModify: [] }),
  56: T({ code: 56, mnemonic: "NDV", name: "NOTA DE DÉBITO ELECTRÓNICA", xmlBranch: "Documento", envelope: "EnvioDTE", cafExpires: true, cedible: false, exempt: false, boleta: false, export: false, maxLines: 60, note: "debit", mayModify: [33, 34, 43, 46, 56, 61, 30, 32, 45, 55, 60] }),
  61: T({ code: 61, mnemonic: "NCV", name: "NOTA DE CRÉDITO ELECTRÓNICA", xmlBranch: "Documento", envelope: "EnvioDTE", cafExpires: true, cedible: false, exempt: false, boleta: false, export: false, maxLines: 60, note: "credit", mayModify: [33, 34, 39, 41, 43, 46, 56, 61, 30, 32, 35, 38, 40, 45, 55, 60] }),
  110: T({ code: 110, mnemonic: "FEE", name: "FACTURA DE EXPORTACIÓN ELECTRÓNICA", xmlBranch: "Exportaciones", envelope: "EnvioDTE", cafExpires: false, cedible: false, exempt: true, boleta: false, export: true, maxLines: 60, note: null, mayModify: [] }),
  111: T({ code: 111, mnemonic: "NDE", name: "NOTA DE DÉBITO DE EXPORTACIÓN ELECTRÓNICA", xmlBranch: "Exportaciones", envelope: "EnvioDTE", cafExpires: false, cedible: false, exempt: true, boleta: false, export: true, maxLines: 60, note: "debit", mayModify: [110, 111, 112] }),
  112: T({ code: 112, mnemonic: "NCE", name: "NOTA DE CRÉDITO DE EXPORTACIÓN ELECTRÓNICA", xmlBranch: "Exportaciones", envelope: "EnvioDTE", cafExpires: false, cedible: false, exempt: true, boleta: false, export: true, maxLines: 60, note: "credit", mayModify: [110, 111, 112] }),
};

export const DOCUMENT_TYPE_CODES = Object.keys(DOCUMENT_TYPES).map(Number) as SiiDocumentCode[];

const BY_MNEMONIC = new Map(Object.values(DOCUMENT_TYPES).map((t) => [t.mnemonic, t] as const));

/**
 * CAF folios of these SII codes expire 6 calendar months after FA (the one list; the table's
 * `cafExpires` follows it).
 */
export const EXPIRING_CAF_TYPES: readonly number[] = DOCUMENT_TYPE_CODES.filter((c) => DOCUMENT_TYPES[c].cafExpires).sort((a, b) => a - b);

/**
 * Resolves `invoice_type`: an SII code ("33", 33) or a mnemonic ("FAC", "ncv"; case-insensitive).
 * Throws DOCUMENT_TYPE_UNKNOWN.
 */
export function resolveDocumentType(input: string | number, field = "invoice_type"): DocumentTypeInfo {
  const s = String(input).trim();
  if (/^\d{1,3}$/.test(s)) {
    const t = (DOCUMENT_TYPES as Record<number, DocumentTypeInfo | undefined>)[Number(s)];
    if (t) return t;
  } else {
    const t = BY_MNEMONIC.get(s.toUpperCase());
    if (t) return t;
  }
  throw new EngineError("DOCUMENT_TYPE_UNKNOWN", unknownDocumentType(s), { field });
}

/** The answer to a document type that is none of ours, naming the codes and mnemonics that are. */
export function unknownDocumentType(input: string): string {
  return `Unknown document type "${input}"; use an SII code (${DOCUMENT_TYPE_CODES.join(", ")}) or a mnemonic (${[...BY_MNEMONIC.keys()].join(", ")})`;
}

/** Same as resolveDocumentType but returns undefined instead of throwing. */
export function findDocumentType(input: string | number): DocumentTypeInfo | undefined {
  try {
    return resolveDocumentType(input);
  } catch {
    return undefined;
  }
}

/**
 * Reference document types (TpoDocRef) accepted in billing_reference: our types by code or mnemonic,
 * the SII paper codes, 43 and the 8xx family (sii-formats.md §1.1). Returns the SII code as string.
 */
export function resolveReferenceType(input: string | number, field: string): string {
  const s = String(input).trim();
  const t = findDocumentType(s);
  if (t) return String(t.code);
  if (/^(30|32|35|38|40|43|45|50|55|60|103|8\d\d)$/.test(s)) return s;
  // Free alphanumeric codes (HES, HEM, SET, ...) are allowed by the SII, up to 3 characters.
  if (/^[A-Z0-9]{1,3}$/.test(s) && !/^\d+$/.test(s)) return s;
  throw new EngineError("REFERENCE_INVALID", `Reference type "${s}" is not a document type`, { field });
}

/** Cancellation / modification reasons (`reason_code`) and their SII CodRef. */
export const REASON_CODES = {
  /** Anula documento de referencia. */
  ANU: 1,
  /** Corrige texto del documento de referencia. */
  COT: 2,
  /** Corrige montos. */
  COM: 3,
} as const;
export type ReasonCode = keyof typeof REASON_CODES;

export function resolveReasonCode(input: string, field = "reason_code"): { reason: ReasonCode; codRef: 1 | 2 | 3 } {
  const s = input.trim().toUpperCase();
  if (s in REASON_CODES) return { reason: s as ReasonCode, codRef: REASON_CODES[s as ReasonCode] };
  if (s === "1" || s === "2" || s === "3") {
    const codRef = Number(s) as 1 | 2 | 3;
    const reason = (Object.keys(REASON_CODES) as ReasonCode[]).find((k) => REASON_CODES[k] === codRef)!;
    return { reason, codRef };
  }
  throw new EngineError("REASON_CODE_UNKNOWN", `Unknown reason_code "${input}"; use ANU (cancel), COT (correct text) or COM (correct amounts)`, { field });
}

/** The signed branches of a DTE, one per family (sii-formats.md §1): Documento, Exportaciones, Liquidacion. */
export const BRANCH_NAMES: readonly string[] = ["Documento", "Exportaciones", "Liquidacion"];
