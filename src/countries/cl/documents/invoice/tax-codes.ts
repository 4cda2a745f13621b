/**
 * Tax codes and currency names of the SII that the amount engine uses.
 *
 * Additional taxes and withholdings: SII, Formato de Documentos Tributarios Electrónicos v2.2,
 * "Tabla de códigos de impuestos adicionales y retenciones" (codes with an ad-valorem rate here; the
 * specific taxes 28/35 on fuel, whose amount is not a rate of the line, in SPECIFIC_TAXES below), as listed
 * in the tax-types catalog (src/countries/cl/catalogs/data/additional-taxes.json, 2026). kind A adds
 * to the total; kind R is IVA the issuer withholds (15 the whole IVA, the others a part of it).
 */

export interface AdditionalTax {
  rate: string;
  kind: "A" | "R";
  name: string;
}

export const ADDITIONAL_TAXES: Readonly<Record<string, AdditionalTax>> = {
  "15": { rate: "19", kind: "R", name: "IVA retenido total" },
  "17": { rate: "5", kind: "A", name: "IVA anticipado faenamiento carne" },
  "18": { rate: "5", kind: "A", name: "IVA anticipado carne" },
  "19": { rate: "12", kind: "A", name: "IVA anticipado harina" },
  "23": { rate: "15", kind: "A", name: "Impuesto adicional art. 37 letras a, b, c" },
  "24": { rate: "31.5", kind: "A", name: "Licores, piscos, whisky y destilados" },
  "25": { rate: "20.5", kind: "A", name: "Vinos" },
  "26": { rate: "20.5", kind: "A", name: "Cervezas y bebidas alcohólicas" },
  "27": { rate: "10", kind: "A", name: "Bebidas analcohólicas y minerales" },
  "30": { rate: "10", kind: "R", name: "IVA retenido legumbres" },
  "31": { rate: "19", kind: "R", name: "IVA retenido silvestres" },
  "32": { rate: "8", kind: "R", name: "IVA retenido ganado" },
  "33": { rate: "8", kind: "R", name: "IVA retenido madera" },
  "34": { rate: "4", kind: "R", name: "IVA retenido trigo" },
  "36": { rate: "10", kind: "R", name: "IVA retenido arroz" },
  "37": { rate: "10", kind: "R", name: "IVA retenido hidrobiológicas" },
  "38": { rate: "19", kind: "R", name: "IVA retenido chatarra" },
  "39": { rate: "19", kind: "R", name: "IVA retenido PPA" },
  "41": { rate: "19", kind: "R", name: "IVA retenido construcción" },
  "44": { rate: "15", kind: "A", name: "Impuesto adicional art. 37 letras e, h, i, l" },
  "45": { rate: "50", kind: "A", name: "Impuesto adicional art. 37 letra j" },
  "47": { rate: "19", kind: "R", name: "IVA retenido cartones" },
  "48": { rate: "14", kind: "R", name: "IVA retenido frambuesas y pasas" },
  "271": { rate: "18", kind: "A", name: "Bebidas analcohólicas con alto contenido de azúcar" },
};

/**
 * Specific fuel taxes (Formato DTE v2.2, code table: 28 "Impuesto específico diesel", 35 "Impuesto
 * específico gasolinas"; DL 18.502): their amount is a sum per cubic metre that the SII publishes
 * weekly, not a percentage of the line, so the client sends it (or the volume and the sum per m³).
 * They add to MntTotal like kind A, are outside the IVA base, written in ImptoReten without TasaImp,
 * and never count as IVA withheld (IVANoRet is unchanged by them).
 */
export const SPECIFIC_TAXES: Readonly<Record<string, { name: string }>> = {
  "28": { name: "Impuesto específico diesel" },
  "35": { name: "Impuesto específico gasolinas" },
};

/** Document types that may carry additional taxes (A) and partial withholdings (R). */
export const ADDITIONAL_TAX_TYPES: readonly number[] = [33, 43, 46, 52, 56, 61];
/** Code 15 (the whole IVA withheld) belongs to facturas de compra and the notes that modify them. */
export const TOTAL_RETENTION_TYPES: readonly number[] = [46, 56, 61];
/** Meat taxes whose base is the slaughter base (MntBaseFaena) when the line carries one. */
export const SLAUGHTER_BASE_TAXES: readonly string[] = ["17", "18"];

export const IVA_RATE = 19n;
/** Rates are kept scaled by 10^RATE_SCALE. */
export const RATE_SCALE = 2;
/** Quantities and unit prices are kept scaled by 10^QTY_SCALE. */
export const QTY_SCALE = 6;

/** ISO 4217 -> SII customs currency name (TipMonType) for export documents. */
export const CURRENCY_SII_NAMES: Readonly<Record<string, string>> = {
  CLP: "PESO CL", USD: "DOLAR USA", EUR: "EURO", GBP: "LIBRA EST", CAD: "DOLAR CAN", AUD: "DOLAR AUST",
  NZD: "DOLAR NZ", HKD: "DOLAR HK", SGD: "DOLAR SIN", TWD: "DOLAR TAI", JPY: "YEN", CNY: "RENMINBI",
  CHF: "FRANCO SZ", SEK: "CORONA SC", NOK: "CORONA NOR", DKK: "CORONA DIN", MXN: "PESO MEX",
  COP: "PESO COL", UYU: "PESO URUG", PEN: "NUEVO SOL", BOB: "BOLIVIANO", PYG: "GUARANI", ZAR: "RAND",
  INR: "RUPIA", AED: "DIRHAM", VES: "BOLIVAR", ARS: "PESO",
};
