/**
 * The invoice body (spec §2.7) as a zod schema: the shape the API accepts and documents. Semantic
 * rules (which type may carry what, amounts) live in the section builders next to this file.
 */
import { z } from "zod";

const num = z
  .union([z.number(), z.string().regex(/^-?\d+(\.\d+)?$/)])
  .describe("A number (JSON number or decimal string such as \"1190.5\"). Amounts are exact decimals, never floats.");

const addressSchema = z
  .object({
    country: z.string().max(3).optional().describe("Country code (CL/CHL)."),
    region: z.string().max(40).optional().describe("Region code from the catalog."),
    city: z.string().max(20).optional().describe("Comuna / city code or name; printed as CmnaOrigen/CiudadOrigen (SII max 20)."),
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
  })
  .describe("Issuer or recipient.");

export const itemTaxSchema = z
  .object({
    type: z.string().min(1).max(8).describe("IVA (19 %), EXE (exempt line) or an SII additional-tax code (15, 17, 18, 19, 23, 24, 25, 26, 27, 271)."),
    amount: num.optional().describe("Optional; when sent it must equal the line's tax computed by the engine."),
    rate: num.optional().describe("Optional; when sent it must equal the SII rate of the tax (IVA 19)."),
  })
  .describe("Tax applied to a line.");

export const itemSchema = z
  .object({
    quantity: num.describe("Quantity, > 0, up to 6 decimals."),
    code_unit_of_measure: z.string().max(4).optional().describe("Unit of measure (UnmdItem, max 4 characters)."),
    discount_amount: num.optional().describe("Line discount amount (DescuentoMonto) in the document currency; ≤ quantity × unit_price."),
    unit_price: num.describe("Unit price, ≥ 0, up to 6 decimals. Net on facturas and notes, gross (IVA included) on boletas 39."),
    description: z.string().min(1).max(80).describe("Item name (NmbItem, max 80)."),
    taxes: z.array(itemTaxSchema).max(3).optional().describe("See itemTaxSchema; empty means the document type's default (affected or exempt)."),
  })
  .describe("Detail line.");

export const totalsTaxSchema = z.object({
  type: z.string().min(1).max(8).describe("IVA, EXE or an additional-tax code."),
  amount: num.optional(),
  base_amount: num.optional(),
  rate: num.optional(),
});

export const totalsSchema = z
  .object({
    sub_total: num.optional().describe("Σ round(quantity × unit_price) over all lines."),
    discount: num.optional().describe("Σ items[].discount_amount."),
    taxes: z.array(totalsTaxSchema).max(25).optional().describe("Per-tax totals; each entry sent is checked."),
    total: num.optional().describe("MntTotal."),
  })
  .describe("Client-computed totals. Optional; every field sent is checked against the engine's result.");

export const billingReferenceSchema = z
  .object({
    branch_office: z.number().int().nonnegative().max(999_999_999).optional(),
    number: z.union([z.number().int().nonnegative(), z.string().min(1).max(18)]).describe("Folio of the referenced document (FolioRef)."),
    invoice_type: z.string().min(1).max(3).describe("Referenced document type: SII code, mnemonic, paper code or 8xx."),
    invoice_date: z.string().describe("Date of the referenced document, YYYY-MM-DD or YYYY-MM-DD HH:MM:SS."),
    reason: z.string().max(90).optional().describe("RazonRef (max 90)."),
  })
  .describe("Reference to another document.");

export const invoiceSchema = z
  .object({
    branch_office: z.number().int().nonnegative().max(999_999_999).optional().describe("Issuing branch number (printed as Sucursal), at most 9 digits like the SII's branch codes."),
    invoice_type: z.string().min(1).max(3).describe("SII code (33, 34, 39, 41, 46, 52, 56, 61, 110, 111, 112) or mnemonic (FAC, FEX, BEL, BEX, FCO, GDE, NDV, NCV, FEE, NDE, NCE)."),
    invoice_date: z.string().regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/).describe("Issue date-time YYYY-MM-DD HH:MM:SS, company time zone."),
    payment_due_date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).optional().describe("FchVenc, YYYY-MM-DD."),
    external_reference: z.string().max(100).optional().describe("Caller's reference; not sent to the SII."),
    issuer: partySchema,
    recipient: partySchema.optional().describe("Required except on boletas (then 66666666-6, anonymous buyer)."),
    currency: z
      .object({ code: z.string().min(3).max(3).describe("ISO 4217; CLP except on export documents."), exchange_rate: num.optional().describe("CLP per unit of `code` (exports).") })
      .optional()
      .describe("Defaults to CLP."),
    payment_method: z
      .object({ code: z.string().min(1).max(10).describe("1/CONTADO/CASH, 2/CREDITO/CREDIT or 3/SIN_COSTO/FREE (FmaPago)."), description: z.string().max(60).optional() })
      .optional(),
    items: z.array(itemSchema).min(1).describe("1..60 lines (1..1000 on boletas)."),
    totals: totalsSchema.optional(),
    reason_code: z.string().max(3).optional().describe("ANU cancels the referenced document (CodRef 1), COT corrects text (2), COM corrects amounts (3). Required on notes."),
    billing_reference: z.array(billingReferenceSchema).max(40).optional().describe("References; at least one on notes (56, 61, 111, 112)."),
  })
  .describe("Invoice issuance body (specification §2.7).");

export type InvoiceInput = z.infer<typeof invoiceSchema>;

