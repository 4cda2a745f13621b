import { z } from "@hono/zod-openapi";
import { PageQuerySchema } from "../../openapi/common";

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.union([z.string(), z.number()]))]);

export const CatalogEntrySchema = z
  .object({
    code: z.string().openapi({ example: "U" }),
    name: z.string().openapi({ example: "U" }),
    attributes: z.record(z.string(), scalar).describe("The table's own columns (rate, customs code, SII unit, ...)."),
  })
  .openapi("CatalogEntry");

export const CatalogSourceSchema = z
  .object({
    document: z.string().describe("Official document the data follows."),
    date: z.string().describe("Date of that edition, YYYY-MM-DD."),
    complete: z.boolean().describe("false when only part of the official table is held; `note` says what is missing."),
    note: z.string().optional(),
  })
  .openapi("CatalogSource");

export const CatalogPageSchema = z
  .object({
    data: z.array(CatalogEntrySchema),
    current_page: z.number().int().min(1),
    per_page: z.number().int().min(1).max(100),
    total: z.number().int().min(0),
    last_page: z.number().int().min(1),
    catalog: z.object({ country: z.string().openapi({ example: "CHL" }), slug: z.string(), title: z.string(), source: CatalogSourceSchema }),
  })
  .openapi("CatalogPage");

export const CountryParam = z.object({
  country: z
    .string()
    .min(2)
    .max(3)
    .openapi({ param: { name: "country", in: "path" }, description: "ISO 3166-1 alpha-2 or alpha-3, any case (CL, CHL).", example: "CL" }),
});

export const CatalogQuerySchema = PageQuerySchema.extend({
  code: z.string().min(1).max(40).optional().openapi({ param: { name: "code", in: "query" }, description: "Exact code, case-insensitive.", example: "10" }),
  q: z
    .string()
    .max(100)
    .optional()
    .openapi({ param: { name: "q", in: "query" }, description: "Words contained in the code, the name or a text attribute; accent- and case-insensitive (`nunoa` finds ÑUÑOA).", example: "valparaiso" }),
});

export const NOT_MODIFIED = {
  description: "Not modified: the `If-None-Match` header names the current ETag. No body.",
  headers: { ETag: { schema: { type: "string" as const } } },
};

export const CatalogSummarySchema = z
  .object({
    slug: z.string().openapi({ example: "communes" }),
    title: z.string().openapi({ example: "Communes" }),
    description: z.string(),
    path: z.string().describe("Where its entries are listed.").openapi({ example: "/api/catalogs/CHL/communes" }),
    total: z.number().int().min(0).describe("How many entries it holds."),
    source: CatalogSourceSchema,
  })
  .openapi("CatalogSummary");

export const CountryCatalogIndexSchema = z
  .object({
    country: z.string().describe("ISO 3166-1 alpha-3.").openapi({ example: "CHL" }),
    alpha2: z.string().openapi({ example: "CL" }),
    path: z.string().describe("This index.").openapi({ example: "/api/catalogs/CHL" }),
    catalogs: z.array(CatalogSummarySchema),
    lookups: z
      .array(z.object({ name: z.string().openapi({ example: "taxpayers" }), path: z.string().openapi({ example: "/api/catalogs/CHL/taxpayers/{tax_id}" }), description: z.string() }))
      .describe("Look-ups by key (not lists)."),
  })
  .openapi("CountryCatalogIndex");

export const CatalogIndexPageSchema = z
  .object({
    data: z.array(CountryCatalogIndexSchema),
    current_page: z.number().int().min(1),
    per_page: z.number().int().min(1).max(100),
    total: z.number().int().min(0),
    last_page: z.number().int().min(1),
  })
  .openapi("CatalogIndexPage");
