import { sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/** The per-company token of its reception e-mail address dte+<token>@<RECEPTION_DOMAIN>, and its register polling mark. */
export const receptionAddresses = sqliteTable(
  "reception_addresses",
  {
    companyId: text("company_id").primaryKey(),
    token: text("token").notNull(),
    /** Last time the cron asked the SII's register for this company's received documents. */
    polledAt: text("polled_at"),
  },
  (t) => [uniqueIndex("reception_addresses_token_uq").on(t.token)],
);
