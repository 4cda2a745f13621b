import { OpenAPIHono } from "@hono/zod-openapi";
import { createDb } from "../../../storage/db/client";
import { companyListItem, createCompany, listCompanies, setIssuerProfile, softDeleteCompany, timeZonesOf } from "../../../accounts/companies/companies";
import { getSettings, setLogo, settingsView, updateSettings } from "../../../accounts/companies/settings";
import { receptionEmail, receptionToken } from "../../../accounts/companies/reception-address";
import { createdId, newId } from "../../../lib/ids";
import { detectImage, r2Keys } from "../../../storage/keys";
import { issuingCountry } from "../../../countries";
import { AppError } from "../../../lib/errors";
import { validationHook } from "../../errors/handler";
import { idempotency } from "../../middleware/idempotency";
import { PageQuerySchema, pageEnvelope, pageParams, pageSchema, json } from "../../openapi/common";
import { defineRoute, MULTIPART_OVERHEAD_BYTES } from "../../route";
import type { AppEnv } from "../../types";
import {
  CompanyCreatedSchema, CompanyCreateSchema, CompanyIdParam, CompanyItemSchema, CompanyListQuerySchema, CompanyPatchSchema,
  DeletedSchema, LogoResultSchema, LogoUploadSchema, SettingsPatchSchema, SettingsSchema,
} from "./schemas";
import {
  companyCreatedExample, companyCreateExample, companyDeletedExample, companyExample, companyPageExample, logoResultExample,
  logoUploadExample, settingsExample, settingsPatchExample,
  issuerProfilePatchExample,
} from "./examples";

export const MAX_LOGO_BYTES = 1024 * 1024;


const createRouteDef = defineRoute({
  method: "post",
  path: "/api/companies",
  tags: ["Companies"],
  summary: "Create a company",
  description:
    "Registers an issuing company for the key's client. Every OWNER and ADMIN key of the client reaches it. Accepts an `Idempotency-Key` header (DECISIONS 11).",
  permission: "company:create",
  middleware: [idempotency],
  request: { body: { required: true, ...json(CompanyCreateSchema, companyCreateExample) } },
  responses: { 201: { description: "Created", ...json(CompanyCreatedSchema, companyCreatedExample) } },
  errors: [
    "VALIDATION_FAILED", "MALFORMED_JSON", "UNSUPPORTED_MEDIA_TYPE", "PAYLOAD_TOO_LARGE",
    "COMPANY_COUNTRY_UNKNOWN", "COMPANY_DOCUMENT_CODE_UNKNOWN", "COMPANY_TAX_ID_INVALID", "COMPANY_TAX_ID_TAKEN",
    "IDEMPOTENCY_KEY_INVALID", "IDEMPOTENCY_KEY_REUSED", "IDEMPOTENCY_KEY_IN_USE",
  ],
});

const listRouteDef = defineRoute({
  method: "get",
  path: "/api/companies",
  tags: ["Companies"],
  summary: "List companies",
  description: "Companies the key can access, oldest first (created_at, then id). Deleted companies appear only with `status=DELETED`.",
  permission: "company:read",
  request: { query: PageQuerySchema.extend(CompanyListQuerySchema.shape) },
  responses: { 200: { description: "A page of companies", ...json(pageSchema(CompanyItemSchema, "CompanyPage"), companyPageExample) } },
  errors: ["VALIDATION_FAILED"],
});

const getRouteDef = defineRoute({
  method: "get",
  path: "/api/companies/{idCompany}",
  tags: ["Companies"],
  summary: "Get a company",
  permission: "company:read",
  request: { params: CompanyIdParam },
  responses: { 200: { description: "The company", ...json(CompanyItemSchema, companyExample) } },
  });

const patchRouteDef = defineRoute({
  method: "patch",
  path: "/api/companies/{idCompany}",
  tags: ["Companies"],
  summary: "Change a company's issuer profile",
  description:
    "Sets the company's issuer profile (`issuer_profile`: the issuer block's address, activity and its codes, e-mail, phones, branch; replaced whole), or removes it with null. Documents sent without `issuer` are issued with it; documents that send `issuer` must agree with each field it sets. Documents already issued keep their issuer.",
  permission: "company:configure",
  request: { params: CompanyIdParam, body: { required: true, ...json(CompanyPatchSchema, issuerProfilePatchExample) } },
  responses: { 200: { description: "The company", ...json(CompanyItemSchema, companyExample) } },
  errors: ["VALIDATION_FAILED", "MALFORMED_JSON", "UNSUPPORTED_MEDIA_TYPE", "PAYLOAD_TOO_LARGE"],
});

const deleteRouteDef = defineRoute({
  method: "delete",
  path: "/api/companies/{idCompany}",
  tags: ["Companies"],
  summary: "Delete a company (soft delete)",
  description:
    "Marks the company DELETED (OWNER keys only). Nothing is removed: it leaves the lists unless filtered by `status=DELETED`, and every other operation on it answers 404. The `apiKey` parameter of the reference is ignored; only X-Api-Key counts.",
  permission: "company:delete",
  request: { params: CompanyIdParam },
  responses: { 200: { description: "Company deleted", ...json(DeletedSchema, companyDeletedExample) } },
  errors: ["CONTROL_DIRECTORY_UNAVAILABLE"],
});

const getSettingsDef = defineRoute({
  method: "get",
  path: "/api/companies/{idCompany}/settings",
  tags: ["Company Settings"],
  summary: "Get company settings",
  permission: "company:read",
  request: { params: CompanyIdParam },
  responses: { 200: { description: "Settings", ...json(SettingsSchema, settingsExample) } },
  });

const patchSettingsDef = defineRoute({
  method: "patch",
  path: "/api/companies/{idCompany}/settings",
  tags: ["Company Settings"],
  summary: "Update company settings",
  description:
    "Partial update. `decimal_places` 0-4; separators `.` or `,` and never equal; `language` a BCP 47 tag; `time_zone` an IANA zone. Defaults: 0 decimals, `.` thousands, `,` decimals, es-CL, America/Santiago.",
  permission: "company:configure",
  request: { params: CompanyIdParam, body: { required: true, ...json(SettingsPatchSchema, settingsPatchExample) } },
  responses: { 200: { description: "Updated settings", ...json(SettingsSchema, settingsExample) } },
  errors: ["VALIDATION_FAILED", "MALFORMED_JSON", "UNSUPPORTED_MEDIA_TYPE"],
});

const uploadLogoDef = defineRoute({
  method: "post",
  path: "/api/companies/{idCompany}/logo",
  tags: ["Companies"],
  summary: "Upload the company logo",
  maxBodyBytes: MAX_LOGO_BYTES + MULTIPART_OVERHEAD_BYTES,
  description:
    "multipart/form-data with part `logo`: PNG or JPEG (detected from the bytes, not the declared type), at most 1 MiB and 4096 x 4096 pixels, parsed completely by the routine that draws it on the PDFs (a file that only starts like an image is refused). The logo is stored and served by this service at `file_url` (no key needed, unguessable URL) and appears on the PDFs. An `apiKey` form field is ignored.",
  permission: "company:configure",
  request: { params: CompanyIdParam, body: { required: true, content: { "multipart/form-data": { schema: LogoUploadSchema, example: logoUploadExample } } } },
  responses: { 201: { description: "Stored", ...json(LogoResultSchema, logoResultExample) } },
  errors: [
    "VALIDATION_FAILED", "UNSUPPORTED_MEDIA_TYPE", "PAYLOAD_TOO_LARGE", "LOGO_INVALID_FORMAT", "LOGO_TOO_LARGE",
  ],
});

export const companiesRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(createRouteDef, async (c) => {
    const company = await createCompany(createDb(c.env.DB), c.get("principal"), c.req.valid("json"), await createdId("cmp", c.env.API_KEY_PEPPER, c.get("idempotency")));
    return c.json({ id_company: company.id, id: company.id }, 201);
  })
  .openapi(listRouteDef, async (c) => {
    const query = c.req.valid("query");
    const page = pageParams(query);
    const db = createDb(c.env.DB);
    const { rows, total } = await listCompanies(db, c.get("principal"), query, page);
    const zones = await timeZonesOf(db, rows.map((r) => r.id));
    return c.json(pageEnvelope(rows.map((r) => companyListItem(r, zones.get(r.id) ?? "America/Santiago")), total, page), 200);
  })
  .openapi(patchRouteDef, async (c) => {
    const db = createDb(c.env.DB);
    const company = await setIssuerProfile(db, c.env, c.get("company"), c.req.valid("json").issuer_profile);
    const settings = await getSettings(db, c.env, company.id);
    return c.json(companyListItem(company, settings.timeZone), 200);
  })
  .openapi(getRouteDef, async (c) => {
    const company = c.get("company");
    const settings = await getSettings(createDb(c.env.DB), c.env, company.id);
    return c.json(companyListItem(company, settings.timeZone), 200);
  })
  .openapi(deleteRouteDef, async (c) => {
    const company = c.get("company");
    await softDeleteCompany(createDb(c.env.DB), c.env, company);
    return c.json({ id: company.id, status: "DELETED" as const, message: "Company deleted" }, 200);
  })
  .openapi(getSettingsDef, async (c) => {
    const db = createDb(c.env.DB);
    const id = c.get("company").id;
    return c.json({ ...settingsView(await getSettings(db, c.env, id)), reception_email: receptionEmail(await receptionToken(db, id), c.env.RECEPTION_DOMAIN) }, 200);
  })
  .openapi(patchSettingsDef, async (c) => {
    const db = createDb(c.env.DB);
    const id = c.get("company").id;
    return c.json({ ...settingsView(await updateSettings(db, c.env, id, c.req.valid("json"))), reception_email: receptionEmail(await receptionToken(db, id), c.env.RECEPTION_DOMAIN) }, 200);
  })
  .openapi(uploadLogoDef, async (c) => {
    const company = c.get("company");
    const { logo: part } = c.req.valid("form");
    if (part.size > MAX_LOGO_BYTES) {
      throw new AppError("LOGO_TOO_LARGE", `The logo is ${part.size} bytes; at most ${MAX_LOGO_BYTES} bytes (1 MiB) are accepted.`, [{ field: "logo", message: "At most 1 MiB" }]);
    }
    const bytes = new Uint8Array(await part.arrayBuffer());
    const kind = detectImage(bytes);
    if (!kind) {
      throw new AppError("LOGO_INVALID_FORMAT", "The logo must be a PNG or JPEG image; the file's content is neither, whatever its name or declared type.", [
        { field: "logo", message: "Not a PNG or JPEG image" },
      ]);
    }
    const problem = await issuingCountry().printing.logoProblem(bytes);
    if (problem) throw new AppError("LOGO_INVALID_FORMAT", `The logo cannot be drawn: ${problem}`, [{ field: "logo", message: problem }]);
    const logoId = newId("lgo");
    const key = r2Keys.logo(company.id, logoId, kind.ext);
    await c.env.FILES.put(key, bytes, { httpMetadata: { contentType: kind.contentType, cacheControl: "public, max-age=31536000, immutable" } });
    const fileUrl = `${new URL(c.req.url).origin}/files/logos/${company.id}/${logoId}.${kind.ext}`;
    await setLogo(createDb(c.env.DB), c.env, company.id, key, fileUrl);
    return c.json({ file_url: fileUrl }, 201);
  });
