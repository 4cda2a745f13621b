/**
 * Drizzle tables that exist only in the document stores, never in D1 (so they stay outside
 * src/db/schema, which drizzle-kit turns into D1 migrations). The moved tables themselves are the
 * D1 ones of src/db/schema, with the same names and columns in the stores.
 */
import { sql } from "drizzle-orm";
import { sqliteTable, text } from "drizzle-orm/sqlite-core";

/** In a company's index store (`<companyId>:index`): the document that holds each external_reference. */
export const externalReferences = sqliteTable("external_references", {
  reference: text("reference").primaryKey(),
  invoiceId: text("invoice_id").notNull(),
  createdAt: text("created_at").notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`),
});
