-- The buyer's answer to an accepted factura (33, 34, 43), read from the SII's register of events:
-- state, events, the SII reception time and the 8-day deadline, when it was last and is next read;
-- the checks due, and lists filtered by the answer. Store schema 11 has the same columns and indexes.
ALTER TABLE `invoices` ADD `buyer_state` text;--> statement-breakpoint
ALTER TABLE `invoices` ADD `buyer_events` text;--> statement-breakpoint
ALTER TABLE `invoices` ADD `sii_received_at` text;--> statement-breakpoint
ALTER TABLE `invoices` ADD `buyer_deadline` text;--> statement-breakpoint
ALTER TABLE `invoices` ADD `buyer_checked_at` text;--> statement-breakpoint
ALTER TABLE `invoices` ADD `buyer_check_at` text;--> statement-breakpoint
CREATE INDEX `invoices_buyer_check_idx` ON `invoices` (`buyer_check_at`) WHERE buyer_check_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX `invoices_company_buyer_state_idx` ON `invoices` (`company_id`,`buyer_state`,`created_at`,`id`) WHERE buyer_state IS NOT NULL;