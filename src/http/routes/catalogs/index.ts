import { OpenAPIHono } from "@hono/zod-openapi";
import { allCatalogSlugs, countryCatalogs, filterEntries, type Catalog, type CountryCatalogs } from "../../../domain/catalogs";
import { AppError } from "../../../errors";
import { validationHook } from "../../errors/handler";
import { pageEnvelope, pageParams } from "../../openapi/common";
import { defineRoute } from "../../route";
import type { AppEnv } from "../../types";
import { cachedJson } from "./cache";
import { CatalogPageSchema, CatalogQuerySchema, CountryParam, NOT_MODIFIED } from "./schemas";
import { taxpayerRoutes } from "./taxpayers";

export const catalogsRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });

export function countryOrThrow(code: string): CountryCatalogs {
  const country = countryCatalogs(code);
  if (!country) throw new AppError("CATALOG_COUNTRY_NOT_SUPPORTED", `No catalogs for country "${code}"; supported: CL (CHL).`);
  return country;
}

function example(catalog: Catalog) {
  const data = catalog.entries.slice(0, 2);
  return { data, current_page: 1, per_page: 20, total: catalog.entries.length, last_page: Math.max(1, Math.ceil(catalog.entries.length / 20)), catalog: { country: "CHL", slug: catalog.slug, title: catalog.title, source: catalog.source } };
}

function register(catalog: Catalog) {
  const route = defineRoute({
    method: "get",
    path: `/api/catalogs/{country}/${catalog.slug}`,
    tags: [catalog.tag],
    summary: `List ${catalog.title.toLowerCase()}`,
    description: `${catalog.description}\n\nSource: ${catalog.source.document} (${catalog.source.date})${catalog.source.complete ? (catalog.source.note ? `. ${catalog.source.note}` : ".") : `. **Partial:** ${catalog.source.note}`}\n\nPaged; filter by \`code\` or by text \`q\`. Answers carry \`ETag\` and \`Cache-Control\`; send \`If-None-Match\` to get 304.`,
    permission: "company:read",
    request: { params: CountryParam, query: CatalogQuerySchema },
    errors: ["VALIDATION_FAILED", "CATALOG_COUNTRY_NOT_SUPPORTED"],
    responses: {
      200: {
        description: "A page of the catalog",
        headers: { ETag: { schema: { type: "string" } }, "Cache-Control": { schema: { type: "string" } } },
        content: { "application/json": { schema: CatalogPageSchema, example: example(catalog) } },
      },
      304: NOT_MODIFIED,
    },
  });
  catalogsRoutes.openapi(route, async (c) => {
    const { country: code } = c.req.valid("param");
    const query = c.req.valid("query");
    const country = countryOrThrow(code);
    const own = country.catalogs.find((k) => k.slug === catalog.slug);
    if (!own) throw new AppError("CATALOG_COUNTRY_NOT_SUPPORTED", `Country ${country.alpha3} has no ${catalog.slug} catalog.`);
    const rows = filterEntries(own, { code: query.code, q: query.q });
    const p = pageParams(query);
    const body = {
      ...pageEnvelope(rows.slice(p.offset, p.offset + p.perPage), rows.length, p),
      catalog: { country: country.alpha3, slug: own.slug, title: own.title, source: own.source },
    };
    return cachedJson(c, body) as any;
  });
}

for (const catalog of allCatalogSlugs()) register(catalog);
catalogsRoutes.route("/", taxpayerRoutes);
