/**
 * Tax identification document types per country (catalog "Tax Identification Documents").
 * Data only (no country's rules), so that a country's own catalogs may list theirs; the numbers
 * are checked in ./tax-id-documents.ts.
 */
export const TAX_ID_DOCUMENTS: Record<string, { code: string; name: string }[]> = {
  CHL: [{ code: "RUT", name: "Rol Único Tributario" }],
  ARG: [{ code: "CUIT", name: "Clave Única de Identificación Tributaria" }, { code: "CUIL", name: "Código Único de Identificación Laboral" }],
  PER: [{ code: "RUC", name: "Registro Único de Contribuyentes" }],
  COL: [{ code: "NIT", name: "Número de Identificación Tributaria" }],
  MEX: [{ code: "RFC", name: "Registro Federal de Contribuyentes" }],
  URY: [{ code: "RUT", name: "Registro Único Tributario" }],
};
