/**
 * The body of the DTE, one writer per section, in the order of the official schemas: DTE_v10.xsd
 * (Documento, Liquidacion, Exportaciones) and EnvioBOLETA_v11.xsd (boletas). Each family has its own
 * subset of elements; a writer leaves out what its family's schema does not have.
 */
import { formatScaled } from "./decimal";
import { type ComputedDocument, type ComputedLine, formatAmount } from "./invoice";
import { OTHER_SCALE } from "./invoice/line-extras";
import { el, leaf, type XmlEl } from "../xml/xml";

type Family = "Documento" | "Liquidacion" | "Exportaciones" | "Boleta";

export function familyOf(d: ComputedDocument): Family {
  return d.type.boleta ? "Boleta" : d.type.xmlBranch;
}

const amt = (d: ComputedDocument, v: bigint | undefined) => (v === undefined ? undefined : formatAmount(d, v));

export function idDoc(d: ComputedDocument, folio: number): XmlEl {
  const f = familyOf(d);
  const t = d.type;
  const period = [leaf("PeriodoDesde", d.servicePeriod?.from), leaf("PeriodoHasta", d.servicePeriod?.to)];
  if (f === "Boleta") {
    return el("IdDoc", null, leaf("TipoDTE", t.code), leaf("Folio", folio), leaf("FchEmis", d.issueDate), leaf("IndServicio", d.serviceIndicator ?? 3), d.netAmounts ? leaf("IndMntNeto", 2) : null, period, leaf("FchVenc", d.dueDate));
  }
  const terms = d.paymentTerms;
  const s = d.settlement;
  return el(
    "IdDoc",
    null,
    leaf("TipoDTE", t.code),
    leaf("Folio", folio),
    leaf("FchEmis", d.issueDate),
    f === "Documento" && d.noDebitReduction ? leaf("IndNoRebaja", 1) : null,
    f !== "Liquidacion" ? leaf("TipoDespacho", d.dispatchKind) : null,
    f === "Documento" ? [leaf("IndTraslado", d.transferKind), leaf("TpoImpresion", d.printFormat)] : null,
    leaf("IndServicio", d.serviceIndicator),
    f !== "Exportaciones" && d.grossPrices ? leaf("MntBruto", 1) : null,
    f !== "Exportaciones" ? [leaf("TpoTranCompra", d.purchaseKind), leaf("TpoTranVenta", d.saleKind)] : null,
    leaf("FmaPago", d.paymentForm),
    f !== "Liquidacion" ? leaf("FmaPagExp", d.exportPaymentForm) : null,
    leaf("FchCancel", s?.paidDate),
    leaf("MntCancel", s?.paidAmount),
    leaf("SaldoInsol", s?.balance),
    d.payments.map((p) => el("MntPagos", null, leaf("FchPago", p.date), leaf("MntPago", amt(d, p.amount)), leaf("GlosaPagos", p.description))),
    period,
    leaf("MedioPago", s?.means),
    leaf("TpoCtaPago", s?.account?.type),
    leaf("NumCtaPago", s?.account?.number),
    leaf("BcoPago", s?.account?.bank),
    leaf("TermPagoCdg", terms?.code),
    leaf("TermPagoGlosa", terms?.description),
    leaf("TermPagoDias", terms?.days),
    leaf("FchVenc", d.dueDate),
  );
}

export function emisor(d: ComputedDocument): XmlEl {
  const e = d.issuer;
  if (d.type.boleta) {
    return el("Emisor", null, leaf("RUTEmisor", e.rut), leaf("RznSocEmisor", e.legalName), leaf("GiroEmisor", e.activity), leaf("CdgSIISucur", e.siiBranchCode), leaf("DirOrigen", e.address), leaf("CmnaOrigen", e.commune), leaf("CiudadOrigen", e.city));
  }
  return el(
    "Emisor",
    null,
    leaf("RUTEmisor", e.rut),
    leaf("RznSoc", e.legalName),
    leaf("GiroEmis", e.activity),
    (e.phones ?? []).map((t) => leaf("Telefono", t)),
    leaf("CorreoEmisor", e.email),
    e.activityCodes.map((c) => leaf("Acteco", c)),
    e.exportGuide ? el("GuiaExport", null, leaf("CdgTraslado", e.exportGuide.transferCode), leaf("FolioAut", e.exportGuide.authorizationNumber), leaf("FchAut", e.exportGuide.authorizationDate)) : null,
    d.branchOffice !== undefined ? leaf("Sucursal", String(d.branchOffice).slice(0, 20)) : null,
    leaf("CdgSIISucur", e.siiBranchCode),
    leaf("CodAdicSucur", e.additionalBranchCode),
    leaf("DirOrigen", e.address),
    leaf("CmnaOrigen", e.commune),
    leaf("CiudadOrigen", e.city),
    leaf("CdgVendedor", e.sellerCode),
    leaf("IdAdicEmisor", e.additionalId),
  );
}

export function receptor(d: ComputedDocument): XmlEl {
  const r = d.receiver;
  const f = familyOf(d);
  const place = [leaf("DirRecep", r.address), leaf("CmnaRecep", r.commune), leaf("CiudadRecep", r.city), leaf("DirPostal", r.postal?.address), leaf("CmnaPostal", r.postal?.commune), leaf("CiudadPostal", r.postal?.city)];
  if (f === "Boleta") {
    return el("Receptor", null, leaf("RUTRecep", r.rut), leaf("CdgIntRecep", r.internalCode), leaf("RznSocRecep", r.legalName), leaf("Contacto", r.contact), place);
  }
  const foreign = f !== "Liquidacion" && (r.foreignId || r.nationality || r.additionalId) ? el("Extranjero", null, leaf("NumId", r.foreignId?.slice(0, 20)), leaf("Nacionalidad", r.nationality), f === "Exportaciones" ? leaf("IdAdicRecep", r.additionalId) : null) : null;
  return el(
    "Receptor",
    null,
    leaf("RUTRecep", r.rut),
    leaf("CdgIntRecep", r.internalCode),
    leaf("RznSocRecep", r.legalName),
    foreign,
    leaf("GiroRecep", r.activity),
    leaf("Contacto", r.contact),
    leaf("CorreoRecep", r.email),
    place,
  );
}

function aduana(d: ComputedDocument): XmlEl | null {
  const c = d.customs;
  if (!c) return null;
  const a = (v: bigint | undefined) => amt(d, v);
  return el(
    "Aduana",
    null,
    leaf("CodModVenta", c.saleModality),
    leaf("CodClauVenta", c.saleClause),
    leaf("TotClauVenta", a(c.saleClauseTotal)),
    leaf("CodViaTransp", c.transportMode),
    leaf("NombreTransp", c.carrierName),
    leaf("RUTCiaTransp", c.carrierCompanyRut),
    leaf("NomCiaTransp", c.carrierCompanyName),
    leaf("IdAdicTransp", c.carrierCompanyAdditionalId),
    leaf("Booking", c.booking),
    leaf("Operador", c.operator),
    leaf("CodPtoEmbarque", c.portOfLoading),
    leaf("IdAdicPtoEmb", c.portOfLoadingAdditionalId),
    leaf("CodPtoDesemb", c.portOfUnloading),
    leaf("IdAdicPtoDesemb", c.portOfUnloadingAdditionalId),
    leaf("Tara", c.tare),
    leaf("CodUnidMedTara", c.tareUnit),
    leaf("PesoBruto", c.grossWeight),
    leaf("CodUnidPesoBruto", c.grossWeightUnit),
    leaf("PesoNeto", c.netWeight),
    leaf("CodUnidPesoNeto", c.netWeightUnit),
    leaf("TotItems", c.totalItems),
    leaf("TotBultos", c.totalPackages),
    c.packages.map((p) => el("TipoBultos", null, leaf("CodTpoBultos", p.type), leaf("CantBultos", p.quantity), leaf("Marcas", p.marks), leaf("IdContainer", p.containerId), leaf("Sello", p.seal), leaf("EmisorSello", p.sealIssuer))),
    leaf("MntFlete", a(c.freight)),
    leaf("MntSeguro", a(c.insurance)),
    leaf("CodPaisRecep", c.recipientCountry),
    leaf("CodPaisDestin", c.destinationCountry),
  );
}

export function transporte(d: ComputedDocument): XmlEl | null {
  const t = d.transport;
  if (!t && !d.customs) return null;
  return el(
    "Transporte",
    null,
    leaf("Patente", t?.plate),
    leaf("RUTTrans", t?.carrierRut),
    t?.driver ? el("Chofer", null, leaf("RUTChofer", t.driver.rut), leaf("NombreChofer", t.driver.name)) : null,
    leaf("DirDest", t?.destination?.address),
    leaf("CmnaDest", t?.destination?.commune),
    leaf("CiudadDest", t?.destination?.city),
    aduana(d),
  );
}

export function totales(d: ComputedDocument): XmlEl {
  const t = d.totals;
  const a = (v: bigint | undefined) => amt(d, v);
  const f = familyOf(d);
  if (f === "Exportaciones") return el("Totales", null, leaf("TpoMoneda", d.currency.siiName), leaf("MntExe", a(t.exempt ?? 0n)), leaf("MntTotal", a(t.total)));
  const p = d.periodTotals;
  const period = p ? [leaf(f === "Boleta" ? "TotalPeriodo" : "MontoPeriodo", p.periodAmount), leaf("SaldoAnterior", p.previousBalance), leaf("VlrPagar", p.amountToPay)] : null;
  if (f === "Boleta") return el("Totales", null, leaf("MntNeto", a(t.net)), leaf("MntExe", a(t.exempt)), leaf("IVA", a(t.iva)), leaf("MntTotal", a(t.total)), leaf("MontoNF", a(t.nonBillable)), period);
  const c = t.commissions;
  return el(
    "Totales",
    null,
    leaf("MntNeto", a(t.net)),
    leaf("MntExe", a(t.exempt)),
    f === "Documento" ? [leaf("MntBase", a(t.meatBase)), leaf("MntMargenCom", a(t.marginBase))] : null,
    leaf("TasaIVA", t.ivaRate),
    leaf("IVA", a(t.iva)),
    leaf("IVAProp", a(t.ivaOwn)),
    leaf("IVATerc", a(t.ivaThirdParty)),
    t.additional.map((x) => el("ImptoReten", null, leaf("TipoImp", x.type), leaf("TasaImp", x.rate), leaf("MontoImp", a(x.amount)))),
    f === "Documento" ? [leaf("IVANoRet", a(t.ivaNotRetained)), leaf("CredEC", a(t.constructionCredit)), t.deposit ? leaf("GrntDep", a(t.deposit)) : null] : null,
    c ? el("Comisiones", null, leaf("ValComNeto", a(c.net)), leaf("ValComExe", a(c.exempt)), leaf("ValComIVA", a(c.iva))) : null,
    leaf("MntTotal", a(t.total)),
    f === "Documento" ? leaf("MontoNF", a(t.nonBillable)) : null,
    period,
  );
}

export function otraMoneda(d: ComputedDocument): XmlEl | null {
  const o = d.otherCurrency;
  if (!o) return null;
  const v = (x: bigint | undefined) => (x === undefined ? undefined : formatScaled(x, o.scale));
  if (familyOf(d) === "Exportaciones") return el("OtraMoneda", null, leaf("TpoMoneda", o.siiName), leaf("TpoCambio", o.rate), leaf("MntExeOtrMnda", v(o.exempt)), leaf("MntTotOtrMnda", v(o.total)));
  return el(
    "OtraMoneda",
    null,
    leaf("TpoMoneda", o.siiName),
    leaf("TpoCambio", o.rate),
    leaf("MntNetoOtrMnda", v(o.net)),
    o.exempt > 0n ? leaf("MntExeOtrMnda", v(o.exempt)) : null,
    leaf("MntFaeCarneOtrMnda", v(o.meatBase)),
    leaf("MntMargComOtrMnda", v(o.marginBase)),
    leaf("IVAOtrMnda", v(o.iva)),
    (o.taxes ?? []).map((x) => el("ImpRetOtrMnda", null, leaf("TipoImpOtrMnda", x.type), leaf("TasaImpOtrMnda", x.rate), leaf("VlrImpOtrMnda", v(x.amount)))),
    leaf("IVANoRetOtrMnda", v(o.ivaNotRetained)),
    leaf("MntTotOtrMnda", v(o.total)),
  );
}

/** Subcantidad, FchElabor, FchVencim (not in EnvioBOLETA's Detalle). */
function lineDetails(l: ComputedLine, f: Family): (XmlEl | null)[] {
  if (f === "Boleta") return [];
  return [
    ...(l.subQuantities ?? []).map((q) => el("Subcantidad", null, leaf("SubQty", q.qty), leaf("SubCod", q.code), f === "Exportaciones" ? leaf("TipCodSubQty", q.codeType) : null)),
    leaf("FchElabor", l.elaborationDate),
    leaf("FchVencim", l.expiryDate),
  ];
}

function otrMnda(l: ComputedLine): XmlEl | null {
  const o = l.otherCurrency;
  if (!o) return null;
  const v = (x: bigint | undefined) => (x === undefined ? undefined : formatScaled(x, OTHER_SCALE));
  return el("OtrMnda", null, leaf("PrcOtrMon", o.price), leaf("Moneda", o.code), leaf("FctConv", o.factor), leaf("DctoOtrMnda", v(o.discount)), leaf("RecargoOtrMnda", v(o.surcharge)), leaf("MontoItemOtrMnda", v(o.amount)));
}

function infoTicket(l: ComputedLine): XmlEl | null {
  const t = l.show?.ticket;
  if (!t) return null;
  return el(
    "InfoTicket",
    null,
    leaf("FolioTicket", t.folio),
    leaf("FchGenera", t.generatedAt),
    leaf("NmbEvento", t.eventName),
    leaf("TpoTicket", t.ticketType),
    leaf("CdgEvento", t.eventCode),
    leaf("FchEvento", t.eventDate),
    leaf("LugarEvento", t.venue),
    leaf("UbicEvento", t.section),
    leaf("FilaUbicEvento", t.row),
    leaf("AsntoUbicEvento", t.seat),
  );
}

function retenedor(l: ComputedLine, d: ComputedDocument): XmlEl | null {
  const r = l.retainer;
  if (!r) return null;
  return el("Retenedor", null, leaf("IndAgente", "R"), leaf("MntBaseFaena", amt(d, r.baseAmount)), leaf("MntMargComer", amt(d, r.margin)), leaf("PrcConsFinal", amt(d, r.finalPrice)));
}

function detalleLine(d: ComputedDocument, l: ComputedLine): XmlEl {
  const f = familyOf(d);
  const adjustments = f === "Liquidacion" ? null : [
    leaf("DescuentoPct", l.discountPct),
    l.discount > 0n ? leaf("DescuentoMonto", amt(d, l.discount)) : null,
    ...(f !== "Boleta" ? (l.discountParts ?? []).map((x) => el("SubDscto", null, leaf("TipoDscto", x.type), leaf("ValorDscto", x.value))) : []),
    leaf("RecargoPct", l.surchargePct),
    l.surcharge > 0n ? leaf("RecargoMonto", amt(d, l.surcharge)) : null,
    ...(f !== "Boleta" ? (l.surchargeParts ?? []).map((x) => el("SubRecargo", null, leaf("TipoRecargo", x.type), leaf("ValorRecargo", x.value))) : []),
  ];
  return el(
    "Detalle",
    null,
    leaf("NroLinDet", l.lineNo),
    l.codes.map((c) => el("CdgItem", null, leaf("TpoCodigo", c.type), leaf("VlrCodigo", c.value))),
    f === "Liquidacion" ? leaf("TpoDocLiq", l.settledType) : null,
    leaf("IndExe", l.indicator),
    f === "Documento" ? retenedor(l, d) : null,
    f === "Boleta" && l.show ? leaf("ItemEspectaculo", `0${l.show.kind}`) : null,
    f === "Boleta" ? leaf("RUTMandante", l.principalRut) : null,
    leaf("NmbItem", l.name),
    f === "Boleta" ? infoTicket(l) : null,
    leaf("DscItem", l.longDescription),
    f !== "Boleta" ? [leaf("QtyRef", l.refQty), leaf("UnmdRef", l.refUnit), leaf("PrcRef", l.refPrice)] : null,
    leaf("QtyItem", l.qty),
    lineDetails(l, f),
    leaf("UnmdItem", l.unit),
    leaf("PrcItem", l.price),
    f === "Documento" || f === "Exportaciones" ? otrMnda(l) : null,
    adjustments,
    f === "Documento" || f === "Liquidacion" ? l.additionalTaxCodes.map((c) => leaf("CodImpAdic", c)) : null,
    leaf("MontoItem", amt(d, l.amount)),
  );
}

export function detalle(d: ComputedDocument): XmlEl[] {
  return d.lines.map((l) => detalleLine(d, l));
}

/** The schema's Dec16_2 amounts of SubTotInfo start at 0.01: a zero part is left out. */
const positive = (d: ComputedDocument, v: bigint, name: string) => (v > 0n ? leaf(name, amt(d, v)) : null);

export function subTotInfo(d: ComputedDocument): XmlEl[] {
  return d.subtotals.map((s) =>
    el(
      "SubTotInfo",
      null,
      leaf("NroSTI", s.no),
      leaf("GlosaSTI", s.description),
      leaf("OrdenSTI", s.order),
      s.breakdown ? (["SubTotNetoSTI", "SubTotIVASTI", "SubTotAdicSTI", "SubTotExeSTI"] as const).map((n, i) => positive(d, [s.breakdown!.net, s.breakdown!.iva, s.breakdown!.additional, s.breakdown!.exempt][i]!, n)) : null,
      positive(d, s.value, "ValSubtotSTI"),
      s.lines.map((n) => leaf("LineasDeta", n)),
    ),
  );
}

export function dscRcgGlobal(d: ComputedDocument): XmlEl[] {
  const f = familyOf(d);
  return d.adjustments.map((a) => el("DscRcgGlobal", null, leaf("NroLinDR", a.lineNo), leaf("TpoMov", a.kind), leaf("GlosaDR", a.description), leaf("TpoValor", a.valueType), leaf("ValorDR", a.value), f !== "Boleta" && d.otherCurrency && a.otherValue !== undefined ? leaf("ValorDROtrMnda", formatScaled(a.otherValue, d.otherCurrency.scale)) : null, leaf("IndExeDR", a.base)));
}

export function referencias(d: ComputedDocument): XmlEl[] {
  const f = familyOf(d);
  const pos = d.pointOfSale;
  const posLine = f === "Boleta" && pos ? [el("Referencia", null, leaf("NroLinRef", d.references.length + 1), leaf("CodVndor", pos.sellerCode), leaf("CodCaja", pos.registerCode))] : [];
  return [...d.references.map((r) =>
    f === "Boleta"
      ? el("Referencia", null, leaf("NroLinRef", r.lineNo), leaf("TpoDocRef", r.type), leaf("FolioRef", r.folio), leaf("CodRef", r.codRef), leaf("RazonRef", r.reason?.slice(0, 90)))
      : el(
          "Referencia",
          null,
          leaf("NroLinRef", r.lineNo),
          leaf("TpoDocRef", r.type),
          r.global ? leaf("IndGlobal", 1) : null,
          leaf("FolioRef", r.folio),
          f !== "Liquidacion" ? leaf("RUTOtr", r.otherIssuer) : null,
          f === "Exportaciones" ? leaf("IdAdicOtr", r.otherIssuerAdditionalId) : null,
          leaf("FchRef", r.date),
          leaf("CodRef", r.codRef),
          leaf("RazonRef", r.reason),
        ),
  ), ...posLine];
}

export function comisiones(d: ComputedDocument): XmlEl[] {
  return d.commissions.map((c) =>
    el("Comisiones", null, leaf("NroLinCom", c.lineNo), leaf("TipoMovim", c.kind), leaf("Glosa", c.description), leaf("TasaComision", c.rate), leaf("ValComNeto", amt(d, c.net)), leaf("ValComExe", amt(d, c.exempt)), leaf("ValComIVA", amt(d, c.iva))),
  );
}
