-- Issue 16 item 4 (found by `npm run bench -- reads`): with many documents in one company, a lookup
-- by external_reference, by folio without its type, or by issue date scanned every document of the
-- company. The unique index on external_reference is partial (it leaves out FAILED documents), so
-- the planner cannot use it for `external_reference = ?`, which also finds FAILED ones; the folio
-- index starts with the document type; nothing indexed the issue date. These columns are written
-- once per document (the folio once when assigned), so the indexes add no work to status changes.
-- The first two end in the list order (created_at, id): without it the planner prefers walking the
-- company's documents in that order to sorting the few matches (seen in EXPLAIN QUERY PLAN).
CREATE INDEX `invoices_company_reference_idx` ON `invoices` (`company_id`,`external_reference`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `invoices_company_folio_only_idx` ON `invoices` (`company_id`,`folio`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `invoices_company_issue_date_idx` ON `invoices` (`company_id`,`issue_date`);
