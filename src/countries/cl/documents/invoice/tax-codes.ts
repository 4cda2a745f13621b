/** Tax codes and currency names of the SII that the amount engine uses. */

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

