/**
 * The printed form of a received DTE (A4, our layout, PDF417 of its own TED), built from the
 * document's XML as received: the same renderer as issued documents (src/countries/cl/printed/pdf), fed from the XML.
 */
import type { IssuerResolution } from "../../port";
import { ADDITIONAL_TAXES, CURRENCY_SII_NAMES, IVA_RATE, SPECIFIC_TAXES } from "../documents/invoice";
import { canonicalize } from "../xml/c14n";
import { childElements, childText, decodeXmlBytes, firstChild, flatten, parseXml, type XElement } from "../xml/xml";
import { DOCUMENT_TYPES } from "../documents/document-types";
import { siiOfficeLabel } from "../catalogs/communes";
import { subtotalsBlock, type PrintedExtras } from "./extras";
import { transportBlocks, type PrintedCustoms } from "./transport";
import { paymentBlocks, type PrintedOther } from "./payment";
import { lineDetail, type PrintedLineDetail } from "./lines";
import { adjustmentsOfXml } from "./received-adjustments";
import { DTE_TYPE_CODES, renderPdf, type DteTypeCode, type PrintableBlock, type PrintableDocument, type PrintableLine, type PrintableReference, type PrintableTotals } from "./pdf";

const t = (e: XElement | undefined, n: string) => (e ? childText(e, n) : undefined);
const int = (e: XElement | undefined, n: string) => {
  const v = t(e, n);
  return v !== undefined && /^-?\d+$/.test(v) ? Number(v) : undefined;
};
/** Exports' TpoMoneda (the SII's name) as the currency code the renderer prints; "OTRAS MONEDAS" as written. */
const CURRENCY_CODES = new Map(Object.entries(CURRENCY_SII_NAMES).map(([code, name]) => [name, code]));
const currencyOf = (to: XElement | undefined) => {
  const name = t(to, "TpoMoneda");
  return name === undefined ? undefined : (CURRENCY_CODES.get(name) ?? name);
};
/** An object of the values present, or undefined when none is. */
const some = <T extends object>(o: T): T | undefined => (Object.values(o).some((v) => v !== undefined) ? o : undefined);

const parts = (d: XElement, name: string, type: string, value: string) => {
  const xs = childElements(d, name).map((x) => ({ type: t(x, type) as "%" | "$", value: t(x, value) ?? "" }));
  return xs.length > 0 ? xs : undefined;
};

/** What a Detalle carries besides its amounts, as written (the detail printed under the line's name). */
function detailOfXml(d: XElement): PrintedLineDetail {
  const subs = childElements(d, "Subcantidad").map((q) => ({ qty: t(q, "SubQty") ?? "", code: t(q, "SubCod") ?? "", codeType: t(q, "TipCodSubQty") }));
  const o = firstChild(d, "OtrMnda");
  const ti = firstChild(d, "InfoTicket");
  const show = int(d, "ItemEspectaculo");
  return {
    longDescription: t(d, "DscItem"),
    subQuantities: subs.length > 0 ? subs : undefined,
    discountParts: parts(d, "SubDscto", "TipoDscto", "ValorDscto"),
    surchargeParts: parts(d, "SubRecargo", "TipoRecargo", "ValorRecargo"),
    elaborationDate: t(d, "FchElabor"),
    expiryDate: t(d, "FchVencim"),
    otherCurrency: o ? { code: t(o, "Moneda") ?? "", price: t(o, "PrcOtrMon") ?? "", factor: t(o, "FctConv"), discount: t(o, "DctoOtrMnda"), surcharge: t(o, "RecargoOtrMnda"), amount: t(o, "MontoItemOtrMnda") } : undefined,
    show: show !== undefined ? {
      kind: show,
      ticket: ti ? { folio: int(ti, "FolioTicket") ?? 0, generatedAt: t(ti, "FchGenera") ?? "", eventName: t(ti, "NmbEvento") ?? "", ticketType: t(ti, "TpoTicket") ?? "", eventCode: t(ti, "CdgEvento") ?? "", eventDate: t(ti, "FchEvento") ?? "", venue: t(ti, "LugarEvento") ?? "", section: t(ti, "UbicEvento") ?? "", row: t(ti, "FilaUbicEvento"), seat: t(ti, "AsntoUbicEvento") } : undefined,
    } : undefined,
  };
}

function lines(branch: XElement, exemptType: boolean): PrintableLine[] {
  return childElements(branch, "Detalle").map((d) => ({
    description: t(d, "NmbItem") ?? "",
    detail: lineDetail(detailOfXml(d)),
    quantity: t(d, "QtyItem"),
    unit: t(d, "UnmdItem"),
    unitPrice: t(d, "PrcItem"),
    code: (() => { const c = firstChild(d, "CdgItem"); return c && t(c, "VlrCodigo"); })(),
    discount: t(d, "DescuentoMonto"),
    discountPercent: t(d, "DescuentoPct"),
    surcharge: t(d, "RecargoMonto"),
    surchargePercent: t(d, "RecargoPct"),
    amount: t(d, "MontoItem") ?? "0",
    // Lines of an exempt type (34, 41, exports) are exempt unless IndExe says otherwise, as the engine reads them.
    exempt: t(d, "IndExe") === "1" || (t(d, "IndExe") === undefined && exemptType),
  }));
}

/** SubTotInfo as written: its glosa, the lines it adds up, its value and its parts. */
function subtotals(branch: XElement): PrintedExtras["subtotals"] {
  return childElements(branch, "SubTotInfo").map((st) => ({
    description: t(st, "GlosaSTI") ?? "",
    lines: childElements(st, "LineasDeta").map((l) => Number((l.textContent ?? "").trim())),
    value: t(st, "ValSubtotSTI") ?? "0",
    parts: { net: t(st, "SubTotNetoSTI"), iva: t(st, "SubTotIVASTI"), additional: t(st, "SubTotAdicSTI"), exempt: t(st, "SubTotExeSTI") },
  }));
}

/** The last elements of a received DTE, read from its XML as the issued path reads them from the computed document. */
export function extrasOfXml(branch: XElement): PrintedExtras {
  const enc = firstChild(branch, "Encabezado");
  const id = enc && firstChild(enc, "IdDoc");
  const em = enc && firstChild(enc, "Emisor");
  const re = enc && firstChild(enc, "Receptor");
  const to = enc && firstChild(enc, "Totales");
  const guide = em && firstChild(em, "GuiaExport");
  const foreign = re && firstChild(re, "Extranjero");
  const refs = childElements(branch, "Referencia");
  const pos = refs.find((r) => t(r, "CodVndor") !== undefined || t(r, "CodCaja") !== undefined);
  const amount = t(to, "MontoPeriodo") ?? t(to, "TotalPeriodo");
  const toPay = t(to, "VlrPagar");
  return {
    purchaseKind: int(id, "TpoTranCompra"),
    saleKind: int(id, "TpoTranVenta"),
    exportGuide: guide ? some({ transferCode: int(guide, "CdgTraslado"), authorizationNumber: int(guide, "FolioAut"), authorizationDate: t(guide, "FchAut") }) : undefined,
    issuerAdditionalId: t(em, "IdAdicEmisor"),
    additionalBranchCode: t(em, "CodAdicSucur"),
    foreign: foreign ? some({ id: t(foreign, "NumId"), nationality: t(foreign, "Nacionalidad"), additionalId: t(foreign, "IdAdicRecep") }) : undefined,
    otherIssuers: refs.filter((r) => t(r, "RUTOtr")).map((r) => ({ lineNo: int(r, "NroLinRef") ?? 0, rut: t(r, "RUTOtr")!, additionalId: t(r, "IdAdicOtr") })),
    pointOfSale: pos ? some({ sellerCode: t(pos, "CodVndor"), registerCode: t(pos, "CodCaja") }) : undefined,
    subtotals: subtotals(branch),
    period: amount !== undefined || toPay !== undefined ? { amount, previousBalance: t(to, "SaldoAnterior"), amountToPay: toPay } : undefined,
  };
}

/** Totales (and OtraMoneda) as the issued path prints them: taxes by name, withholdings and deductions marked. */
function totalsOf(branch: XElement, to: XElement | undefined, period: PrintedExtras["period"], boleta: boolean): PrintableTotals {
  const taxes = to ? childElements(to, "ImptoReten") : [];
  const com = to && firstChild(to, "Comisiones");
  const other = firstChild(firstChild(branch, "Encabezado")!, "OtraMoneda");
  const sum = (e: XElement, names: string[]) => names.reduce((a, n) => a + BigInt(int(e, n) ?? 0), 0n).toString();
  return {
    net: t(to, "MntNeto"),
    exempt: t(to, "MntExe"),
    // A boleta's Totales have no TasaIVA: its IVA is the general rate, as its issued PDF prints it.
    ivaRate: t(to, "TasaIVA") ?? (t(to, "IVA") !== undefined && boleta ? IVA_RATE.toString() : undefined),
    iva: t(to, "IVA"),
    otherTaxes: taxes.map((x) => {
      const code = t(x, "TipoImp") ?? "";
      return { code: Number(code), name: ADDITIONAL_TAXES[code]?.name ?? SPECIFIC_TAXES[code]?.name ?? `Impuesto ${code}`, rate: t(x, "TasaImp"), amount: t(x, "MontoImp") ?? "0", withholding: ADDITIONAL_TAXES[code]?.kind === "R" };
    }),
    ivaNotRetained: t(to, "IVANoRet"),
    ivaOwn: t(to, "IVAProp"),
    ivaThirdParty: t(to, "IVATerc"),
    constructionCredit: t(to, "CredEC"),
    deposit: t(to, "GrntDep"),
    commissions: com ? sum(com, ["ValComNeto", "ValComExe", "ValComIVA"]) : undefined,
    nonBillable: t(to, "MontoNF"),
    otherCurrency: other ? { name: t(other, "TpoMoneda") ?? "", rate: t(other, "TpoCambio") ?? "", total: t(other, "MntTotOtrMnda") ?? "0" } : undefined,
    total: t(to, "MntTotal") ?? "0",
    period,
    currency: currencyOf(to),
  };
}

/** Referencia lines that name a document (a boleta's point-of-sale line names none). */
function references(branch: XElement): PrintableReference[] {
  return childElements(branch, "Referencia")
    .filter((r) => t(r, "TpoDocRef") !== undefined && t(r, "FolioRef") !== undefined)
    .map((r) => {
      const code = int(r, "CodRef");
      return { typeCode: t(r, "TpoDocRef")!, folio: t(r, "FolioRef")!, date: t(r, "FchRef"), reasonCode: code === 1 || code === 2 || code === 3 ? code : undefined, reason: t(r, "RazonRef") };
    });
}

/** Transporte (plate, carrier, driver, destination), as written. */
function transportOf(tr: XElement) {
  const driver = firstChild(tr, "Chofer");
  return some({
    plate: t(tr, "Patente"),
    carrierRut: t(tr, "RUTTrans"),
    driver: driver ? { rut: t(driver, "RUTChofer") ?? "", name: t(driver, "NombreChofer") ?? "" } : undefined,
    destination: some({ address: t(tr, "DirDest"), commune: t(tr, "CmnaDest"), city: t(tr, "CiudadDest") }),
  });
}

/** Aduana, as written: codes as numbers, amounts as decimal strings. */
function customsOf(a: XElement): PrintedCustoms {
  return {
    saleModality: int(a, "CodModVenta"), saleClause: int(a, "CodClauVenta"), saleClauseTotal: t(a, "TotClauVenta"),
    transportMode: int(a, "CodViaTransp"), carrierName: t(a, "NombreTransp"),
    carrierCompanyRut: t(a, "RUTCiaTransp"), carrierCompanyName: t(a, "NomCiaTransp"), carrierCompanyAdditionalId: t(a, "IdAdicTransp"),
    booking: t(a, "Booking"), operator: t(a, "Operador"),
    portOfLoading: int(a, "CodPtoEmbarque"), portOfLoadingAdditionalId: t(a, "IdAdicPtoEmb"),
    portOfUnloading: int(a, "CodPtoDesemb"), portOfUnloadingAdditionalId: t(a, "IdAdicPtoDesemb"),
    tare: t(a, "Tara") !== undefined ? Number(t(a, "Tara")) : undefined, tareUnit: int(a, "CodUnidMedTara"),
    grossWeight: t(a, "PesoBruto"), grossWeightUnit: int(a, "CodUnidPesoBruto"),
    netWeight: t(a, "PesoNeto"), netWeightUnit: int(a, "CodUnidPesoNeto"),
    totalItems: int(a, "TotItems"), totalPackages: int(a, "TotBultos"),
    packages: childElements(a, "TipoBultos").map((b) => ({ type: int(b, "CodTpoBultos") ?? 0, quantity: int(b, "CantBultos") ?? 0, marks: t(b, "Marcas"), containerId: t(b, "IdContainer"), seal: t(b, "Sello"), sealIssuer: t(b, "EmisorSello") })),
    freight: t(a, "MntFlete"), insurance: t(a, "MntSeguro"),
    recipientCountry: int(a, "CodPaisRecep"), destinationCountry: int(a, "CodPaisDestin"),
  };
}

/** IdDoc's payment status, the principals, the requester and the other data, as written. */
export function otherOfXml(branch: XElement): PrintedOther {
  const enc = firstChild(branch, "Encabezado")!;
  const id = firstChild(enc, "IdDoc");
  const em = firstChild(enc, "Emisor");
  const re = firstChild(enc, "Receptor");
  const to = firstChild(enc, "Totales");
  const phones = em ? childElements(em, "Telefono").map((p) => (p.textContent ?? "").trim()) : [];
  const lineRuts = childElements(branch, "Detalle").map((d) => t(d, "RUTMandante"));
  return {
    settlement: some({
      means: t(id, "MedioPago"), paidDate: t(id, "FchCancel"), paidAmount: t(id, "MntCancel"), balance: t(id, "SaldoInsol"),
      account: some({ type: t(id, "TpoCtaPago"), number: t(id, "NumCtaPago"), bank: t(id, "BcoPago") }),
    }),
    principals: [...new Set([t(enc, "RUTMandante"), ...lineRuts].filter((r): r is string => r !== undefined))],
    requesterRut: t(enc, "RUTSolicita"),
    noDebitReduction: t(id, "IndNoRebaja") === "1" ? true : undefined,
    phones: phones.length > 0 ? phones : undefined,
    sellerCode: t(em, "CdgVendedor"),
    siiBranchCode: int(em, "CdgSIISucur"),
    postal: some({ address: t(re, "DirPostal"), commune: t(re, "CmnaPostal"), city: t(re, "CiudadPostal") }),
    meatBase: t(to, "MntBase"),
    marginBase: t(to, "MntMargenCom"),
  };
}

function extraBlocks(branch: XElement, enc: XElement, x: PrintedExtras): PrintableBlock[] {
  const tr = firstChild(enc, "Transporte");
  const customs = tr && firstChild(tr, "Aduana");
  return [...transportBlocks(tr && transportOf(tr), customs && customsOf(customs), int(firstChild(enc, "IdDoc"), "FmaPagExp")), ...subtotalsBlock(x), ...paymentBlocks(otherOfXml(branch), x)];
}


/**
 * The printable model of a received DTE, or null when it is not a printable DTE. `resolution`: the
 * issuer's, from the envelope the DTE came in (a DTE alone does not carry it; without it the legend
 * says the resolution was not stated).
 */
export function printableOfReceived(dte: Uint8Array, resolution?: IssuerResolution | null): PrintableDocument | null {
  const root = parseXml(decodeXmlBytes(dte), "The received DTE").documentElement as XElement;
  const branch = childElements(root).find((c) => ["Documento", "Exportaciones", "Liquidacion"].includes(c.localName ?? ""));
  const enc = branch && firstChild(branch, "Encabezado");
  const ted = branch && firstChild(branch, "TED");
  if (!branch || !enc || !ted) return null;
  const id = firstChild(enc, "IdDoc");
  const em = firstChild(enc, "Emisor");
  const re = firstChild(enc, "Receptor");
  const to = firstChild(enc, "Totales");
  const type = Number(t(id, "TipoDTE"));
  if (!DTE_TYPE_CODES.includes(type as DteTypeCode)) return null;
  const extras = extrasOfXml(branch);
  return {
    type: type as DteTypeCode,
    folio: Number(t(id, "Folio")),
    issueDate: t(id, "FchEmis") ?? "",
    dueDate: t(id, "FchVenc"),
    paymentMethod: ((f) => (f === 1 || f === 2 || f === 3 ? f : undefined))(int(id, "FmaPago")),
    issuer: { rut: t(em, "RUTEmisor") ?? "", name: t(em, "RznSoc") ?? t(em, "RznSocEmisor") ?? "", activity: t(em, "GiroEmis") ?? t(em, "GiroEmisor"), address: t(em, "DirOrigen"), comuna: t(em, "CmnaOrigen"), city: t(em, "CiudadOrigen"), siiOffice: siiOfficeLabel(t(em, "CmnaOrigen"), t(em, "CiudadOrigen")), branch: t(em, "Sucursal") },
    recipient: { rut: t(re, "RUTRecep") ?? "", name: t(re, "RznSocRecep") ?? "", activity: t(re, "GiroRecep"), address: t(re, "DirRecep"), comuna: t(re, "CmnaRecep"), city: t(re, "CiudadRecep"), email: t(re, "CorreoRecep"), phone: t(re, "Contacto") },
    transferType: int(id, "IndTraslado"),
    lines: lines(branch, DOCUMENT_TYPES[type as DteTypeCode].exempt),
    adjustments: adjustmentsOfXml(branch, DOCUMENT_TYPES[type as DteTypeCode].exempt),
    blocks: extraBlocks(branch, enc, extras),
    references: references(branch),
    totals: totalsOf(branch, to, extras.period, type === 39 || type === 41),
    // The resolution is the issuer's, printed from its envelope when the envelope is the issuer's own.
    resolution: resolution && resolution.issuerRut === t(em, "RUTEmisor") ? { number: resolution.number, date: resolution.date } : null,
    // The stamp as its FRMT was verified (ted.ts): flattened, without namespaces.
    ted: flatten(canonicalize(ted, { stripNamespaces: true })),
  };
}

export async function receivedPdf(dte: Uint8Array, resolution?: IssuerResolution | null): Promise<Uint8Array | null> {
  const doc = printableOfReceived(dte, resolution);
  return doc ? renderPdf(doc, "A4") : null;
}
