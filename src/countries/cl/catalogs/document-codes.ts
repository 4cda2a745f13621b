import { entriesOf, entry, type CatalogEntry } from "../../catalogs/types";
import transferKinds from "./data/dispatch-types.json";

/** IndTraslado of a guía de despacho (52): why the goods move. SII, Formato DTE v2.2. */
export const TRANSFER_KINDS: readonly CatalogEntry[] = entriesOf(transferKinds);

/** TipoDespacho (guías and export documents): who carries the goods, and where. SII, Formato DTE v2.2. */
export const DISPATCH_KINDS: readonly CatalogEntry[] = [
  entry("1", "Despacho por cuenta del receptor del documento", {}),
  entry("2", "Despacho por cuenta del emisor a instalaciones del cliente", {}),
  entry("3", "Despacho por cuenta del emisor a otras instalaciones", {}),
];

/**
 * TpoDocRef codes that are not DTE types (SII, Formato DTE v2.2, tabla de tipos de documento de
 * referencia): paper documents and other supporting documents. The DTE types themselves are in
 * `document-types`; the SII also accepts free alphanumeric codes (HES, HEM, ...) it does not validate.
 */
export const REFERENCE_TYPES: readonly CatalogEntry[] = (
  [
    ["30", "Factura (papel)", "paper"], ["32", "Factura de venta de bienes y servicios no afectos o exentos de IVA (papel)", "paper"],
    ["35", "Boleta (papel)", "paper"], ["38", "Boleta exenta (papel)", "paper"], ["40", "Liquidación factura (papel)", "paper"],
    ["45", "Factura de compra (papel)", "paper"], ["50", "Guía de despacho (papel)", "paper"], ["55", "Nota de débito (papel)", "paper"],
    ["60", "Nota de crédito (papel)", "paper"], ["103", "Liquidación", "paper"],
    ["801", "Orden de compra", "other"], ["802", "Nota de pedido", "other"], ["803", "Contrato", "other"], ["804", "Resolución", "other"],
    ["805", "Proceso ChileCompra", "other"], ["806", "Ficha ChileCompra", "other"], ["807", "DUS (Documento Único de Salida)", "other"],
    ["808", "B/L (conocimiento de embarque)", "other"], ["809", "AWB (guía aérea)", "other"], ["810", "MIC/DTA", "other"],
    ["811", "Carta de porte", "other"], ["812", "Resolución del SNA que califica servicios de exportación", "other"], ["813", "Pasaporte", "other"],
    ["814", "Certificado de depósito Bolsa de Productos de Chile", "other"], ["815", "Vale de prenda Bolsa de Productos de Chile", "other"],
    ["820", "Código de inscripción en el registro de acuerdos con plazo de pago excepcional", "other"],
  ] as const
).map(([code, name, kind]) => entry(code, name, { kind }));
