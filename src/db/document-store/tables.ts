/**
 * Drizzle tables that exist only in the document stores, never in D1 (so they stay outside
 * src/db/schema, which drizzle-kit turns into D1 migrations). The moved tables themselves are the
 * D1 ones of src/db/schema, with the same names and columns in the stores.
 */
import { sql } from "drizzle-orm";
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** In a company's index store (`<companyId>:index`): the document that holds each external_reference. */
export const externalReferences = sqliteTable("external_references", {
  reference: text("reference").primaryKey(),
  invoiceId: text("invoice_id").notNull(),
  createdAt: text("created_at").notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`),
});

/**
 * In a company's index store: the key of every received DTE (issuer, type, folio, SHA-256 of its
 * XML; '' while only the SII's register lists it) and the received document holding it. `seq` orders
 * arrivals: the first document with an (issuer, type, folio) is the original, a later different one a
 * duplicate. A claim is one atomic batch in this store, so concurrent intakes agree (src/reception/keys.ts).
 */
export const receivedKeys = sqliteTable("received_keys", {
  seq: integer("seq").primaryKey(),
  issuerRut: text("issuer_rut").notNull(),
  documentType: integer("document_type").notNull(),
  folio: integer("folio").notNull(),
  xmlSha256: text("xml_sha256").notNull(),
  documentId: text("document_id").notNull(),
  createdAt: text("created_at").notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`),
});
