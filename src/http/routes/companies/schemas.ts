import { z } from "@hono/zod-openapi";
import { calendarDate, filePart } from "../../openapi/common";
import { issuingCountry } from "../../../countries";

/** The issuer block's fields a company keeps (the country's issuer profile): see PATCH /api/companies/{idCompany}. */
const IssuerProfileSchema = issuingCountry().documents.issuerProfileSchema.openapi({
  description:
    "The issuer block's fields the company keeps (every field of an invoice's `issuer` but its tax id, all optional): a document sent without `issuer` is issued with them, the company's legal name and tax id; a document that sends `issuer` must agree with each field set here (INVOICE_ISSUER_MISMATCH names the ones that differ).",
});

export const CompanyCreateSchema = z
  .object({
    legal_name: z.string().trim().min(1, "Required").max(255, "At most 255 characters").openapi({ example: "Comercial Los Andes SpA" }),
    tax_identification_document_code: z
      .string()
      .min(1, "Required")
      .max(10, "At most 10 characters")
      .openapi({ example: "RUT", description: "Code from the Tax Identification Documents catalog of the country (Chile: `RUT`)." }),
    tax_identification_document_number: z
      .string()
      .min(1, "Required")
      .max(30, "At most 30 characters")
      .openapi({
        example: "76086428-5",
        description:
          "4 to 20 digits. For Chile any usual RUT form is accepted and normalised: `760864285`, `76086428-5`, `76.086.428-5`, `12345678-K`; the check digit is validated (DECISIONS 1).",
      }),
    country: z
      .string()
      .min(2, "ISO 3166 alpha-2 or alpha-3 code")
      .max(3, "At most 3 characters")
      .openapi({ example: "CHL", description: "ISO 3166 alpha-3 (`CHL`) or alpha-2 (`CL`), any case; stored as alpha-3." }),
    start_activities_date: calendarDate().openapi({ example: "2019-03-01" }),
    issuer_profile: IssuerProfileSchema.optional(),
  })
  .openapi("CompanyCreate");

export const CompanyPatchSchema = z
  .object({ issuer_profile: IssuerProfileSchema.nullable().openapi({ description: "The new issuer profile (replaces the old one whole), or null to remove it." }) })
  .openapi("CompanyPatch");

export const CompanyCreatedSchema = z
  .object({
    id_company: z.string().openapi({ example: "cmp_01JD3Q4M6YV8T1N5B2K7C9XW3E" }),
    id: z.string().describe("Same value as id_company (DECISIONS 3)."),
  })
  .openapi("CompanyCreated");

export const CompanyStatusSchema = z.enum(["ACTIVE", "DELETED"]);

export const CompanyItemSchema = z
  .object({
    id: z.string(),
    legal_name: z.string(),
    tax_identifier: z.string().openapi({ example: "76086428-5", description: "Canonical form; Chile: body-check digit, no dots." }),
    tax_identification_document_code: z.string().openapi({ example: "RUT" }),
    country_iso3: z.string().openapi({ example: "CHL" }),
    country_name: z.string().openapi({ example: "Chile" }),
    start_activities_date: z.string().openapi({ example: "2019-03-01", format: "date" }),
    status: CompanyStatusSchema,
    created_at: z.string().openapi({ example: "2026-11-22T03:00:00", description: "ISO 8601 without offset, in the company's time zone." }),
    issuer_profile: IssuerProfileSchema.nullable(),
  })
  .openapi("Company");

export const CompanyListQuerySchema = z.object({
  legal_name: z.string().max(255).optional().openapi({ param: { name: "legal_name", in: "query" }, description: "Legal name contains (case-insensitive)." }),
  tax_identifier: z
    .string()
    .max(30)
    .optional()
    .openapi({ param: { name: "tax_identifier", in: "query" }, description: "Tax identifier in any accepted form (`76.086.428-5`, `760864285`...)." }),
  status: CompanyStatusSchema.optional().openapi({
    param: { name: "status", in: "query" },
    description: "ACTIVE (default) or DELETED: deleted companies appear only with this filter.",
  }),
});

export const CompanyIdParam = z.object({
  idCompany: z.string().min(1).max(64).openapi({ param: { name: "idCompany", in: "path" }, example: "cmp_01JD3Q4M6YV8T1N5B2K7C9XW3E" }),
});

export const DeletedSchema = z
  .object({ id: z.string(), status: z.literal("DELETED"), message: z.string() })
  .openapi("CompanyDeleted");

export const SettingsSchema = z
  .object({
    id: z.string(),
    id_company: z.string(),
    decimal_places: z.number().int().min(0).max(4),
    thousand_separator: z.enum([".", ","]),
    decimal_separator: z.enum([".", ","]),
    language: z.string().openapi({ example: "es-CL" }),
    time_zone: z.string().openapi({ example: "America/Santiago" }),
    logo: z.string().nullable().openapi({ description: "URL of the company logo, served by this service; null until uploaded." }),
    reception_email: z.string().nullable().openapi({ example: "dte+k3q9x2m8v7c4b1n6@dte.example.cl", description: "Where suppliers send their EnvioDTE (register it at the SII as the company's exchange address); null when RECEPTION_DOMAIN is not configured." }),
    sii_resolution_number: z.number().int().nullable().openapi({ example: 80, description: "Number of the SII resolution authorising the company to issue DTE (0 in certification); goes into every envelope (NroResol) and the PDF legend. null until set: envelopes then carry 0." }),
    sii_resolution_date: z.string().nullable().openapi({ example: "2014-08-22", format: "date", description: "Date of that resolution (FchResol). null until set: envelopes then carry the start-of-activities date." }),
  })
  .openapi("CompanySettings");

export const SettingsPatchSchema = z
  .object({
    decimal_places: z.number().int("A whole number").min(0, "0 to 4").max(4, "0 to 4").optional(),
    thousand_separator: z.enum([".", ","], "A dot or a comma").optional(),
    decimal_separator: z.enum([".", ","], "A dot or a comma").optional(),
    language: z.string().min(2).max(35).optional().openapi({ description: "BCP 47 tag, e.g. es-CL or en." }),
    time_zone: z.string().min(1).max(64).optional().openapi({ description: "IANA time zone, e.g. America/Santiago." }),
    sii_resolution_number: z.number().int("A whole number").min(0, "0 to 999999").max(999_999, "0 to 999999").optional().openapi({ description: "SII resolution number (NroResol, 0 in certification). Set together with sii_resolution_date." }),
    sii_resolution_date: calendarDate().optional().openapi({ description: "SII resolution date (FchResol), YYYY-MM-DD. Set together with sii_resolution_number." }),
  })
  .strict()
  .openapi("CompanySettingsUpdate");

export const LogoUploadSchema = z
  .object({
    logo: filePart("the image", "PNG or JPEG (detected from the bytes), at most 1 MiB."),
  })
  .openapi("LogoUpload");

export const LogoResultSchema = z.object({ file_url: z.string().openapi({ example: "http://127.0.0.1:8787/files/logos/cmp_01J.../lgo_01J....png" }) }).openapi("LogoResult");
