import type { CatalogSource } from "../types";

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
    document: "SII, Unidades del SII por comuna (jurisdicción de las Direcciones Regionales y Unidades)",
    date: "2024-01-01",
    complete: false,
    note:
      "343 of Chile's 346 communes, with the SII unit (office) that has jurisdiction over each, in capitals as the SII lists them. The SII's numeric commune codes are not included (not found in a public source we could check), so `code` is the commune name. `region_code` is derived from the region of the SII unit and may be wrong for the few communes served by a unit across a regional border.",
  } as CatalogSource,
  reasons: { document: `${FORMATO_DTE}, campo CodRef (1 anula, 2 corrige texto, 3 corrige montos)`, date: "2019-11-15", complete: true } as CatalogSource,
  ours: (what: string): CatalogSource => ({ document: `dte-api: ${what}`, date: "2026-11-23", complete: true }),
};
