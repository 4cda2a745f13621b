import { OpenAPIHono, z } from "@hono/zod-openapi";
import { createDb } from "../../../storage/db/client";
import { enumerationOverview, enumerationView, loadCaf, refetchCaf, setAlertThreshold, setNextFolio, type CafRow, allocator } from "../../../folios/cafs";
import { AppError } from "../../../lib/errors";
import { validationHook } from "../../errors/handler";
import { defineRoute, MULTIPART_OVERHEAD_BYTES } from "../../route";
import { filePart, pageSchema, singlePage, json } from "../../openapi/common";
import type { AppEnv } from "../../types";
import {
  cafUploadExample, enumerationPageExample, nextFolioExample, nextFolioResultExample, rangeLoadedExample, refetchedExample, refetchExample, thresholdExample,
  thresholdResultExample,
} from "./examples";

export const MAX_CAF_BYTES = 64 * 1024;

const RangeSchema = z
  .object({
    id: z.string().openapi({ example: "caf_01JD3Q4M6YV8T1N5B2K7C9XW3E" }),
    enumeration_from: z.number().int(),
    enumeration_end: z.number().int(),
    active: z.boolean(),
    authorized_at: z.string().openapi({ format: "date", description: "FA of the CAF." }),
    expires_at: z.string().nullable().openapi({ format: "date", description: "Last day its folios may be stamped (6 months after FA for 33, 46, 56, 61); null when they do not expire." }),
    expired: z.boolean(),
    available: z.number().int().openapi({ description: "Unused folios left in this range." }),
    next_folio: z.number().int().nullable().openapi({ description: "Lowest unused folio of this range." }),
    annulled: z.number().int(),
    source: z.enum(["UPLOAD", "AUTHORITY"]).openapi({ description: "Uploaded by the client, or obtained from the tax authority (refetch)." }),
    created_at: z.string(),
  })
  .openapi("FolioRange");

const EnumerationSchema = z
  .object({
    id_document_type: z.string().openapi({ example: "33", description: "SII document code; use it as {document_type_id}." }),
    document_type_name: z.string().openapi({ example: "FACTURA ELECTRÓNICA" }),
    folios_available: z.number().int().openapi({ description: "Folios allocation can still hand out (active, unexpired ranges)." }),
    next_folio: z.number().int().nullable().openapi({ description: "The folio the next document of this type gets." }),
    alert_threshold: z.number().int().openapi({ description: "An ENU event is recorded when availability falls under it." }),
    alert_threshold_is_default: z.boolean().openapi({ description: "true while no threshold was set (default: 10% of the loaded folios)." }),
    expired_unused: z.number().int().openapi({ description: "Unused folios of expired ranges (never consumed)." }),
    ranges: z.array(RangeSchema),
  })
  .openapi("Enumeration");

const UploadedSchema = RangeSchema.extend({ id_document_type: z.string(), document_type_name: z.string() }).openapi("FolioRangeLoaded");

const Params = z.object({ idCompany: z.string().min(1).max(64).openapi({ param: { name: "idCompany", in: "path" } }) });
const TypeParams = Params.extend({
  document_type_id: z.string().min(1).max(8).openapi({ param: { name: "document_type_id", in: "path" }, example: "33", description: "id_document_type from the list (SII code) or its mnemonic (FAC, NCV, ...)." }),
});

const upload = defineRoute({
  method: "post",
  path: "/api/companies/{idCompany}/enumeration/upload",
  maxBodyBytes: MAX_CAF_BYTES + MULTIPART_OVERHEAD_BYTES,
  tags: ["Enumeration (CAF)"],
  summary: "Upload a CAF file",
  description:
    "multipart/form-data, part `file`: the CAF XML as downloaded from the SII (ISO-8859-1). It is verified (SII signature of its IDK, key pair), must be the company's RUT and a document type we issue, must not be expired, and must not repeat or overlap a loaded range.",
  permission: "company:configure",
  request: { params: Params, body: { required: true, content: { "multipart/form-data": { schema: z.object({ file: filePart("the CAF XML", "The CAF XML as downloaded from the SII, at most 64 KiB.") }).openapi("CafUpload"), example: cafUploadExample } } } },
  responses: { 201: { description: "Loaded", ...json(UploadedSchema, rangeLoadedExample) } },
  errors: [
    "VALIDATION_FAILED", "UNSUPPORTED_MEDIA_TYPE", "PAYLOAD_TOO_LARGE", "ENUMERATION_CAF_INVALID", "ENUMERATION_CAF_WRONG_COMPANY",
    "ENUMERATION_CAF_UNKNOWN_TYPE", "ENUMERATION_CAF_WRONG_ENVIRONMENT", "ENUMERATION_CAF_DUPLICATE", "ENUMERATION_CAF_OVERLAP", "ENUMERATION_CAF_HELD_ELSEWHERE",
  ],
});

const list = defineRoute({
  method: "get",
  path: "/api/companies/{idCompany}/enumeration/list",
  tags: ["Enumeration (CAF)"],
  summary: "List folio ranges per document type",
  description: "One entry per document type with loaded CAFs: its ranges, folios available, the next folio and the alert threshold.",
  permission: "company:read",
  request: { params: Params },
  responses: {
    200: {
      description: "Folio ranges",
      ...json(pageSchema(EnumerationSchema, "EnumerationPage"), enumerationPageExample),
    },
  },
});

const refetch = defineRoute({
  method: "post",
  path: "/api/companies/{idCompany}/enumeration/refetch",
  tags: ["Enumeration (CAF)"],
  summary: "Request a CAF from the tax authority",
  description:
    "Asks the tax authority for `quantity` more folios of `document_type` and loads the CAF it grants. Works against the SII simulator. Against the real SII it answers 501 ENUMERATION_REFETCH_NOT_SUPPORTED: the SII hands out CAFs only in its web portal, in a session authenticated with the taxpayer's certificate over mutual TLS, which a Worker cannot present per company.",
  permission: "company:configure",
  request: {
    params: Params,
    body: {
      required: true,
      ...json(
        z
          .object({
            document_type: z.string().min(1).max(8).openapi({ example: "33" }),
            quantity: z.number().int("A whole number").min(1, "At least 1").max(10_000, "At most 10,000").default(100).openapi({ example: 100 }),
          })
          .openapi("CafRefetch"),
        refetchExample,
      ),
    },
  },
  responses: { 201: { description: "Granted and loaded", ...json(UploadedSchema, refetchedExample) } },
  errors: [
    "VALIDATION_FAILED", "MALFORMED_JSON", "UNSUPPORTED_MEDIA_TYPE", "ENUMERATION_DOCUMENT_TYPE_UNKNOWN", "ENUMERATION_REFETCH_NOT_SUPPORTED",
    "ENUMERATION_CAF_WRONG_COMPANY", "ENUMERATION_CAF_OVERLAP", "ENUMERATION_CAF_HELD_ELSEWHERE", "ENUMERATION_CAF_INVALID", "SIMULATOR_CAF_OVERLAP", "ENUMERATION_AUTHORITY_UNAVAILABLE",
  ],
});

const nextFolio = defineRoute({
  method: "put",
  path: "/api/companies/{idCompany}/enumeration/document-type/{document_type_id}/next-folio",
  tags: ["Enumeration (CAF)"],
  summary: "Set the next folio",
  description:
    "Specification §3 and §4.7: N must be in a loaded, active range; every lower folio across the type's active ranges is marked used (`folios_updated` counts those newly marked); `next_number_to_use` may be above N when N is already used or annulled. Errors: 400 ENUMERATION_OUT_OF_RANGE (outside every range or in a gap), 400 ENUMERATION_NO_FOLIOS_AVAILABLE_FROM (nothing modified), 404 ENUMERATION_NOT_FOUND (no active ranges).",
  permission: "company:configure",
  request: {
    params: TypeParams,
    body: { required: true, ...json(z.object({ next_folio_number: z.number().int("A whole number").min(1, "At least 1").max(9_999_999_999) }).openapi("NextFolio"), nextFolioExample) },
  },
  responses: {
    200: {
      description: "Moved",
      ...json(
        z
          .object({ id_document_type: z.string(), folios_updated: z.number().int(), next_number_to_use: z.number().int(), message: z.string() })
          .openapi("NextFolioResult"),
        nextFolioResultExample,
      ),
    },
  },
  errors: ["VALIDATION_FAILED", "MALFORMED_JSON", "UNSUPPORTED_MEDIA_TYPE", "ENUMERATION_DOCUMENT_TYPE_UNKNOWN", "ENUMERATION_OUT_OF_RANGE", "ENUMERATION_NO_FOLIOS_AVAILABLE_FROM", "ENUMERATION_NOT_FOUND"],
});

const threshold = defineRoute({
  method: "put",
  path: "/api/companies/{idCompany}/enumeration/document-type/{document_type_id}/alert-threshold",
  tags: ["Enumeration (CAF)"],
  summary: "Set the low-folio alert threshold",
  description: "An `ENU` event is recorded when the folios available for the type fall under it. `null` restores the default (10% of the loaded folios).",
  permission: "company:configure",
  request: {
    params: TypeParams,
    body: { required: true, ...json(z.object({ alert_threshold: z.number().int().min(0).max(1_000_000).nullable() }).openapi("AlertThreshold"), thresholdExample) },
  },
  responses: {
    200: {
      description: "Set",
      ...json(z.object({ id_document_type: z.string(), alert_threshold: z.number().int(), alert_threshold_is_default: z.boolean() }).openapi("AlertThresholdResult"), thresholdResultExample),
    },
  },
  errors: ["VALIDATION_FAILED", "MALFORMED_JSON", "UNSUPPORTED_MEDIA_TYPE", "ENUMERATION_DOCUMENT_TYPE_UNKNOWN", "ENUMERATION_THRESHOLD_INVALID"],
});

async function loadedView(c: { env: AppEnv["Bindings"] }, row: CafRow) {
  const status = await allocator(c.env, row.companyId, row.documentType).status();
  const view = enumerationView(row.documentType, [row], status);
  return { ...view.ranges[0]!, id_document_type: view.id_document_type, document_type_name: view.document_type_name };
}

export const enumerationRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(upload, async (c) => {
    const { file } = c.req.valid("form");
    if (file.size > MAX_CAF_BYTES) throw new AppError("PAYLOAD_TOO_LARGE", `The CAF file is ${file.size} bytes; at most ${MAX_CAF_BYTES} are accepted.`);
    const row = await loadCaf(createDb(c.env.DB), c.env, c.get("company"), new Uint8Array(await file.arrayBuffer()), "UPLOAD");
    return c.json(await loadedView(c, row), 201);
  })
  .openapi(list, async (c) => {
    const data = await enumerationOverview(createDb(c.env.DB), c.env, c.get("company").id);
    return c.json(singlePage(data), 200);
  })
  .openapi(refetch, async (c) => {
    const row = await refetchCaf(createDb(c.env.DB), c.env, c.get("company"), c.req.valid("json"));
    return c.json(await loadedView(c, row), 201);
  })
  .openapi(nextFolio, async (c) => {
    const { document_type_id } = c.req.valid("param");
    return c.json(await setNextFolio(c.env, c.get("company").id, document_type_id, c.req.valid("json").next_folio_number), 200);
  })
  .openapi(threshold, async (c) => {
    const { document_type_id } = c.req.valid("param");
    return c.json(await setAlertThreshold(c.env, c.get("company").id, document_type_id, c.req.valid("json").alert_threshold), 200);
  });
