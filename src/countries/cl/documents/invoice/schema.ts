/**
 * The invoice body (spec §2.7) as a zod schema: the shape the API accepts and documents. Semantic
 * rules (which type may carry what, amounts) live in the section builders next to this file.
 */
import { z } from "zod";
import { DATE_FORM } from "../../../../lib/time";
import { unknownDocumentType } from "../document-types";

/** A schema's own message for a value sent but wrong; a value left out keeps the general "Required." (http/errors/handler.ts). */
const whenSent = (message: string) => (iss: { input?: unknown }) => (iss.input === undefined ? undefined : message);

const NUMBER = 'A number: a JSON number or a decimal string such as "1190.5".';
const num = z
  .union([z.number(), z.string().regex(/^-?\d+(\.\d+)?$/, NUMBER)], { error: whenSent(NUMBER) })
  .describe("A number (JSON number or decimal string such as \"1190.5\"). Amounts are exact decimals, never floats.");

/** The form only: a day that does not exist is the engine's INVALID_DATE, naming the rule. */
const dateOnly = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, DATE_FORM);

/** A date and time as the SII writes them (FchGenera, FchEvento): YYYY-MM-DD HH:MM:SS, or with a T. */
const dateTime = z.string().regex(/^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}$/, "A date and time as YYYY-MM-DD HH:MM:SS, e.g. 2026-11-27 20:30:00.");

/** A whole signed amount in pesos (SII ValorType: an integer of up to 18 digits). */
const WHOLE = "A whole amount: a JSON integer or a string of up to 18 digits, e.g. -1500.";
const wholeSigned = z
  .union([z.number().int(WHOLE).min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER), z.string().regex(/^-?\d{1,18}$/, WHOLE)], { error: whenSent(WHOLE) })
  .describe("A whole amount, which may be negative (JSON integer or a string of up to 18 digits).");

const addressSchema = z
  .object({
    country: z.string().max(3).optional().describe("Country code (CL/CHL)."),
    region: z.string().max(40).optional().describe("Region code from the catalog."),
    city: z.string().max(20).optional().describe("City (CiudadOrigen/CiudadRecep, SII max 20). Also the commune when `commune` is absent."),
    commune: z.string().max(20).optional().describe("Commune (CmnaOrigen/CmnaRecep, SII max 20). Defaults to `city`."),
    address: z.string().max(70).optional().describe("Street address, free text (SII DirOrigen/DirRecep max 70)."),
  })
  .describe("Postal address.");

const taxInfoSchema = z
  .object({
    activity: z.string().max(80).optional().describe("Business activity in words (giro). Required for the issuer (GiroEmis max 80); recipient's GiroRecep max 40."),
    activity_codes: z.array(z.number().int().positive().max(999999)).max(4).optional().describe("SII economic activity codes (Acteco), 1 to 4 for the issuer of facturas."),
    resolution_date: z.string().optional().describe("Date of the SII resolution authorising the issuer (YYYY-MM-DD); goes into the envelope Caratula."),
    resolution_number: z.string().optional().describe("Number of the SII resolution (0 in certification)."),
  })
  .describe("Tax information.");

export const partySchema = z
  .object({
    legal_name: z.string().min(1).max(100).describe("Legal name (RznSoc max 100)."),
    document_type: z.string().optional().describe("Tax identification document code (RUT for Chile)."),
    document_number: z.string().min(1).max(20).describe("Tax id. For Chile a RUT in any usual form (76086428-5, 76.086.428-5, 760864285). Foreign recipients of export documents may send their own id."),
    address: addressSchema.optional(),
    tax_information: taxInfoSchema.optional(),
    email: z.string().max(80).optional().describe("E-mail (CorreoEmisor / CorreoRecep, max 80). Not on boletas."),
    contact: z.string().max(80).optional().describe("Recipient only: phone or e-mail of a contact person (Contacto, max 80)."),
    internal_code: z.string().max(20).optional().describe("Recipient only: the issuer's own code for the recipient (CdgIntRecep, max 20)."),
    phones: z.array(z.string().min(1).max(20)).min(1).max(2).optional().describe("Issuer only: up to 2 phone numbers (Telefono, max 20 each). Not on boletas."),
    seller_code: z.string().min(1).max(60).optional().describe("Issuer only: the seller's code (CdgVendedor, max 60). Not on boletas."),
    sii_branch_code: z.number().int().positive().max(999_999_999).optional().describe("Issuer only: the SII's code of the issuing branch (CdgSIISucur, up to 9 digits)."),
    postal_address: z
      .object({
        address: z.string().min(1).max(70).optional().describe("DirPostal (max 70)."),
        commune: z.string().min(1).max(20).optional().describe("CmnaPostal (max 20)."),
        city: z.string().min(1).max(20).optional().describe("CiudadPostal (max 20)."),
      })
      .optional()
      .describe("Recipient only: a postal address besides the address (DirPostal, CmnaPostal, CiudadPostal)."),
    additional_id: z.string().min(1).max(20).optional().describe("Issuer only: an additional identifier of the issuer (IdAdicEmisor, max 20), e.g. its id in the buyer's country. Facturas, notes, guías, 46 and exports; not boletas or 43."),
    additional_branch_code: z.string().min(1).max(20).optional().describe("Issuer only, export documents (110–112): an additional code of the issuing branch (CodAdicSucur, max 20)."),
    export_guide: z
      .object({
        transfer_code: z.number().int().min(1).max(4).optional().describe("CdgTraslado: the SII's code (1–4) of who issues an exceptional transfer for export."),
        authorization_number: z.number().int().nonnegative().max(999_999).optional().describe("FolioAut: the number of the SII resolution authorising it (up to 6 digits)."),
        authorization_date: dateOnly.optional().describe("FchAut: the date of that resolution, YYYY-MM-DD."),
      })
      .optional()
      .describe("Issuer only, guías de despacho (52) for export or its returns (transfer_kind 7, 8 or 9): the issuer of a guía for export (GuiaExport), e.g. the customs agent returning goods (transfer_code 2). At least one field."),
    foreign: z
      .object({
        nationality: z.string().max(3).optional().describe("Recipient's nationality: customs country code (Nacionalidad; GET /api/catalogs/CL/additional-export-info/countries)."),
        id: z.string().min(1).max(20).optional().describe("Foreign tax id (NumId). Defaults to document_number when that is not a RUT."),
        additional_id: z.string().min(1).max(20).optional().describe("An additional identifier of the foreign recipient (IdAdicRecep, max 20)."),
      })
      .optional()
      .describe("Recipient only, every DTE but boletas and 43: the foreign recipient block (Extranjero), e.g. a foreign supplier on a factura de compra (46) or the buyer of an export; additional_id on 110–112 only."),
  })
  .describe("Issuer or recipient.");

export const itemTaxSchema = z
  .object({
    type: z.string().min(1).max(8).describe("IVA (19 %), EXE (exempt line) or an SII additional-tax or withholding code (GET /api/catalogs/CL/tax-types: 15, 17–19, 23–27, 30–34, 36–39, 41, 44, 45, 47, 48, 271), or a specific fuel tax (28 diesel, 35 gasolines)."),
    amount: num.optional().describe("Optional; when sent it must equal the line's tax computed by the engine. Required for the specific fuel taxes 28 and 35 unless cubic_metres and per_cubic_metre are sent."),
    rate: num.optional().describe("Optional; when sent it must equal the SII rate of the tax (IVA 19). Not used with 28 and 35 (their amount is per cubic metre, not a percentage)."),
    cubic_metres: num.optional().describe("Specific fuel taxes 28 (diesel) and 35 (gasolines) only: the volume taxed on this line in m³ (up to 6 decimals)."),
    per_cubic_metre: num.optional().describe("Specific fuel taxes 28 and 35 only: the tax per m³ in pesos the SII publishes for the week (up to 6 decimals). With cubic_metres, amount = round(cubic_metres × per_cubic_metre)."),
  })
  .describe("Tax applied to a line.");

const breakdownPart = z
  .object({
    percent: num.optional().describe("A percentage of quantity × unit_price (TipoDscto/TipoRecargo %), 0.01–100, 2 decimals."),
    amount: num.optional().describe("An amount in the document currency (TipoDscto/TipoRecargo $), at least 0.01, 2 decimals."),
  })
  .describe("One part of a line's discount or surcharge: exactly one of percent and amount.");

export const itemSchema = z
  .object({
    quantity: num.describe("Quantity, > 0, up to 6 decimals."),
    code_unit_of_measure: z.string().max(4).optional().describe("Unit of measure (UnmdItem, max 4 characters)."),
    discount_amount: num.optional().describe("Line discount amount (DescuentoMonto) in the document currency; ≤ quantity × unit_price."),
    settled_type: z.string().max(3).optional().describe("Liquidación-factura (43) only, required there: the type of the document settled on this line (TpoDocLiq, e.g. 33)."),
    unit_price: num.describe("Unit price, ≥ 0, up to 6 decimals. Net on facturas and notes, gross (IVA included) on boletas 39."),
    description: z.string().min(1).max(80).describe("Item name (NmbItem, max 80)."),
    taxes: z.array(itemTaxSchema).max(3).optional().describe("See itemTaxSchema; empty means the document type's default (affected or exempt)."),
    item_codes: z
      .array(z.object({ type: z.string().min(1).max(10).describe("Coding scheme (TpoCodigo, max 10), e.g. INT1 (internal), EAN13, PLU, DUN14."), value: z.string().min(1).max(35).describe("Code (VlrCodigo, max 35).") }))
      .max(5)
      .optional()
      .describe("Up to 5 item codes (CdgItem)."),
    long_description: z.string().max(1000).optional().describe("Long description (DscItem, max 1,000 characters)."),
    discount_percent: num.optional().describe("Line discount in percent (DescuentoPct, 0.01–100, 2 decimals). DescuentoMonto = round(quantity × unit_price × percent / 100); discount_amount, if also sent, must equal it."),
    surcharge_percent: num.optional().describe("Line surcharge in percent (RecargoPct, 0.01–999.99; boletas up to 100). RecargoMonto = round(quantity × unit_price × percent / 100)."),
    surcharge_amount: num.optional().describe("Line surcharge amount (RecargoMonto) in the document currency."),
    discount_breakdown: z
      .array(breakdownPart)
      .min(1)
      .max(5)
      .optional()
      .describe("SubDscto: the line discount in up to 5 parts. Their sum, rounded to whole units, must equal the line's discount; without discount_percent and discount_amount it is the discount. Facturas, notes, guías and exports; not boletas or 43."),
    surcharge_breakdown: z
      .array(breakdownPart)
      .min(1)
      .max(5)
      .optional()
      .describe("SubRecargo: the line surcharge in up to 5 parts, under the same rules as discount_breakdown."),
    exempt_indicator: z
      .number()
      .int()
      .min(1)
      .max(6)
      .optional()
      .describe("IndExe: 1 exempt or not affected (same as taxes EXE), 2 not billable (MontoNF), 3 deposit guarantee on containers (GrntDep), 4 not a sale (informative; guías and facturas), 5 deposit guarantee refund (credit notes) or, on a guía that is not a sale (transfer_kind 2–8) referencing an earlier guía, an item taken back (outside the totals), 6 not billable, negative (MontoNF minus). Boletas allow 1, 2 and 6."),
    reference_quantity: num.optional().describe("Reference quantity (QtyRef), e.g. the content of a package; informative."),
    sub_quantities: z
      .array(
        z.object({
          quantity: num.describe("SubQty: part of the line's quantity, > 0, up to 6 decimals."),
          code: z.string().min(1).max(35).describe("SubCod: the code of that part (e.g. a lot or a size)."),
          code_type: z.string().min(1).max(10).optional().describe("TipCodSubQty: the coding scheme of `code`. Export documents (110–112) only."),
        }),
      )
      .min(1)
      .max(5)
      .optional()
      .describe("Distribution of the quantity (Subcantidad, up to 5); their sum may not exceed quantity. Not on boletas."),
    elaboration_date: dateOnly.optional().describe("FchElabor: elaboration date of the item, YYYY-MM-DD. Not on boletas."),
    expiry_date: dateOnly.optional().describe("FchVencim: expiry date of the item, YYYY-MM-DD, not before elaboration_date. Not on boletas."),
    third_party: z.boolean().optional().describe("The line is a sale on behalf of a third party: its IVA is third parties' (IVATerc) and the rest of the IVA the issuer's own (IVAProp). Taxed lines of 33, 43, 46, 52, 56 and 61."),
    other_currency: z
      .object({
        code: z.string().min(3).max(3).describe("ISO 4217 code of the price currency (Moneda)."),
        unit_price: num.describe("PrcOtrMon: the unit price in that currency, up to 4 decimals."),
        conversion_factor: num.optional().describe("FctConv: pesos per unit of `code` (up to 4 decimals). When sent on a peso document, the line's unit_price must equal other_currency.unit_price × factor, rounded to the decimals unit_price is written with (exports: written as sent)."),
        discount_amount: num.optional().describe("DctoOtrMnda: the line discount in that currency. Defaults to the line's discount_percent applied to quantity × unit_price, rounded to 4 decimals."),
        surcharge_amount: num.optional().describe("RecargoOtrMnda: the line surcharge in that currency. Defaults to surcharge_percent applied the same way."),
      })
      .optional()
      .describe("Per-line price in another currency (OtrMnda): MontoItemOtrMnda = round(quantity × unit_price, 4 decimals) − discount + surcharge. Facturas, notes, guías and exports; not boletas or 43."),
    ticket: z
      .object({
        kind: z.enum(["TICKET", "SERVICE"]).describe("ItemEspectaculo: TICKET (01, the entrance) or SERVICE (02, a service charge)."),
        folio: z.number().int().positive().max(999_999).optional().describe("FolioTicket: the ticket number within the event. Required with the other ticket fields."),
        generated_at: dateTime.optional().describe("FchGenera: when the ticket was made, YYYY-MM-DD HH:MM:SS."),
        event_name: z.string().min(1).max(80).optional().describe("NmbEvento (max 80)."),
        ticket_type: z.string().min(1).max(10).optional().describe("TpoTicket, e.g. Adulto, Niño (max 10)."),
        event_code: z.string().min(1).max(5).optional().describe("CdgEvento (max 5)."),
        event_date: dateTime.optional().describe("FchEvento: date and time of the show."),
        venue: z.string().min(1).max(80).optional().describe("LugarEvento: the venue (max 80)."),
        section: z.string().min(1).max(20).optional().describe("UbicEvento: sector or section (max 20)."),
        row: z.string().min(1).max(3).optional().describe("FilaUbicEvento (max 3)."),
        seat: z.string().min(1).max(3).optional().describe("AsntoUbicEvento (max 3)."),
      })
      .optional()
      .describe("Boletas 39 and 41 only: a show ticket (ItemEspectaculo and InfoTicket of EnvioBOLETA). With kind TICKET, folio, generated_at, event_name, ticket_type, event_code, event_date, venue and section are required together."),
    principal_rut: z.string().min(1).max(12).optional().describe("Boletas 39 and 41 only: RUTMandante of the line, the principal on whose account it is sold."),
    reference_unit: z.string().max(4).optional().describe("Unit of the reference quantity (UnmdRef, max 4)."),
    reference_price: num.optional().describe("Price per reference unit (PrcRef); informative."),
    retainer: z
      .object({
        base_amount: num.optional().describe("Slaughter base (MntBaseFaena): the base of the meat taxes 17 and 18 on this line instead of its amount."),
        margin_amount: num.optional().describe("Marketing margin (MntMargComer)."),
        final_price: num.optional().describe("Price to the final consumer (PrcConsFinal)."),
      })
      .optional()
      .describe("The issuer withholds or advances a tax on this line as the SII's retention agent (Retenedor, IndAgente R). Facturas, notes and guías only."),
  })
  .describe("Detail line.");

export const globalAdjustmentSchema = z
  .object({
    kind: z.enum(["DISCOUNT", "SURCHARGE"]).describe("DISCOUNT (TpoMov D) or SURCHARGE (TpoMov R)."),
    description: z.string().max(45).optional().describe("GlosaDR (max 45)."),
    percent: num.optional().describe("Percentage of the base (TpoValor %; 0.01–100 for discounts, up to 999.99 for surcharges). Exactly one of percent and amount."),
    amount: num.optional().describe("Amount in the document currency (TpoValor $). Exactly one of percent and amount."),
    applies_to: z
      .enum(["TAXED", "EXEMPT", "NON_BILLABLE"])
      .optional()
      .describe("Base it changes (IndExeDR): TAXED (default; the affected lines), EXEMPT (IndExeDR 1; the default on exempt types) or NON_BILLABLE (IndExeDR 2)."),
  })
  .describe("Global discount or surcharge (DscRcgGlobal).");

export const totalsTaxSchema = z.object({
  type: z.string().min(1).max(8).describe("IVA, EXE or an additional-tax code."),
  amount: num.optional(),
  base_amount: num.optional(),
  rate: num.optional(),
});

export const totalsSchema = z
  .object({
    sub_total: num.optional().describe("Σ round(quantity × unit_price) over all lines."),
    discount: num.optional().describe("Σ line discounts (DescuentoMonto)."),
    surcharge: num.optional().describe("Σ line surcharges (RecargoMonto)."),
    non_billable: num.optional().describe("MontoNF: not-billable lines (IndExe 2 minus IndExe 6) after their global adjustments."),
    taxes: z.array(totalsTaxSchema).max(25).optional().describe("Per-tax totals; each entry sent is checked."),
    total: num.optional().describe("MntTotal."),
  })
  .describe("Client-computed totals. Optional; every field sent is checked against the engine's result.");

export const billingReferenceSchema = z
  .object({
    branch_office: z.number().int().nonnegative().max(999_999_999).optional(),
    number: z.union([z.number().int().nonnegative(), z.string().min(1).max(18)], { error: whenSent("The referenced folio: a whole number, or a string of up to 18 characters.") }).describe("Folio of the referenced document (FolioRef)."),
    invoice_type: z.string().min(1).max(3, "A document type of at most 3 characters: an SII code (33, 801, …) or a mnemonic (FAC, NCV, …).").describe("Referenced document type: SII code, mnemonic, paper code or 8xx."),
    invoice_date: z.string().describe("Date of the referenced document, YYYY-MM-DD or YYYY-MM-DD HH:MM:SS."),
    reason: z.string().max(90).optional().describe("RazonRef (max 90)."),
    reason_code: z.string().max(3).optional().describe("This reference's own CodRef: ANU/1, COT/2 or COM/3. Defaults to the document's reason_code on the first reference a note may modify."),
    global: z.boolean().optional().describe("IndGlobal: the note covers more than 20 documents of this type (number 0)."),
    other_issuer: z.string().max(12).optional().describe("RUTOtr: RUT of the issuer of the referenced document when it is not ours."),
    other_issuer_additional_id: z.string().min(1).max(20).optional().describe("IdAdicOtr: an additional identifier of that other issuer (e.g. a foreign one). Export documents (110–112) only."),
  })
  .describe("Reference to another document.");

export const transportSchema = z
  .object({
    plate: z.string().max(8).optional().describe("Vehicle plate (Patente, max 8)."),
    carrier_rut: z.string().max(12).optional().describe("RUT of the carrier (RUTTrans)."),
    driver: z.object({ rut: z.string().min(1).max(12).describe("RUTChofer."), name: z.string().min(1).max(30).describe("NombreChofer (max 30).") }).optional(),
    destination: z
      .object({ address: z.string().max(70).optional().describe("DirDest."), commune: z.string().max(20).optional().describe("CmnaDest."), city: z.string().max(20).optional().describe("CiudadDest.") })
      .optional(),
  })
  .describe("Transport (Transporte): guías 52, facturas and exports.");

export const customsSchema = z
  .object({
    sale_modality: z.string().max(2).optional().describe("CodModVenta (GET /api/catalogs/CL/additional-export-info/sale-modalities)."),
    sale_clause: z.string().max(2).optional().describe("CodClauVenta (GET /api/catalogs/CL/additional-export-info/sale-clauses)."),
    sale_clause_total: num.optional().describe("TotClauVenta: total of the sale clause, document currency."),
    transport_mode: z.string().max(2).optional().describe("CodViaTransp (GET /api/catalogs/CL/additional-export-info/transport-modes)."),
    carrier_name: z.string().max(40).optional().describe("NombreTransp: ship, flight or vehicle."),
    carrier_company_rut: z.string().max(12).optional().describe("RUTCiaTransp."),
    carrier_company_name: z.string().max(40).optional().describe("NomCiaTransp."),
    carrier_company_additional_id: z.string().min(1).max(20).optional().describe("IdAdicTransp: an additional identifier of the carrier company (max 20)."),
    booking: z.string().min(1).max(20).optional().describe("Booking."),
    operator: z.string().min(1).max(20).optional().describe("Operador."),
    port_of_loading: z.string().max(4).optional().describe("CodPtoEmbarque (GET /api/catalogs/CL/additional-export-info/ports)."),
    port_of_loading_additional_id: z.string().min(1).max(20).optional().describe("IdAdicPtoEmb: an additional identifier of the port of loading (max 20)."),
    port_of_unloading: z.string().max(4).optional().describe("CodPtoDesemb (GET /api/catalogs/CL/additional-export-info/ports)."),
    port_of_unloading_additional_id: z.string().min(1).max(20).optional().describe("IdAdicPtoDesemb: an additional identifier of the port of unloading (max 20)."),
    tare: z.number().int().positive().max(9_999_999).optional().describe("Tara."),
    tare_unit: z.string().max(2).optional().describe("CodUnidMedTara (customs unit code)."),
    gross_weight: num.optional().describe("PesoBruto, up to 2 decimals."),
    gross_weight_unit: z.string().max(2).optional().describe("CodUnidPesoBruto (customs unit code, e.g. 6 KN)."),
    net_weight: num.optional().describe("PesoNeto, up to 2 decimals."),
    net_weight_unit: z.string().max(2).optional().describe("CodUnidPesoNeto."),
    total_items: z.number().int().positive().optional().describe("TotItems."),
    total_packages: z.number().int().positive().optional().describe("TotBultos. Defaults to the sum of packages[].quantity."),
    packages: z
      .array(
        z.object({
          type: z.string().max(3).describe("CodTpoBultos (GET /api/catalogs/CL/additional-export-info/package-types)."),
          quantity: z.number().int().positive().max(9_999_999_999).describe("CantBultos."),
          marks: z.string().max(255).optional().describe("Marcas."),
          container_id: z.string().max(25).optional().describe("IdContainer."),
          seal: z.string().max(20).optional().describe("Sello."),
          seal_issuer: z.string().max(70).optional().describe("EmisorSello."),
        }),
      )
      .max(10)
      .optional()
      .describe("Packages (TipoBultos, up to 10)."),
    freight: num.optional().describe("MntFlete, document currency."),
    insurance: num.optional().describe("MntSeguro, document currency."),
    recipient_country: z.string().max(3).optional().describe("CodPaisRecep (GET /api/catalogs/CL/additional-export-info/countries)."),
    destination_country: z.string().max(3).optional().describe("CodPaisDestin (GET /api/catalogs/CL/additional-export-info/countries)."),
    payment_form: z.string().max(2).optional().describe("FmaPagExp: customs payment form (GET /api/catalogs/CL/additional-export-info/payment-forms)."),
  })
  .describe("Export customs data (Transporte/Aduana; payment_form is IdDoc FmaPagExp). Export documents 110–112 and guías de despacho for export or its returns (52 with transfer_kind 7, 8 or 9) only.");

export const commissionSchema = z
  .object({
    kind: z.enum(["COMMISSION", "OTHER"]).describe("TipoMovim: C commission, O other charge."),
    description: z.string().min(1).max(60).describe("Glosa (max 60)."),
    percent: num.optional().describe("TasaComision, percent of the settled net amount (computes net_amount)."),
    net_amount: num.optional().describe("ValComNeto. Required unless percent is sent."),
    exempt_amount: num.optional().describe("ValComExe (default 0)."),
  })
  .describe("A commission or other charge (Comisiones) of a liquidación-factura (43), a factura de compra (46) or a note modifying a factura de compra. IVA on it is 19 % of net_amount; it is deducted from the total.");

export const invoiceSchema = z
  .object({
    branch_office: z.number().int().nonnegative().max(999_999_999).optional().describe("Issuing branch number (printed as Sucursal), at most 9 digits like the SII's branch codes."),
    invoice_type: z.string().min(1).max(3, { error: (iss) => unknownDocumentType(String(iss.input)) }).describe("SII code (33, 34, 39, 41, 43, 46, 52, 56, 61, 110, 111, 112) or mnemonic (FAC, FEX, BEL, BEX, LFA, FCO, GDE, NDV, NCV, FEE, NDE, NCE)."),
    invoice_date: z.string().regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/, "A date and time as YYYY-MM-DD HH:MM:SS in the company's time zone, e.g. 2026-11-27 10:30:00.").describe("Issue date-time YYYY-MM-DD HH:MM:SS, company time zone."),
    payment_due_date: dateOnly.optional().describe("FchVenc, YYYY-MM-DD."),
    external_reference: z.string().max(100).optional().describe("Caller's reference; not sent to the SII."),
    issuer: partySchema.optional().describe("The issuer (Emisor). Omitted: the company's issuer profile (`issuer_profile`, with the company's legal name and RUT). Sent while the company has a profile: every field the profile sets must be the same."),
    recipient: partySchema.optional().describe("Required except on boletas (then 66666666-6, anonymous buyer)."),
    currency: z
      .object({ code: z.string().min(3).max(3).describe("ISO 4217; CLP except on export documents."), exchange_rate: num.optional().describe("CLP per unit of `code` (exports).") })
      .optional()
      .describe("Defaults to CLP."),
    payment_method: z
      .object({
        code: z.string().min(1).max(10).optional().describe("1/CONTADO/CASH, 2/CREDITO/CREDIT or 3/SIN_COSTO/FREE (FmaPago). Optional: the other fields stand without it (an export paid in advance states paid_date with only customs.payment_form, FmaPagExp)."),
        description: z.string().max(60).optional(),
        means: z.enum(["CH", "LT", "EF", "PE", "TC", "CF", "OT"]).optional().describe("MedioPago: CH cheque, LT letra, EF cash, PE deposit or transfer, TC credit or debit card, CF post-dated cheque, OT other (GET /api/catalogs/CL/payment-means). Not on boletas."),
        paid_date: dateOnly.optional().describe("FchCancel: the date the document was paid, YYYY-MM-DD (when it is paid at or before issue). Not on boletas."),
        paid_amount: num.optional().describe("MntCancel: the amount paid when the document is issued, in whole units of the document currency (the schema allows no decimals), at most the total rounded to whole units. Not on boletas."),
        balance: num.optional().describe("SaldoInsol: the amount still unpaid when the document is issued, whole units, at most the total; with paid_amount, paid_amount + balance must equal the total rounded to whole units. Not on boletas."),
        account: z
          .object({
            type: z.enum(["AHORRO", "CORRIENTE", "VISTA"]).optional().describe("TpoCtaPago: savings, checking or demand account."),
            number: z.string().min(1).max(20).optional().describe("NumCtaPago (max 20)."),
            bank: z.string().min(1).max(40).optional().describe("BcoPago: the bank's name (max 40)."),
          })
          .optional()
          .describe("The account the payment is to be made to (TpoCtaPago, NumCtaPago, BcoPago). Not on boletas."),
      })
      .optional(),
    principal_rut: z.string().min(1).max(12).optional().describe("RUTMandante: the RUT of the principal on whose account the document is issued (a sale by an agent). Facturas, notes, guías and 46; not boletas (there it is per line, items[].principal_rut), 43 or exports."),
    requester_rut: z.string().min(1).max(12).optional().describe("RUTSolicita: the RUT of whoever asks for the document on a sale to the public (facturas, notes, guías and 46; not boletas, 43 or exports)."),
    print_format: z.enum(["NORMAL", "TICKET"]).optional().describe("TpoImpresion: how the document is printed, NORMAL (N) or TICKET (T). Facturas, notes, guías and 46."),
    purchase_transaction_kind: z.number().int().min(1).max(7).optional().describe("TpoTranCompra: the kind of transaction for the buyer (its purchase register): 1 purchases of the line of business, 2 purchases in supermarkets or similar, 3 acquisition of real estate, 4 purchase of fixed assets, 5 purchases with IVA of common use, 6 purchases without right to credit, 7 purchases not to be included. Facturas, notes, guías, 43 and 46; not boletas or exports."),
    sale_transaction_kind: z.number().int().min(1).max(4).optional().describe("TpoTranVenta: the kind of transaction for the seller (its sales register): 1 sales of the line of business, 2 sale of fixed assets, 3 sale of real estate, 4 the schema's fourth code (its name is not in our reference). Facturas, notes, guías, 43 and 46; not boletas or exports."),
    period_totals: z
      .object({
        previous_balance: wholeSigned.optional().describe("SaldoAnterior: the balance carried from the previous period, positive owed or negative in the recipient's favour, whole pesos."),
        period_amount: wholeSigned.optional().describe("MontoPeriodo (TotalPeriodo on boletas): the sales or services of the period = the total + the not-billable amount (MontoNF). Computed; when sent it must equal that."),
        amount_to_pay: wholeSigned.optional().describe("VlrPagar: the amount to pay = period_amount + previous_balance. Computed; when sent it must equal that."),
      })
      .optional()
      .describe("Periodic services (utilities, subscriptions): the period's amount, the previous balance and the amount to pay (Totales MontoPeriodo/TotalPeriodo, SaldoAnterior, VlrPagar). Sending the block writes the period amount and the amount to pay. Every type but exports (110–112), whose Totales have no such elements."),
    point_of_sale: z
      .object({
        seller_code: z.string().min(1).max(8).optional().describe("CodVndor: the seller's code set by the company (max 8), e.g. INTERNET."),
        register_code: z.string().min(1).max(8).optional().describe("CodCaja: the cash register's code set by the company (max 8)."),
      })
      .optional()
      .describe("Boletas (39, 41) only: the seller and the cash register, written in a Referencia line of their own (CodVndor, CodCaja) after the billing references. At least one field."),
    no_debit_reduction: z.boolean().optional().describe("IndNoRebaja 1: a credit note (61) that gives no right to reduce the issuer's debit IVA."),
    items: z.array(itemSchema).min(1).describe("1..60 lines (1..1000 on boletas)."),
    gross_prices: z.boolean().optional().describe("MntBruto: unit prices and line amounts include IVA (33, 34, 43, 46, 52, 56, 61; on 34 every amount is exempt, so only the mark is written). Boletas are always gross unless net_amounts."),
    net_amounts: z.boolean().optional().describe("Boletas only (IndMntNeto 2): unit prices and line amounts are net of IVA (on 41 every amount is exempt, so only the mark is written)."),
    global_adjustments: z.array(globalAdjustmentSchema).max(20).optional().describe("Global discounts and surcharges (DscRcgGlobal, up to 20)."),
    payment_terms: z
      .object({
        code: z.string().max(4).optional().describe("TermPagoCdg (max 4)."),
        description: z.string().max(100).optional().describe("TermPagoGlosa (max 100)."),
        days: z.number().int().positive().max(999).optional().describe("TermPagoDias."),
      })
      .optional()
      .describe("Payment terms. Not on boletas."),
    payment_schedule: z
      .array(z.object({ date: dateOnly.describe("FchPago."), amount: num.describe("MntPago."), description: z.string().max(40).optional().describe("GlosaPagos (max 40).") }))
      .max(30)
      .optional()
      .describe("Instalments (MntPagos, up to 30; FmaPago 2 credit). Not on boletas. Their sum must equal the total."),
    service_indicator: z
      .number()
      .int()
      .min(1)
      .max(5)
      .optional()
      .describe("IndServicio. Facturas: 1 periodic domestic services, 2 other periodic services, 3 invoice of services. Boletas: 1–4 (default 3). Exports: 3, 4 (services in Chile) or 5 (hotel)."),
    service_period: z.object({ from: dateOnly.describe("PeriodoDesde."), to: dateOnly.describe("PeriodoHasta.") }).optional().describe("Billing period of a service."),
    subtotals: z
      .array(z.object({ description: z.string().min(1).max(40).describe("GlosaSTI (max 40)."), order: z.number().int().positive().max(99).optional().describe("OrdenSTI."), lines: z.array(z.number().int().positive()).min(1).max(60).describe("1-based numbers of the lines it adds up (LineasDeta)."), breakdown: z.boolean().optional().describe("Also write the sub-total's net, IVA, additional taxes and exempt amounts (SubTotNetoSTI, SubTotIVASTI, SubTotAdicSTI, SubTotExeSTI), computed from its lines; each is written when it is not zero.") }))
      .max(20)
      .optional()
      .describe("Sub-totals for printing (SubTotInfo, up to 20); ValSubtotSTI is computed."),
    transfer_kind: z.number().int().min(1).max(9).optional().describe("Guías (52): IndTraslado 1 sale (default), 2 sale to be made, 3 consignment, 4 free delivery, 5 internal transfer, 6 other non-sale, 7 return, 8 export transfer, 9 export sale."),
    dispatch_kind: z.number().int().min(1).max(3).optional().describe("TipoDespacho: 1 by the recipient, 2 by the issuer to the recipient's address, 3 by the issuer to another address. Documents that go with goods: 33, 34, 46, 52 and exports (not notes 56, 61)."),
    transport: transportSchema.optional(),
    customs: customsSchema.optional(),
    other_currency: z
      .object({ code: z.string().min(3).max(3).describe("ISO 4217 (CLP for pesos)."), exchange_rate: num.describe("Units of `code` per unit of the document currency, up to 4 decimals.") })
      .optional()
      .describe("The amounts in a second currency (OtraMoneda). Export documents: exchange_rate is units of `code` per unit of the document currency; currency.exchange_rate alone means a second currency of CLP. Domestic documents (33, 34, 46, 52, 56, 61): exchange_rate is pesos per unit of `code` (e.g. the dólar observado), and each amount is round(pesos / exchange_rate, 4 decimals)."),
    construction_credit: z
      .object({ amount: num.optional().describe("CredEC when it is less than 65 % of the IVA (e.g. the UF cap per dwelling). Defaults to round(IVA × 0.65).") })
      .optional()
      .describe("Crédito especial empresas constructoras (DL 910 art. 21, CredEC): a construction company's sale of dwellings or general construction contract. 33, 52 and notes 56, 61 with IVA. MntTotal = … − CredEC."),
    commissions: z.array(commissionSchema).max(20).optional().describe("Commissions and other charges (Comisiones): liquidaciones-factura (43), facturas de compra (46) and notes (56, 61) that reference a factura de compra (46, or 45 on paper). A percent applies to the taxed net."),
    totals: totalsSchema.optional(),
    reason_code: z.string().max(3).optional().describe("ANU cancels the referenced document (CodRef 1), COT corrects text (2), COM corrects amounts (3). Required on notes."),
    billing_reference: z.array(billingReferenceSchema).max(40).optional().describe("References; at least one on notes (56, 61, 111, 112)."),
  })
  .describe("Invoice issuance body (specification §2.7).");

export type InvoiceInput = z.infer<typeof invoiceSchema>;

