/** What the section builders produce: the validated document the XML and PDF are made from. */
import type { DocumentTypeInfo } from "../document-types";
import { formatScaled } from "../decimal";

export interface Party {
  rut: string;
  legalName: string;
  activity?: string;
  activityCodes: number[];
  address?: string;
  commune?: string;
  city?: string;
  email?: string;
  /** Recipient: Contacto, CdgIntRecep. */
  contact?: string;
  internalCode?: string;
  /** Foreign id of an export recipient whose RUT is 55555555-5. */
  foreignId?: string;
  /** Export recipient's nationality (customs country code). */
  nationality?: string;
  resolutionDate?: string;
  resolutionNumber?: string;
  /** Issuer: Telefono (up to 2), CdgVendedor, CdgSIISucur. */
  phones?: string[];
  sellerCode?: string;
  siiBranchCode?: number;
  /** Recipient: DirPostal, CmnaPostal, CiudadPostal. */
  postal?: { address?: string; commune?: string; city?: string };
  /** Issuer: IdAdicEmisor; export recipient: Extranjero/IdAdicRecep. */
  additionalId?: string;
  /** Export issuer: CodAdicSucur. */
  additionalBranchCode?: string;
  /** Issuer of a guía for export (GuiaExport): CdgTraslado, FolioAut, FchAut. */
  exportGuide?: { transferCode?: number; authorizationNumber?: number; authorizationDate?: string };
}

/** IndExe of a line: what base its amount goes to. */
export type ExemptIndicator = 1 | 2 | 3 | 4 | 5 | 6;

export interface ComputedLine {
  lineNo: number;
  name: string;
  /** DscItem. */
  longDescription?: string;
  /** CdgItem (TpoCodigo, VlrCodigo). */
  codes: { type: string; value: string }[];
  /** Plain decimal strings, omitted when zero (SII: omit rather than send 0). */
  qty?: string;
  unit?: string;
  price?: string;
  /** QtyRef, UnmdRef, PrcRef. */
  refQty?: string;
  refUnit?: string;
  refPrice?: string;
  /** DescuentoPct / RecargoPct as decimal strings, when sent as percentages. */
  discountPct?: string;
  surchargePct?: string;
  /** DescuentoMonto in currency units (scaled by currency.scale). */
  discount: bigint;
  /** RecargoMonto. */
  surcharge: bigint;
  /** SubDscto / SubRecargo: the breakdown of the discount or surcharge (TipoDscto %/$, ValorDscto as written). */
  discountParts?: { type: "%" | "$"; value: string }[];
  surchargeParts?: { type: "%" | "$"; value: string }[];
  /** Gross of the line before discount: round(qty × price). */
  gross: bigint;
  /** IndExe written on the line (undefined: the type's default treatment). */
  indicator?: ExemptIndicator;
  /** Exempt (IndExe 1, or every line of an exempt type). */
  exempt: boolean;
  additionalTaxCodes: string[];
  /** Retenedor (IndAgente R) and its amounts. */
  retainer?: { baseAmount?: bigint; margin?: bigint; finalPrice?: bigint };
  /** TpoDocLiq on a liquidación-factura. */
  settledType?: string;
  /** Subcantidad: SubQty (decimal string), SubCod, TipCodSubQty (exports). */
  subQuantities?: { qty: string; code: string; codeType?: string }[];
  /** FchElabor, FchVencim. */
  elaborationDate?: string;
  expiryDate?: string;
  /** A sale on behalf of a third party: its IVA goes to IVATerc. */
  thirdParty?: boolean;
  /** OtrMnda: the price in another currency; amounts scaled by 10^4. */
  otherCurrency?: { code: string; price: string; factor?: string; discount?: bigint; surcharge?: bigint; amount: bigint };
  /** Specific fuel taxes (28, 35) of the line: amounts in pesos, sent by the client. */
  specificTaxes?: { code: string; amount: bigint }[];
  /** Boletas: RUTMandante of the line (the principal it is sold for). */
  principalRut?: string;
  /** Boletas: ItemEspectaculo (1 ticket, 2 service) and InfoTicket. */
  show?: { kind: 1 | 2; ticket?: ComputedTicket };
  /** MontoItem (scaled by currency.scale). */
  amount: bigint;
}

export interface ComputedTicket {
  folio: number;
  generatedAt: string;
  eventName: string;
  ticketType: string;
  eventCode: string;
  eventDate: string;
  venue: string;
  section: string;
  row?: string;
  seat?: string;
}

export interface ComputedTax {
  /** "IVA" or an additional-tax code. */
  type: string;
  kind: "IVA" | "A" | "R";
  /** Rate as decimal string (e.g. "19", "20.5"); none for the specific fuel taxes 28 and 35. */
  rate?: string;
  base: bigint;
  amount: bigint;
}

/** A DscRcgGlobal line, with the amount it adds (surcharge) or takes (discount) from its base. */
export interface ComputedAdjustment {
  lineNo: number;
  kind: "D" | "R";
  description?: string;
  valueType: "%" | "$";
  /** ValorDR as written: the percentage or the amount. */
  value: string;
  /** IndExeDR: undefined taxed, 1 exempt, 2 not billable. */
  base?: 1 | 2;
  /** The amount it moves, in currency units. */
  amount: bigint;
  /** ValorDROtrMnda: a "$" value in the second currency (OtraMoneda's scale), when the document has one. */
  otherValue?: bigint;
}

export interface ComputedReference {
  lineNo: number;
  type: string;
  folio: string;
  date: string;
  global?: boolean;
  otherIssuer?: string;
  /** IdAdicOtr (exports). */
  otherIssuerAdditionalId?: string;
  codRef?: 1 | 2 | 3;
  reason?: string;
}

export interface ComputedCommission {
  lineNo: number;
  kind: "C" | "O";
  description: string;
  rate?: string;
  net: bigint;
  exempt: bigint;
  iva: bigint;
}

export interface ComputedTotals {
  subTotal: bigint;
  discount: bigint;
  surcharge: bigint;
  /** MntNeto (affected net) — undefined when the document has no affected amount. */
  net?: bigint;
  /** MntExe. */
  exempt?: bigint;
  /** MntBase and MntMargenCom: sums of the retainer lines' slaughter bases and marketing margins. */
  meatBase?: bigint;
  marginBase?: bigint;
  ivaRate?: string;
  iva?: bigint;
  /** ImptoReten entries (additional taxes A and withholdings R). */
  additional: ComputedTax[];
  /** IVAProp and IVATerc: the IVA split into the issuer's own and third parties' (lines marked third_party). */
  ivaOwn?: bigint;
  ivaThirdParty?: bigint;
  /** CredEC: the construction companies' special credit (DL 910), deducted from the total. */
  constructionCredit?: bigint;
  /** IVANoRet: the IVA not withheld when withholdings take only part of it. */
  ivaNotRetained?: bigint;
  /** GrntDep: deposit guarantees on containers (IndExe 3; IndExe 5 on the credit note returning them). */
  deposit?: bigint;
  /** Totales/Comisiones of a liquidación-factura. */
  commissions?: { net: bigint; exempt: bigint; iva: bigint };
  total: bigint;
  /** MontoNF: not billable (IndExe 2 minus 6), outside the total. */
  nonBillable?: bigint;
}

export interface ComputedTransport {
  plate?: string;
  carrierRut?: string;
  driver?: { rut: string; name: string };
  destination?: { address?: string; commune?: string; city?: string };
}

export interface ComputedCustoms {
  saleModality?: number;
  saleClause?: number;
  saleClauseTotal?: bigint;
  transportMode?: number;
  carrierName?: string;
  carrierCompanyRut?: string;
  carrierCompanyName?: string;
  carrierCompanyAdditionalId?: string;
  booking?: string;
  operator?: string;
  portOfLoading?: number;
  portOfLoadingAdditionalId?: string;
  portOfUnloading?: number;
  portOfUnloadingAdditionalId?: string;
  tare?: number;
  tareUnit?: number;
  grossWeight?: string;
  grossWeightUnit?: number;
  netWeight?: string;
  netWeightUnit?: number;
  totalItems?: number;
  totalPackages?: number;
  packages: { type: number; quantity: number; marks?: string; containerId?: string; seal?: string; sealIssuer?: string }[];
  freight?: bigint;
  insurance?: bigint;
  recipientCountry?: number;
  destinationCountry?: number;
}

export interface ComputedOtherCurrency {
  code: string;
  siiName: string;
  /** TpoCambio as written (≤ 4 decimals). */
  rate: string;
  /** Amounts in the second currency, scaled by `scale` (0 for CLP, 4 otherwise). */
  scale: number;
  exempt: bigint;
  total: bigint;
  /** Domestic documents only: MntNetoOtrMnda, MntFaeCarneOtrMnda, MntMargComOtrMnda, IVAOtrMnda, ImpRetOtrMnda, IVANoRetOtrMnda (omitted when zero). */
  net?: bigint;
  meatBase?: bigint;
  marginBase?: bigint;
  iva?: bigint;
  taxes?: { type: string; rate?: string; amount: bigint }[];
  ivaNotRetained?: bigint;
}

export interface ComputedSubtotal {
  no: number;
  description: string;
  order?: number;
  lines: number[];
  value: bigint;
  /** SubTotNetoSTI, SubTotIVASTI, SubTotAdicSTI, SubTotExeSTI (when the client asks for the breakdown). */
  breakdown?: { net: bigint; iva: bigint; additional: bigint; exempt: bigint };
}

/** Totales MontoPeriodo (TotalPeriodo on boletas), SaldoAnterior, VlrPagar: whole pesos. */
export interface ComputedPeriodTotals {
  periodAmount: bigint;
  previousBalance?: bigint;
  amountToPay: bigint;
}

/** The result of computeDocument: everything the XML builder needs, already validated. */
export interface ComputedDocument {
  type: DocumentTypeInfo;
  /** FchEmis YYYY-MM-DD. */
  issueDate: string;
  /** invoice_date as given (local time, "YYYY-MM-DDTHH:MM:SS"). */
  issueDateTime: string;
  dueDate?: string;
  branchOffice?: number;
  /** FmaPago 1 contado, 2 crédito, 3 sin costo. */
  paymentForm?: 1 | 2 | 3;
  /** FmaPagExp (exports). */
  exportPaymentForm?: number;
  /** IndServicio. */
  serviceIndicator?: 1 | 2 | 3 | 4 | 5;
  servicePeriod?: { from: string; to: string };
  /** MntBruto 1: line prices include IVA (not boletas). */
  grossPrices?: boolean;
  /** Boletas IndMntNeto 2: line prices are net. */
  netAmounts?: boolean;
  /** Guías: IndTraslado; guías and exports: TipoDespacho. */
  transferKind?: number;
  dispatchKind?: 1 | 2 | 3;
  paymentTerms?: { code?: string; description?: string; days?: number };
  payments: { date: string; amount: bigint; description?: string }[];
  /** MedioPago, FchCancel, MntCancel and SaldoInsol (whole units, no decimals), TpoCtaPago/NumCtaPago/BcoPago. */
  settlement?: {
    means?: "CH" | "LT" | "EF" | "PE" | "TC" | "CF" | "OT";
    paidDate?: string;
    paidAmount?: bigint;
    balance?: bigint;
    account?: { type?: "AHORRO" | "CORRIENTE" | "VISTA"; number?: string; bank?: string };
  };
  /** RUTMandante: the principal on whose account the document is issued. */
  principalRut?: string;
  /** RUTSolicita and TpoImpresion (DTE_v10 Documento). */
  requesterRut?: string;
  printFormat?: "N" | "T";
  /** TpoTranCompra, TpoTranVenta (Documento and Liquidacion). */
  purchaseKind?: number;
  saleKind?: number;
  /** MontoPeriodo, SaldoAnterior, VlrPagar. */
  periodTotals?: ComputedPeriodTotals;
  /** Boletas: CodVndor and CodCaja, in a Referencia line of their own. */
  pointOfSale?: { sellerCode?: string; registerCode?: string };
  /** IndNoRebaja 1 (credit notes 61). */
  noDebitReduction?: boolean;
  issuer: Party;
  receiver: Party;
  currency: { code: string; siiName: string; scale: number; exchangeRate?: string };
  lines: ComputedLine[];
  adjustments: ComputedAdjustment[];
  subtotals: ComputedSubtotal[];
  totals: ComputedTotals;
  transport?: ComputedTransport;
  customs?: ComputedCustoms;
  otherCurrency?: ComputedOtherCurrency;
  references: ComputedReference[];
  commissions: ComputedCommission[];
  reason?: { code: "ANU" | "COT" | "COM"; codRef: 1 | 2 | 3 };
  externalReference?: string;
}

/** Formats an amount of the document for XML / display. */
export function formatAmount(doc: Pick<ComputedDocument, "currency">, v: bigint): string {
  return formatScaled(v, doc.currency.scale);
}
