import { OpenAPIHono, z } from "@hono/zod-openapi";
import { AppError } from "../../../lib/errors";
import { r2Keys } from "../../../storage/keys";
import { validationHook } from "../../errors/handler";
import { defineRoute } from "../../route";
import type { AppEnv } from "../../types";

/** Public files: company logos at unguessable URLs. */
const logoFile = defineRoute({
  method: "get",
  path: "/files/logos/{company_id}/{file}",
  tags: ["Companies"],
  summary: "Download a company logo",
  description: "The `file_url` returned by the logo upload. Public (no key): the URL is unguessable. No longer served once the company is deleted.",
  public: true,
  request: {
    params: z.object({
      company_id: z.string().min(1).max(64).openapi({ param: { name: "company_id", in: "path" } }),
      file: z.string().regex(/^lgo_[0-9A-Z]{26}\.(png|jpg)$/, "A logo file name").openapi({ param: { name: "file", in: "path" } }),
    }),
  },
  responses: {
    200: {
      description: "The image",
      content: { "image/png": { schema: z.any().openapi({ type: "string", format: "binary" }) }, "image/jpeg": { schema: z.any().openapi({ type: "string", format: "binary" }) } },
    },
  },
  errors: ["VALIDATION_FAILED", "LOGO_NOT_FOUND"],
});

export const filesRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook }).openapi(logoFile, async (c) => {
  const { company_id, file } = c.req.valid("param");
  // A deleted company's logo is no longer public (the object is kept with the company's data).
  const live = await c.env.DB.prepare("SELECT 1 FROM companies WHERE id = ? AND status = 'ACTIVE'").bind(company_id).first();
  if (!live) throw new AppError("LOGO_NOT_FOUND", "No such logo.");
  const object = await c.env.FILES.get(r2Keys.logoFile(company_id, file));
  if (!object) throw new AppError("LOGO_NOT_FOUND", "No such logo.");
  return new Response(object.body, {
    headers: {
      "Content-Type": object.httpMetadata?.contentType ?? "application/octet-stream",
      // Not immutable: the file stops being served when the company is deleted.
      "Cache-Control": "public, max-age=3600",
      ETag: object.httpEtag,
      "X-Content-Type-Options": "nosniff",
    },
  }) as never;
});
