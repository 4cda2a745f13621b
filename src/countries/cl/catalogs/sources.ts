import type { CatalogSource } from "../../catalogs/types";

/**
 * Official sources of the Chilean tables. The SII and customs publish them as PDFs and web pages;
 * the codes and names were transcribed into our JSON files (./data) and cross-checked against the
 * public transcription in the LibreDTE project's data repository (facts only, no code taken).
 */
const FORMATO_DTE = "SII, Formato Documentos Tributarios Electrónicos v2.2 (2019-11-15)";
const ADUANA_TABLAS = "Servicio Nacional de Aduanas, Compendio de Normas Aduaneras, Anexo 51 (tablas de códigos), as referenced by SII Formato DTE v2.2 §Exportaciones";

export const SRC = {
  formatoDte: (table: string): CatalogSource => ({ document: `${FORMATO_DTE}, ${table}`, date: "2019-11-15", complete: true }),
  aduana: (table: string): CatalogSource => ({ document: `${ADUANA_TABLAS}: ${table}`, date: "2019-11-15", complete: true }),
  iso3166: { document: "ISO 3166-1 (country codes), public standard data", date: "2024-01-01", complete: true } as CatalogSource,
  regions: {
    document: "Ley 21.033 (Región de Ñuble, 2017) and Ley 20.174 / 20.175 (Arica y Parinacota, Los Ríos, 2007): the 16 regions and their official numbers",
    date: "2018-09-06",
    complete: true,
  } as CatalogSource,
  communes: {
    document:
      "SUBDERE, Códigos Únicos Territoriales actualizados al 06-09-2018 (Decreto exento 817 de 2010 del Ministerio del Interior and Ley 21.033 creating Ñuble), for codes and names; SII, oficinas de atención y comunas que atiende (www.sii.cl/transparencia/oficinas_atencion.html), for the SII unit of each commune",
    date: "2018-09-06",
    complete: true,
    note:
      "All 346 communes. `code` is the State's official numeric commune code (CUT); the SII's own internal commune numbering is not published in a source we could check, so it is not included. `aliases` holds the other spellings in use (the SII's lists write e.g. COYHAIQUE, LLAY LLAY, PAIHUANO); lookups accept the code, the name or any alias, without regard to case or accents. The SII unit follows the SII's office directory as transcribed in public DTE projects (facts only); where transcriptions differ we keep the SII unit names (e.g. VIÑA DEL MAR, PROVIDENCIA, COCHRANE) and Navidad is served from SAN ANTONIO.",
  } as CatalogSource,
  activities: {
    document: "SII, Códigos de actividad económica (www.sii.cl/ayudas/ayudas_por_servicios/1956-codigos-1959.html), classification CIIU4.CL 2012 in force since 2018-11-01: code, description, Afecto a IVA (SI/NO/G), Categoría tributaria (1/2/G), Disponible Internet",
    date: "2018-11-01",
    complete: true,
    note: "674 codes, transcribed from the SII's published table as it stood in 2024. Where the SII marks G, `vat` and `tax_category` are \"depends\" (it depends on the taxpayer, not on the code alone). Two rows where the SII's page reads \"S\" under Disponible Internet are taken as SI.",
  } as CatalogSource,
  reasons: { document: `${FORMATO_DTE}, campo CodRef (1 anula, 2 corrige texto, 3 corrige montos)`, date: "2019-11-15", complete: true } as CatalogSource,
  ours: (what: string): CatalogSource => ({ document: `dte-api: ${what}`, date: "2026-11-23", complete: true }),
};
