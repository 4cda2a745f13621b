import { OpenAPIHono, z } from "@hono/zod-openapi";
import { createDb } from "../../../storage/db/client";
import {
  activateCertificate, deleteCertificate, getCertificate, listCertificates, uploadCertificate, validityOf, type CertificateRow,
} from "../../../accounts/certificates/certificates";
import { AppError } from "../../../lib/errors";
import { validationHook } from "../../errors/handler";
import { defineRoute, MULTIPART_OVERHEAD_BYTES } from "../../route";
import { filePart, pageSchema, singlePage, json, textPart } from "../../openapi/common";
import type { AppEnv } from "../../types";
import { certificateDeletedExample, certificateExample, certificatePageExample, certificateUploadExample } from "./examples";


export const MAX_PFX_BYTES = 64 * 1024;

const CertificateSchema = z
  .object({
    id: z.string().openapi({ example: "cer_01JD3Q4M6YV8T1N5B2K7C9XW3E" }),
    id_company: z.string(),
    subject_name: z.string().nullable().openapi({ description: "Holder's common name." }),
    holder_rut: z.string().nullable().openapi({ example: "11111111-1", description: "Holder's RUT from the certificate (the RutEnvia of every envelope)." }),
    issuer_name: z.string().nullable(),
    serial_number: z.string(),
    fingerprint_sha1: z.string(),
    valid_from: z.string().openapi({ description: "ISO 8601, UTC." }),
    valid_to: z.string().openapi({ description: "ISO 8601, UTC." }),
    validity: z.enum(["VALID", "EXPIRED", "NOT_YET_VALID"]).openapi({ description: "Computed now." }),
    active: z.boolean().openapi({ description: "The certificate every signature uses. One per company." }),
    created_at: z.string(),
  })
  .openapi("Certificate");

const CertificateUploadSchema = z
  .object({
    certificate: filePart("the .pfx", "The .pfx / .p12 file (legacy RC2/3DES or modern AES), at most 64 KiB."),
    password: textPart("the .pfx password", "Password of the .pfx."),
  })
  .openapi("CertificateUpload");

const Params = z.object({ company_id: z.string().min(1).max(64).openapi({ param: { name: "company_id", in: "path" } }) });
const CertParams = Params.extend({ certificate_id: z.string().min(1).max(64).openapi({ param: { name: "certificate_id", in: "path" } }) });

function view(row: CertificateRow) {
  return {
    id: row.id,
    id_company: row.companyId,
    subject_name: row.subjectName,
    holder_rut: row.holderRut,
    issuer_name: row.issuerName,
    serial_number: row.serialNumber,
    fingerprint_sha1: row.fingerprintSha1,
    valid_from: row.validFrom,
    valid_to: row.validTo,
    validity: validityOf(row),
    active: row.active,
    created_at: row.createdAt,
  };
}

const upload = defineRoute({
  method: "post",
  path: "/api/companies/{company_id}/certificates",
  tags: ["Certificates"],
  summary: "Upload a signing certificate (.pfx)",
  maxBodyBytes: MAX_PFX_BYTES + MULTIPART_OVERHEAD_BYTES,
  description:
    "multipart/form-data with parts `certificate` (the .pfx) and `password` (DECISIONS 16). The file is opened (legacy and modern encryption), the key matching the certificate is picked, its dates are checked and it must carry the holder's RUT (the SII authenticates the sender by it; in simulator mode test and self-signed certificates are accepted, DECISIONS 19). The file and password are stored encrypted (AES-GCM); key material is never returned. The new certificate becomes the active one.",
  permission: "company:configure",
  request: { params: Params, body: { required: true, content: { "multipart/form-data": { schema: CertificateUploadSchema, example: certificateUploadExample } } } },
  responses: { 201: { description: "Stored and active", ...json(CertificateSchema, certificateExample) } },
  errors: [
    "VALIDATION_FAILED", "UNSUPPORTED_MEDIA_TYPE", "PAYLOAD_TOO_LARGE", "CERTIFICATE_NOT_PFX", "CERTIFICATE_WRONG_PASSWORD", "CERTIFICATE_PFX_TOO_COSTLY",
    "CERTIFICATE_NO_PRIVATE_KEY", "CERTIFICATE_NO_CERTIFICATE", "CERTIFICATE_KEY_MISMATCH", "CERTIFICATE_NO_RUT", "CERTIFICATE_RUT_INVALID",
    "CERTIFICATE_EXPIRED", "CERTIFICATE_NOT_YET_VALID", "CERTIFICATE_DUPLICATE",
  ],
});

const list = defineRoute({
  method: "get",
  path: "/api/companies/{company_id}/certificates",
  tags: ["Certificates"],
  summary: "List the company's certificates",
  description: "Newest first, with holder, RUT, validity and which one is active.",
  permission: "company:read",
  request: { params: Params },
  responses: {
    200: {
      description: "All stored certificates (a company has few, so one page holds them all)",
      ...json(pageSchema(CertificateSchema, "CertificatePage"), certificatePageExample),
    },
  },
});

const get = defineRoute({
  method: "get",
  path: "/api/companies/{company_id}/certificates/{certificate_id}",
  tags: ["Certificates"],
  summary: "Get a certificate",
  permission: "company:read",
  request: { params: CertParams },
  responses: { 200: { description: "The certificate", ...json(CertificateSchema, certificateExample) } },
  errors: ["CERTIFICATE_NOT_FOUND"],
});

const activate = defineRoute({
  method: "post",
  path: "/api/companies/{company_id}/certificates/{certificate_id}/activate",
  tags: ["Certificates"],
  summary: "Make a certificate the active one",
  permission: "company:configure",
  request: { params: CertParams },
  responses: { 200: { description: "Now active", ...json(CertificateSchema, certificateExample) } },
  errors: ["CERTIFICATE_NOT_FOUND", "CERTIFICATE_EXPIRED", "CERTIFICATE_NOT_YET_VALID"],
});

const remove = defineRoute({
  method: "delete",
  path: "/api/companies/{company_id}/certificates/{certificate_id}",
  tags: ["Certificates"],
  summary: "Delete a certificate",
  description: "Destroys the stored key material; the record stays for audit but leaves the list. Deleting the active certificate stops issuance until another is active.",
  permission: "company:configure",
  request: { params: CertParams },
  responses: { 200: { description: "Deleted", ...json(CertificateSchema.extend({ active: z.literal(false) }), certificateDeletedExample) } },
  errors: ["CERTIFICATE_NOT_FOUND", "CONTROL_DIRECTORY_UNAVAILABLE"],
});

export const certificatesRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(upload, async (c) => {
    const { certificate: pfx, password } = c.req.valid("form");
    if (pfx.size > MAX_PFX_BYTES) throw new AppError("PAYLOAD_TOO_LARGE", `The certificate file is ${pfx.size} bytes; at most ${MAX_PFX_BYTES} are accepted.`);
    const row = await uploadCertificate(createDb(c.env.DB), c.env, c.get("company").id, new Uint8Array(await pfx.arrayBuffer()), password);
    return c.json(view(row), 201);
  })
  .openapi(list, async (c) => {
    const rows = await listCertificates(createDb(c.env.DB), c.get("company").id);
    return c.json(singlePage(rows.map(view)), 200);
  })
  .openapi(get, async (c) => c.json(view(await getCertificate(createDb(c.env.DB), c.get("company").id, c.req.valid("param").certificate_id)), 200))
  .openapi(activate, async (c) => c.json(view(await activateCertificate(createDb(c.env.DB), c.env, c.get("company").id, c.req.valid("param").certificate_id)), 200))
  .openapi(remove, async (c) => {
    const row = await deleteCertificate(createDb(c.env.DB), c.env, c.get("company").id, c.req.valid("param").certificate_id);
    return c.json({ ...view(row), active: false as const }, 200);
  });
