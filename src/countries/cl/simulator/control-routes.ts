/**
 * The simulated SII's control operations in the OpenAPI document (tag Simulator): scenarios and
 * reception/inject, the ones the README and docs/simulator.md use. The simulator's own app (./app.ts)
 * answers them with its own checks and messages, exactly as through the /simulator/sii/* catch-all:
 * these definitions describe them and hand each request to it unchanged.
 */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { defineRoute, MAX_BODY_BYTES } from "../../../http/route";
import { json } from "../../../http/openapi/common";
import type { AppEnv } from "../../../http/types";
import { buyerEnvelopeXmlExample } from "../../../http/openapi/xml-examples";
import { simulatorApp } from "./app";
import { scenarioSchema } from "./scenario";

const ACCESS = "Open in local development (`ENVIRONMENT=development`, `SII_MODE=simulator`); in any other deployment only with a test key in `X-Api-Key` (`dte_test_…`), 404 otherwise.";
const KEY_NOTE = "A test key in `X-Api-Key` outside local development (above).";
const OWNED = "Scenarios belong to the API client that set them: GET, DELETE and the calls they apply to are that client's only.";

const ScenarioSchema = z
  .object({
    id: z.number().int(),
    mode: z.enum(["accept", "reject", "object", "delay", "down"]),
    remaining: z.number().int().nullable().describe("Uploads (for `down`: calls) it still applies to; null until DELETE."),
    rut: z.string().nullable().describe("Only this company's uploads; null for all of the client's."),
    polls: z.number().int().nullable().optional().describe("`delay`: polls to stay in REC/SOK."),
    seconds: z.number().int().nullable().optional().describe("`delay`: seconds to stay in REC/SOK."),
    failure: z.enum(["http503", "error500", "reset"]).nullable().optional().describe("`down`: how calls fail."),
    created_at: z.string(),
  })
  .openapi("SimulatorScenario");

const scenarioExample = { id: 7, mode: "down", remaining: 5, rut: "76086428-5", failure: "http503", created_at: "2026-11-27 13:40:00" };

const InjectedSchema = z
  .object({
    track_id: z.number().int().describe("The simulated SII's track id of the envelope."),
    received_at: z.string().describe("The SII reception time recorded (the start of the recipient's 8 days)."),
    documents: z.array(
      z.object({
        issuer_rut: z.string(),
        document_type: z.number().int(),
        folio: z.number().int(),
        receiver_rut: z.string(),
        issue_date: z.string(),
        total: z.string(),
        registered: z.boolean().describe("In the register the recipient reads (not for a document the checks rejected)."),
        status: z.enum(["DOK", "RLV", "RCH"]),
        errors: z.array(z.string()),
      }),
    ),
  })
  .openapi("SimulatorInjected");

const listScenarios = defineRoute({
  method: "get",
  path: "/simulator/sii/scenario",
  tags: ["Simulator"],
  summary: "Simulator: list active scenarios",
  description: `The scenarios that apply to the calling client's simulated SII calls, newest first. ${ACCESS} ${OWNED}`,
  public: true,
  keyNote: KEY_NOTE,
  responses: { 200: { description: "The active scenarios", ...json(z.object({ data: z.array(ScenarioSchema) }).openapi("SimulatorScenarioList"), { data: [scenarioExample] }) } },
  errors: ["ROUTE_NOT_FOUND"],
});

const addScenario = defineRoute({
  method: "post",
  path: "/simulator/sii/scenario",
  tags: ["Simulator"],
  summary: "Simulator: set a scenario",
  description: `Makes the simulated SII answer the next uploads (or calls) another way, to try every path: \`accept\` (normal checks), \`reject\` (every document RCH), \`object\` (documents that pass are accepted with reparos, RLV), \`delay\` (stay in REC/SOK for \`polls\` polls and/or \`seconds\`, default 3 polls), \`down\` (every call but the scenarios and CAF grants fails: \`failure\` http503, the default, error500 or reset). \`count\`: the next n uploads (for \`down\`, calls), until DELETE without it; \`rut\`: only the uploads of that test company of the client. The newest matching scenario applies. ${ACCESS} ${OWNED}`,
  public: true,
  keyNote: KEY_NOTE,
  // The simulator's app applies no limit of its own: the service-wide one holds.
  maxBodyBytes: MAX_BODY_BYTES,
  request: { body: { required: true, ...json(scenarioSchema.openapi("SimulatorScenarioRequest"), { mode: "down", count: 5, rut: "76086428-5", failure: "http503" }) } },
  responses: { 201: { description: "Set", ...json(ScenarioSchema, scenarioExample) } },
  errors: ["VALIDATION_FAILED", "SIMULATOR_RUT_NOT_OWNED", "ROUTE_NOT_FOUND"],
});

const clearScenarios = defineRoute({
  method: "delete",
  path: "/simulator/sii/scenario",
  tags: ["Simulator"],
  summary: "Simulator: clear every scenario",
  description: `Removes the calling client's scenarios: the simulated SII applies its normal checks again. ${ACCESS}`,
  public: true,
  keyNote: KEY_NOTE,
  responses: { 200: { description: "Removed", ...json(z.object({ deleted: z.number().int().describe("How many were removed.") }).openapi("SimulatorScenariosCleared"), { deleted: 1 }) } },
  errors: ["ROUTE_NOT_FOUND"],
});

const inject = defineRoute({
  method: "post",
  path: "/simulator/sii/reception/inject",
  tags: ["Simulator"],
  summary: "Simulator: register a supplier's envelope",
  description: `Takes a signed EnvioDTE as if its issuer had uploaded it to the SII: the upload's checks run (schema, signatures, stamp against its CAF, Carátula, repeated folios; production CAFs are trusted too), and every document that passes enters the register its recipient reads, with \`received_at\` as the SII reception time, so a receiving company finds it (docs/simulator.md#reception). \`withhold_xml=true\` registers them without keeping the XML, as the real SII does (the recipient sees them NOT_YET_RECEIVED until the supplier's mail or an upload). A refused envelope answers 400 with the SII's reasons. Under a \`down\` scenario it fails as the SII would. ${ACCESS}`,
  public: true,
  keyNote: KEY_NOTE,
  maxBodyBytes: MAX_BODY_BYTES,
  request: {
    query: z.object({
      received_at: z.string().optional().openapi({ param: { name: "received_at", in: "query" }, description: "ISO 8601 date-time to record as the SII reception time (default: now).", example: "2026-11-27T10:31:06-03:00" }),
      withhold_xml: z.enum(["true", "false"]).optional().openapi({ param: { name: "withhold_xml", in: "query" }, description: "true: register without keeping the XML." }),
    }),
    body: { required: true, content: { "text/xml": { schema: z.string().openapi({ description: "The signed EnvioDTE (ISO-8859-1 or UTF-8 as declared), at most 2 MiB." }), example: buyerEnvelopeXmlExample } } },
  },
  responses: {
    201: {
      description: "Registered",
      ...json(InjectedSchema, {
        track_id: 6512349001,
        received_at: "2026-11-27T13:31:06.000Z",
        documents: [{ issuer_rut: "76086428-5", document_type: 33, folio: 1042, receiver_rut: "96790240-3", issue_date: "2026-11-27", total: "1190000", registered: true, status: "DOK", errors: [] }],
      }),
    },
  },
  errors: ["VALIDATION_FAILED", "PAYLOAD_TOO_LARGE", "ROUTE_NOT_FOUND"],
});

/** The operations above as the document lists them, for the tests that walk every operation. */
export const SIMULATOR_CONTROL_ROUTES = [listScenarios, addScenario, clearScenarios, inject].map((r) => `${r.method.toUpperCase()} ${r.path}`);

function forward(c: Context<AppEnv>): Promise<Response> {
  let ctx: Context["executionCtx"] | undefined;
  try {
    ctx = c.executionCtx;
  } catch {
    ctx = undefined; // app.fetch called without a context (tests, in-process SII client)
  }
  return Promise.resolve(simulatorApp.fetch(c.req.raw, c.env, ctx));
}

export const simulatorControlRoutes = new OpenAPIHono<AppEnv>();
for (const route of [listScenarios, addScenario, clearScenarios, inject]) {
  simulatorControlRoutes.openAPIRegistry.registerPath(route as never);
  simulatorControlRoutes.on(route.method.toUpperCase(), route.path, forward);
}
