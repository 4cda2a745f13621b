import { OpenAPIHono, z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { createDb } from "../../../storage/db/client";
import { AppError } from "../../../lib/errors";
import { validationHook } from "../../../http/errors/handler";
import { defineRoute } from "../../../http/route";
import type { AppEnv } from "../../../http/types";
import { isValidRut, normalizeRut } from "../documents/rut";
import { DOCUMENT_TYPES } from "../documents/document-types";
import { grantSimulatorCaf } from "./caf-grants";
import { ownTestRuts, simulatorReachable } from "./gate";
import { cafXmlExample } from "../../../http/openapi/xml-examples";

/** The simulated SII is open in local development and to test keys elsewhere (./gate.ts); otherwise its paths are unknown. */
export const simulatorOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!(await simulatorReachable(c))) {
    throw new AppError("ROUTE_NOT_FOUND", `No operation at ${c.req.method} ${new URL(c.req.url).pathname}: the SII simulator answers without a key only in local development, and elsewhere only to a test key (X-Api-Key: dte_test_…).`);
  }
  await next();
};

const grant = defineRoute({
  method: "post",
  path: "/simulator/sii/caf",
  tags: ["Simulator"],
  summary: "Simulator: obtain a CAF file",
  description:
    "The simulated SII's portal (DECISIONS 18): open in local development (`ENVIRONMENT=development`, `SII_MODE=simulator`); in any other deployment (tests, staging, production) it answers only with a test key in `X-Api-Key` (`dte_test_…`), and 404 otherwise; a test key gets CAFs only for the RUTs of its client's active test-mode companies (403 `SIMULATOR_RUT_NOT_OWNED` for any other). Answers a CAF file for the range, signed by the simulator's own SII key (IDK 999), the way a taxpayer downloads one from the SII portal; upload it to /enumeration/upload. Without `from`/`to`, grants the next `quantity` folios (default 100). Ranges never overlap earlier grants for the same RUT and type.",
  public: true,
  keyNote: "A test key in `X-Api-Key` outside local development (above).",
  middleware: [simulatorOnly],
  request: {
    body: {
      required: true,
      content: {
        "application/json": {
          schema: z
            .object({
              rut: z.string().refine(isValidRut, "A RUT with a valid check digit, e.g. 76086428-5").openapi({ example: "76086428-5" }),
              document_type: z
                .number()
                .int()
                .refine((t) => t in DOCUMENT_TYPES, `One of ${Object.keys(DOCUMENT_TYPES).join(", ")}`)
                .openapi({ example: 33 }),
              from: z.number().int().min(1).max(9_999_999_999).optional().openapi({ example: 1 }),
              to: z.number().int().min(1).max(9_999_999_999).optional().openapi({ example: 100 }),
              quantity: z.number().int().min(1).max(10_000).optional(),
              legal_name: z.string().max(100).optional(),
            })
            .refine((b) => (b.from === undefined) === (b.to === undefined), { message: "Send both from and to, or neither", path: ["to"] })
            .refine((b) => b.from === undefined || b.to! >= b.from, { message: "to must not be below from", path: ["to"] })
            .refine((b) => b.from === undefined || b.to! - b.from < 100_000, { message: "At most 100,000 folios per CAF", path: ["to"] })
            .openapi("SimulatorCafRequest"),
          example: { rut: "76086428-5", document_type: 33, quantity: 100, legal_name: "COMERCIAL LOS ANDES SPA" },
        },
      },
    },
  },
  responses: {
    200: {
      description: "The CAF file (ISO-8859-1)",
      content: { "application/xml": { schema: z.string().openapi({ description: "<AUTORIZACION><CAF version=\"1.0\">…</CAF><RSASK>…</RSASK><RSAPUBK>…</RSAPUBK></AUTORIZACION>" }), example: cafXmlExample.replace("<IDK>100</IDK>", "<IDK>999</IDK>") } },
    },
  },
  errors: ["VALIDATION_FAILED", "MALFORMED_JSON", "UNSUPPORTED_MEDIA_TYPE", "ROUTE_NOT_FOUND", "SIMULATOR_RUT_NOT_OWNED", "SIMULATOR_CAF_OVERLAP"],
});

export const simulatorCafRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook }).openapi(grant, async (c) => {
  const body = c.req.valid("json");
  const db = createDb(c.env.DB);
  const own = await ownTestRuts(c, db);
  const rut = normalizeRut(body.rut);
  if (own && !own.includes(rut)) {
    throw new AppError(
      "SIMULATOR_RUT_NOT_OWNED",
      `${rut} is not the RUT of one of your active test-mode companies: a test key gets CAFs only for its own companies. Create the test company first (POST /api/companies with this key), or ask for one of yours.`,
      [{ field: "rut", message: "Not one of your test-mode companies" }],
    );
  }
  const caf = await grantSimulatorCaf(db, {
    rut: body.rut,
    documentType: body.document_type,
    from: body.from,
    to: body.to,
    quantity: body.quantity,
    legalName: body.legal_name,
  });
  return new Response(caf.xml as Uint8Array<ArrayBuffer>, {
    status: 200,
    headers: {
      "Content-Type": "application/xml; charset=ISO-8859-1",
      "Content-Disposition": `attachment; filename="CAF_${body.document_type}_${caf.from}-${caf.to}.xml"`,
    },
  }) as never;
});
