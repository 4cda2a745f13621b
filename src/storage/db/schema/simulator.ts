/**
 * State of the built-in SII simulator (SII_MODE=simulator only; see src/countries/cl/simulator).
 * Every table is prefixed `sim_` and holds nothing a real deployment needs. Times are ISO 8601 UTC.
 */
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`;

/** Seeds handed out by CrSeed.getSeed / boleta.electronica.semilla; valid 2 minutes, single use. */
export const simSeeds = sqliteTable("sim_seeds", {
  seed: text("seed").primaryKey(),
  channel: text("channel", { enum: ["soap", "rest"] }).notNull(),
  createdAt: text("created_at").notNull().default(now),
  usedAt: text("used_at"),
});

/** Tokens issued for a signed seed: who authenticated (certificate holder) and until when. */
export const simTokens = sqliteTable(
  "sim_tokens",
  {
    token: text("token").primaryKey(),
    channel: text("channel", { enum: ["soap", "rest"] }).notNull(),
    rut: text("rut").notNull(),
    certFingerprint: text("cert_fingerprint").notNull(),
    createdAt: text("created_at").notNull().default(now),
    expiresAt: text("expires_at").notNull(),
  },
  (t) => [index("sim_tokens_rut_idx").on(t.rut)],
);

/** Uploaded envelopes (DTEUpload / boleta REST) with their final verdict, revealed over polls or time. */
export const simEnvios = sqliteTable(
  "sim_envios",
  {
    trackId: integer("track_id").primaryKey({ autoIncrement: true }),
    channel: text("channel", { enum: ["soap", "rest"] }).notNull(),
    companyRut: text("company_rut").notNull(),
    senderRut: text("sender_rut").notNull(),
    kind: text("kind").notNull(),
    fileName: text("file_name").notNull(),
    fileSha256: text("file_sha256").notNull(),
    fileSize: integer("file_size").notNull(),
    receivedAt: text("received_at").notNull(),
    /** EPR, or the envelope rejection RSC / RFR / RCT. */
    finalStatus: text("final_status").notNull(),
    finalGlosa: text("final_glosa").notNull(),
    /** JSON: envelope-level error lines. */
    errors: text("errors").notNull().default("[]"),
    /** JSON: [{type, informed, accepted, rejected, objected}]. */
    stats: text("stats").notNull().default("[]"),
    /** QueryEstUp / REST status calls so far (each advances the visible state one step). */
    polls: integer("polls").notNull().default(0),
    /** Scenario "delay": polls to stay in REC/SOK, and/or a time before which it stays there. */
    holdPolls: integer("hold_polls").notNull().default(0),
    holdUntil: text("hold_until"),
    /** Scenario applied to this envelope, if any. */
    scenario: text("scenario"),
  },
  (t) => [index("sim_envios_file_idx").on(t.companyRut, t.fileSha256)],
);

/** Documents of the uploaded envelopes with their verdict (DOK / RLV / RCH) and reasons. */
export const simDocuments = sqliteTable(
  "sim_documents",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    trackId: integer("track_id").notNull(),
    issuerRut: text("issuer_rut").notNull(),
    documentType: integer("document_type").notNull(),
    folio: integer("folio").notNull(),
    receiverRut: text("receiver_rut").notNull(),
    issueDate: text("issue_date").notNull(),
    total: text("total").notNull(),
    status: text("status", { enum: ["DOK", "RLV", "RCH"] }).notNull(),
    /** JSON: reason lines ("CODE description"). */
    errors: text("errors").notNull().default("[]"),
    createdAt: text("created_at").notNull().default(now),
  },
  (t) => [index("sim_documents_folio_idx").on(t.issuerRut, t.documentType, t.folio), index("sim_documents_track_idx").on(t.trackId)],
);

/** Scenario control (POST /simulator/sii/scenario): the newest matching row applies. */
export const simScenarios = sqliteTable("sim_scenarios", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  mode: text("mode", { enum: ["accept", "reject", "object", "delay", "down"] }).notNull(),
  /** Uploads (or, for down, calls) still affected; null = until reset. */
  remaining: integer("remaining"),
  /** Company RUT filter (canonical); null = every company. */
  rut: text("rut"),
  /**
   * The API client that set it: only that client's calls see and apply it. Null: the one implicit
   * owner of local development, where the simulator is open without a key.
   */
  clientId: text("client_id"),
  delayPolls: integer("delay_polls"),
  delaySeconds: integer("delay_seconds"),
  /** Mode "down": how calls fail — http503 (default), error500 (HTTP 200 "Error 500" body, as the SII gateway does) or reset (the connection drops mid-answer). */
  failure: text("failure", { enum: ["http503", "error500", "reset"] }),
  createdAt: text("created_at").notNull().default(now),
});

/** Accept/claim events recorded through the simulated RegistroReclamoDteService (reception of documents). */
export const simReceptionEvents = sqliteTable(
  "sim_reception_events",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    issuerRut: text("issuer_rut").notNull(),
    documentType: integer("document_type").notNull(),
    folio: integer("folio").notNull(),
    /** ACD, ERM, RCD, RFP, RFT. */
    action: text("action").notNull(),
    /** The authenticated person (certificate holder) who recorded it. */
    responsibleRut: text("responsible_rut").notNull(),
    createdAt: text("created_at").notNull().default(now),
  },
  (t) => [index("sim_reception_events_doc_idx").on(t.issuerRut, t.documentType, t.folio)],
);

/** AEC files uploaded to the simulated register of cessions (RPETC), with their verdict revealed over polls or time. */
export const simAecEnvios = sqliteTable(
  "sim_aec_envios",
  {
    trackId: integer("track_id").primaryKey({ autoIncrement: true }),
    companyRut: text("company_rut").notNull(),
    senderRut: text("sender_rut").notNull(),
    fileSha256: text("file_sha256").notNull(),
    fileSize: integer("file_size").notNull(),
    receivedAt: text("received_at").notNull(),
    /** EOK, or the rejection RSC / RFS / RCR / RDC / RCS. */
    finalStatus: text("final_status").notNull(),
    /** JSON: the reasons of a rejection (what the SII mails to emailNotif). */
    errors: text("errors").notNull().default("[]"),
    polls: integer("polls").notNull().default(0),
    holdPolls: integer("hold_polls").notNull().default(0),
    holdUntil: text("hold_until"),
    scenario: text("scenario"),
  },
  (t) => [index("sim_aec_envios_company_idx").on(t.companyRut, t.fileSha256)],
);

/** Cessions annotated in the simulated register: one row per cession of a document, in sequence. */
export const simCessions = sqliteTable(
  "sim_cessions",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    trackId: integer("track_id").notNull(),
    issuerRut: text("issuer_rut").notNull(),
    documentType: integer("document_type").notNull(),
    folio: integer("folio").notNull(),
    seq: integer("seq").notNull(),
    cedentRut: text("cedent_rut").notNull(),
    assigneeRut: text("assignee_rut").notNull(),
    amount: text("amount").notNull(),
    lastDueDate: text("last_due_date").notNull(),
    declaration: integer("declaration", { mode: "boolean" }).notNull(),
    /** The digest of the cession's signed area, which a later re-cession must carry unchanged. */
    areaSha256: text("area_sha256").notNull(),
    annotatedAt: text("annotated_at").notNull(),
  },
  (t) => [uniqueIndex("sim_cessions_doc_seq_uq").on(t.issuerRut, t.documentType, t.folio, t.seq)],
);
