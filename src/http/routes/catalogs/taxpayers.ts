import { OpenAPIHono, z } from "@hono/zod-openapi";
import { canonicalRut, findTaxpayer } from "../../../accounts/taxpayers/repository";
import type { TaxpayerRow } from "../../../accounts/taxpayers/csv";
import { SIMULATOR_TAXPAYERS } from "../../../accounts/taxpayers/simulator-companies";
import { AppError } from "../../../lib/errors";
import { envForMode } from "../../../config";
import { validationHook } from "../../errors/handler";
import { json } from "../../openapi/common";
import { defineRoute } from "../../route";
import type { AppEnv } from "../../types";
import { CountryParam } from "./schemas";

const TaxpayerSchema = z
  .object({
    tax_id: z.string().openapi({ example: "76086428-5" }),
    legal_name: z.string().openapi({ example: "COMERCIAL LOS ANDES SPA" }),
    authorized_dte: z.literal(true).describe("Listed by the SII as authorised to issue electronic documents."),
    resolution_number: z.number().int().openapi({ example: 80 }),
    resolution_date: z.string().openapi({ example: "2014-08-22" }),
    exchange_email: z.string().nullable().describe("Mailbox where DTEs and reception replies are sent.").openapi({ example: "dte@losandes.example" }),
    url: z.string().nullable(),
    activities: z.array(z.object({ code: z.string(), name: z.string() })).describe("Economic activities: the SII's list does not carry them, so this is empty for imported rows."),
    source: z.enum(["SII_DIRECTORY", "SIMULATOR"]).describe("SII_DIRECTORY: the imported SII list; SIMULATOR: the simulated SII's own companies (simulator mode only)."),
  })
  .openapi("Taxpayer");

const route = defineRoute({
  method: "get",
  path: "/api/catalogs/{country}/taxpayers/{tax_id}",
  tags: ["Taxpayers"],
  summary: "Look up an authorised electronic taxpayer by RUT",
  description:
    "Legal name, resolution and exchange e-mail from the SII's list of taxpayers authorised to issue DTE (imported with `npm run taxpayers:import`). The RUT may be written in any usual form (76086428-5, 76.086.428-5, 760864285).",
  permission: "company:read",
  request: {
    params: CountryParam.extend({
      tax_id: z.string().min(3).max(20).openapi({ param: { name: "tax_id", in: "path" }, example: "76086428-5" }),
    }),
  },
  errors: ["VALIDATION_FAILED", "CATALOG_COUNTRY_NOT_SUPPORTED", "COMPANY_TAX_ID_INVALID", "TAXPAYER_NOT_FOUND"],
  responses: {
    200: {
      description: "The taxpayer",
      ...json(TaxpayerSchema, { tax_id: "76086428-5", legal_name: "COMERCIAL LOS ANDES SPA", authorized_dte: true, resolution_number: 80, resolution_date: "2014-08-22", exchange_email: "dte@losandes.cl", url: "https://www.losandes.cl", activities: [], source: "SII_DIRECTORY" }),
    },
  },
});

function view(t: TaxpayerRow, source: "SII_DIRECTORY" | "SIMULATOR") {
  return {
    tax_id: t.rut, legal_name: t.legalName, authorized_dte: true as const, resolution_number: t.resolutionNumber,
    resolution_date: t.resolutionDate, exchange_email: t.exchangeEmail, url: t.url, activities: [], source,
  };
}

export const taxpayerRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });

taxpayerRoutes.openapi(route, async (c) => {
  const { country, tax_id } = c.req.valid("param");
  if (!["CL", "CHL"].includes(country.toUpperCase())) throw new AppError("CATALOG_COUNTRY_NOT_SUPPORTED", `No taxpayer directory for country "${country}"; supported: CL (CHL).`);
  const rut = canonicalRut(tax_id);
  if (!rut) throw new AppError("COMPANY_TAX_ID_INVALID", `"${tax_id}" is not a valid RUT (digits and a check digit, e.g. 76086428-5)`, [{ field: "tax_id", message: "RUT with a valid check digit" }]);
  const found = await findTaxpayer(c.env.DB, rut);
  if (found) return c.json(view(found, "SII_DIRECTORY"), 200);
  // Test keys work against the simulator in every deployment, so they see its taxpayers too.
  const sim = envForMode(c.env, c.get("principal").livemode).SII_MODE === "simulator" ? SIMULATOR_TAXPAYERS.find((t) => t.rut === rut) : undefined;
  if (sim) return c.json(view(sim, "SIMULATOR"), 200);
  throw new AppError("TAXPAYER_NOT_FOUND", `RUT ${rut} is not in the directory of authorised electronic taxpayers.`);
});
