import { OpenAPIHono } from "@hono/zod-openapi";
import { allCatalogSlugs, COUNTRY_CATALOGS, countryCatalogs, filterEntries, type Catalog, type CountryCatalogs } from "../../../countries/catalogs";
import { AppError } from "../../../lib/errors";
import { validationHook } from "../../errors/handler";
import { PageQuerySchema, pageEnvelope, pageParams } from "../../openapi/common";
import { defineRoute } from "../../route";
import type { AppEnv } from "../../types";
import { cachedJson } from "./cache";
import { CatalogIndexPageSchema, CatalogPageSchema, CatalogQuerySchema, CountryCatalogIndexSchema, CountryParam, NOT_MODIFIED } from "./schemas";
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

/** A country's index as the examples show it: its first three catalogs of the real list. */
function indexExample() {
  const index = countryIndex(COUNTRY_CATALOGS[0]!);
  return { ...index, catalogs: index.catalogs.slice(0, 3) };
}

/** The caching headers every catalog answer carries. */
const CACHING = { ETag: { schema: { type: "string" as const } }, "Cache-Control": { schema: { type: "string" as const } } };

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
        headers: CACHING,
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

/** What a country serves: each catalog with where to list it, and the look-ups by key. */
function countryIndex(country: CountryCatalogs) {
  const base = `/api/catalogs/${country.alpha3}`;
  return {
    country: country.alpha3,
    alpha2: country.alpha2,
    path: base,
    catalogs: country.catalogs.map((k) => ({ slug: k.slug, title: k.title, description: k.description, path: `${base}/${k.slug}`, total: k.entries.length, source: k.source })),
    lookups: [{ name: "taxpayers", path: `${base}/taxpayers/{tax_id}`, description: "A taxpayer of the tax authority's register by its tax id: legal name, activities, whether it issues electronic documents." }],
  };
}

catalogsRoutes.openapi(
  defineRoute({
    method: "get",
    path: "/api/catalogs",
    tags: ["Catalogs"],
    summary: "List the countries with catalogs",
    description: "Every country the service has reference catalogs for, each with its catalogs (slug, title, where to list it, how many entries, official source) and its look-ups by key. Start here to find a catalog's path. Answers carry `ETag` and `Cache-Control`; send `If-None-Match` to get 304.",
    permission: "company:read",
    request: { query: PageQuerySchema },
    errors: ["VALIDATION_FAILED"],
    responses: {
      200: { description: "A page of countries", headers: CACHING, content: { "application/json": { schema: CatalogIndexPageSchema, example: pageEnvelope([indexExample()], COUNTRY_CATALOGS.length, pageParams({})) } } },
      304: NOT_MODIFIED,
    },
  }),
  async (c) => {
    const p = pageParams(c.req.valid("query"));
    const rows = COUNTRY_CATALOGS.map(countryIndex);
    return cachedJson(c, pageEnvelope(rows.slice(p.offset, p.offset + p.perPage), rows.length, p)) as any;
  },
);

catalogsRoutes.openapi(
  defineRoute({
    method: "get",
    path: "/api/catalogs/{country}",
    tags: ["Catalogs"],
    summary: "Get a country's catalog index",
    description: "The catalogs one country serves (slug, title, where to list it, how many entries, official source) and its look-ups by key. Answers carry `ETag` and `Cache-Control`; send `If-None-Match` to get 304.",
    permission: "company:read",
    request: { params: CountryParam },
    errors: ["VALIDATION_FAILED", "CATALOG_COUNTRY_NOT_SUPPORTED"],
    responses: {
      200: { description: "The country's catalogs", headers: CACHING, content: { "application/json": { schema: CountryCatalogIndexSchema, example: indexExample() } } },
      304: NOT_MODIFIED,
    },
  }),
  async (c) => cachedJson(c, countryIndex(countryOrThrow(c.req.valid("param").country))) as any,
);

for (const catalog of allCatalogSlugs()) register(catalog);
catalogsRoutes.route("/", taxpayerRoutes);
