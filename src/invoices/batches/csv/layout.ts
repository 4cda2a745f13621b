/**
 * The CSV column layout of a batch, version 1 (`dte-batch-csv/1`): one line per line item; the
 * lines that share a `document_key` make one document, in the file's order. Document columns are
 * read from a document's first line (later lines leave them empty or repeat them); item columns
 * from every line. Each document becomes the body of `POST …/invoices`, checked the same way.
 * docs/batches.md describes it; `GET /api/invoice-batches/csv-template` serves a template.
 */
export const LAYOUT_V1 = "dte-batch-csv/1";

export type Kind = "text" | "number" | "date" | "datetime" | "flag";

export interface Column {
  name: string;
  /** Where the value goes in the body (a dotted path; items' columns are relative to the item). */
  path: string;
  kind: Kind;
  item?: true;
  description: string;
}

const doc = (name: string, path: string, kind: Kind, description: string): Column => ({ name, path, kind, description });
const item = (name: string, path: string, kind: Kind, description: string): Column => ({ name, path, kind, item: true, description });

export const COLUMNS: readonly Column[] = [
  doc("document_key", "", "text", "Groups lines into one document: any text, the same on every line of the document."),
  doc("invoice_type", "invoice_type", "text", "SII code or mnemonic: 33, 34, 39, 41, 46, 52, 56, 61, 110–112 (FAC, BEL, NCV, ...)."),
  doc("invoice_date", "invoice_date", "datetime", "Issue date: YYYY-MM-DD or DD-MM-YYYY (DD/MM/YYYY), optionally followed by HH:MM[:SS]."),
  doc("external_reference", "external_reference", "text", "Your own reference, unique per company (optional)."),
  doc("issuer_rut", "issuer.document_number", "text", "The company's RUT."),
  doc("issuer_legal_name", "issuer.legal_name", "text", "The company's legal name."),
  doc("issuer_activity", "issuer.tax_information.activity", "text", "Giro."),
  doc("issuer_activity_code", "issuer.tax_information.activity_codes", "number", "Acteco code (one)."),
  doc("issuer_address", "issuer.address.address", "text", "Street address."),
  doc("issuer_city", "issuer.address.city", "text", "City or commune."),
  doc("recipient_rut", "recipient.document_number", "text", "The buyer's RUT (boletas: optional)."),
  doc("recipient_legal_name", "recipient.legal_name", "text", "The buyer's legal name."),
  doc("recipient_activity", "recipient.tax_information.activity", "text", "The buyer's giro."),
  doc("recipient_address", "recipient.address.address", "text", "The buyer's street address."),
  doc("recipient_city", "recipient.address.city", "text", "The buyer's city or commune."),
  doc("payment_due_date", "payment_due_date", "date", "YYYY-MM-DD or DD-MM-YYYY (optional)."),
  doc("reason_code", "reason_code", "text", "Notes: ANU, COT or COM."),
  doc("reference_type", "billing_reference.0.invoice_type", "text", "Notes: the referenced document's type."),
  doc("reference_folio", "billing_reference.0.number", "text", "Notes: the referenced document's folio."),
  doc("reference_date", "billing_reference.0.invoice_date", "date", "Notes: the referenced document's date."),
  doc("reference_reason", "billing_reference.0.reason", "text", "Notes: why (RazonRef)."),
  item("item_description", "description", "text", "The line's description."),
  item("item_quantity", "quantity", "number", "Quantity, in the file's decimal form."),
  item("item_unit_price", "unit_price", "number", "Unit price, in the file's decimal form."),
  item("item_unit", "code_unit_of_measure", "text", "Unit code, e.g. UN, KG (optional)."),
  item("item_exempt", "taxes", "flag", "S/SI/1/X: the line is exempt (EXE); empty or N: not."),
  item("item_discount_amount", "discount_amount", "number", "The line's discount as an amount (optional)."),
];

/** The body field a column writes, for naming it in errors: `issuer.legal_name`, `items[k].unit_price`. */
export function fieldOfColumn(c: Column, itemIndex: number): string {
  const path = c.path.replace(/\.(\d+)(?=\.|$)/g, "[$1]");
  return c.item ? `items[${itemIndex}].${path}` : path;
}

/** The column that wrote a body field (the inverse of fieldOfColumn), and the item index for an item's field. */
export function columnOfField(field: string): { column: Column; item: number | null } | null {
  const m = /^items\[(\d+)\]\.([a-z_]+)/.exec(field);
  if (m) {
    const column = COLUMNS.find((c) => c.item && c.path === m[2]);
    return column ? { column, item: Number(m[1]) } : null;
  }
  const column = [...COLUMNS].filter((c) => !c.item && c.path && field.startsWith(fieldOfColumn(c, 0))).sort((a, b) => b.path.length - a.path.length)[0];
  return column ? { column, item: null } : null;
}

/** The template: the header and two documents (a boleta of two lines, a factura of one), in the separator and decimal form asked. */
export function template(separator: "," | ";", decimal: "," | "."): string {
  const n = (v: string) => (decimal === "," ? v.replace(".", ",") : v);
  const rows = [
    COLUMNS.map((c) => c.name),
    ["B-1", "39", "2026-11-27 10:30:00", "POS-0001", "76086428-5", "EMPRESA DE PRUEBA SPA", "Venta al por menor", "477399", "Av. Siempre Viva 123", "Santiago", "", "", "", "", "", "", "", "", "", "", "", "Pan amasado", n("1.5"), "1990", "KG", "N", ""],
    ["B-1", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "Diario", "1", "450", "UN", "S", ""],
    ["F-1", "33", "2026-11-27 10:30:00", "ERP-1001", "76086428-5", "EMPRESA DE PRUEBA SPA", "Venta al por menor", "477399", "Av. Siempre Viva 123", "Santiago", "77879240-0", "CLIENTE DE PRUEBA LTDA", "Comercio", "Irarrázaval 2401", "Ñuñoa", "2026-12-27", "", "", "", "", "", "Servicio mensual", "2", "15000", "UN", "N", "1000"],
  ];
  const cell = (v: string) => (v.includes(separator) || v.includes('"') ? `"${v.replace(/"/g, '""')}"` : v);
  return rows.map((r) => r.map(cell).join(separator)).join("\r\n") + "\r\n";
}
