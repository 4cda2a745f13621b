import { entry, type CatalogEntry } from "../../catalogs/types";

/**
 * Legal forms of a Chilean company (Legal Entities). Facts from the laws that create each form;
 * the code is ours (stable, upper case), the abbreviation is what follows the legal name.
 */
export const LEGAL_FORMS: readonly CatalogEntry[] = [
  entry("PN", "Persona natural", { abbreviation: null, law: "Código Civil; Código Tributario" }),
  entry("EIRL", "Empresa individual de responsabilidad limitada", { abbreviation: "E.I.R.L.", law: "Ley 19.857 (2003)" }),
  entry("LTDA", "Sociedad de responsabilidad limitada", { abbreviation: "Ltda.", law: "Ley 3.918 (1923)" }),
  entry("SA_ABIERTA", "Sociedad anónima abierta", { abbreviation: "S.A.", law: "Ley 18.046 (1981), art. 2" }),
  entry("SA_CERRADA", "Sociedad anónima cerrada", { abbreviation: "S.A.", law: "Ley 18.046 (1981), art. 2" }),
  entry("SA_ESPECIAL", "Sociedad anónima especial (bancos, aseguradoras, AFP, …)", { abbreviation: "S.A.", law: "Ley 18.046 (1981), título XIII" }),
  entry("SPA", "Sociedad por acciones", { abbreviation: "SpA", law: "Ley 20.190 (2007); Código de Comercio arts. 424-446" }),
  entry("SCC", "Sociedad colectiva comercial", { abbreviation: null, law: "Código de Comercio arts. 348-423" }),
  entry("SCS", "Sociedad en comandita simple", { abbreviation: null, law: "Código de Comercio arts. 470-491" }),
  entry("SCPA", "Sociedad en comandita por acciones", { abbreviation: null, law: "Código de Comercio arts. 492-506" }),
  entry("SCIVIL", "Sociedad civil (profesional)", { abbreviation: null, law: "Código Civil arts. 2053-2115" }),
  entry("COOP", "Cooperativa", { abbreviation: "Ltda.", law: "DFL 5 (2003), Ley General de Cooperativas" }),
  entry("CORP", "Corporación o asociación sin fines de lucro", { abbreviation: null, law: "Código Civil título XXXIII; Ley 20.500" }),
  entry("FUND", "Fundación", { abbreviation: null, law: "Código Civil título XXXIII" }),
  entry("EXT", "Agencia o establecimiento permanente de sociedad extranjera", { abbreviation: null, law: "Código de Comercio art. 447; Código Tributario" }),
  entry("COMUNIDAD", "Comunidad", { abbreviation: null, law: "Código Civil arts. 2304-2313" }),
];

/** What a company's tax profile holds (Tax Information): the fields and where they go in a DTE. */
export const TAX_PROFILE_FIELDS: readonly CatalogEntry[] = [
  entry("activity_codes", "Economic activity codes (Acteco) registered at the SII", { dte_field: "Acteco", max_occurs: 4, catalog: "legal-activities" }),
  entry("activity", "Business line (giro) as printed", { dte_field: "GiroEmis", max_length: 80 }),
  entry("resolution_number", "Number of the SII resolution authorising DTE issuance (0 in certification)", { dte_field: "NroResol" }),
  entry("resolution_date", "Date of that resolution", { dte_field: "FchResol" }),
  entry("branch_office", "SII code of the branch office (sucursal) issuing the document", { dte_field: "CdgSIISucur", max_length: 9 }),
  entry("address", "Address of the head office or branch", { dte_field: "DirOrigen", max_length: 70 }),
  entry("commune", "Commune of the address", { dte_field: "CmnaOrigen", max_length: 20, catalog: "communes" }),
  entry("exchange_email", "Exchange mailbox registered at the SII (mail de intercambio)", { dte_field: "CorreoEmisor", max_length: 80 }),
  entry("sii_office", "SII unit with jurisdiction over the company's commune (printed on the PDF)", { catalog: "sii-offices" }),
];

/** The 16 regions, with the official number and its roman numeral. */
export const REGIONS: readonly CatalogEntry[] = [
  ["1", "I", "Tarapacá"], ["2", "II", "Antofagasta"], ["3", "III", "Atacama"], ["4", "IV", "Coquimbo"],
  ["5", "V", "Valparaíso"], ["6", "VI", "Libertador General Bernardo O'Higgins"], ["7", "VII", "Maule"],
  ["8", "VIII", "Biobío"], ["9", "IX", "La Araucanía"], ["10", "X", "Los Lagos"],
  ["11", "XI", "Aysén del General Carlos Ibáñez del Campo"], ["12", "XII", "Magallanes y de la Antártica Chilena"],
  ["13", "RM", "Metropolitana de Santiago"], ["14", "XIV", "Los Ríos"], ["15", "XV", "Arica y Parinacota"], ["16", "XVI", "Ñuble"],
].map(([code, roman, name]) => entry(code!, name!, { roman: roman! }));

/**
 * Item code types (TpoCodigo, at most 10 characters in the SII schema). The SII lets an issuer name
 * its own coding; these are the standard ones. `digits` is the length of a GS1 code, whose last digit
 * is a check digit (GS1 General Specifications, modulo-10 check digit); internal codings take any text of up to 35
 * characters (VlrCodigo).
 */
export const ITEM_CODE_TYPES: readonly CatalogEntry[] = [
  entry("INT1", "Código interno del emisor", { digits: null }),
  entry("INT2", "Segundo código interno del emisor", { digits: null }),
  entry("EAN13", "GS1 EAN-13", { digits: 13 }),
  entry("EAN8", "GS1 EAN-8", { digits: 8 }),
  entry("DUN14", "GS1 DUN-14 (unidad de despacho)", { digits: 14 }),
  entry("UPC", "Universal Product Code (GS1 UPC-A)", { digits: 12 }),
  entry("PLU", "Price look-up code", { digits: null }),
];

/** A standard item code type by name, any case ("ean13" finds EAN13); undefined for an issuer's own coding. */
export function findItemCodeType(type: string): CatalogEntry | undefined {
  const t = type.trim().toUpperCase();
  return ITEM_CODE_TYPES.find((e) => e.code === t);
}
