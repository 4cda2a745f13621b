-- Issue 16 item 4: lists filtered by status or type (issued documents) and by type, response state or
-- verification outcome (received ones) read their page from an index that ends in the list's order
-- (created_at, id), so a page never walks the company's other documents to find its rows, and the
-- order is total (id breaks ties of created_at). An issue-date range (alone or with a type) sorts only
-- the (created_at, id) keys of its matches, read from an index, before the page's rows are read. The
-- document stores have the same indexes (store schema entry 7; test/stores/schema-twins.test.ts
-- holds the two together).
CREATE INDEX `invoices_company_status_idx` ON `invoices` (`company_id`,`status`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `invoices_company_type_idx` ON `invoices` (`company_id`,`document_type`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `invoices_company_issue_order_idx` ON `invoices` (`company_id`,`issue_date`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `invoices_company_type_issue_idx` ON `invoices` (`company_id`,`document_type`,`issue_date`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `received_documents_company_order_idx` ON `received_documents` (`company_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `received_documents_company_type_idx` ON `received_documents` (`company_id`,`document_type`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `received_documents_company_state_idx` ON `received_documents` (`company_id`,`response_state`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `received_documents_company_verification_idx` ON `received_documents` (`company_id`,`reception_status`,`created_at`,`id`);
