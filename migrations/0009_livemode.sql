-- Test and live mode (issue 17 item 1). Every API key, company and webhook endpoint belongs to one
-- mode; everything below a company inherits the company's. Existing rows become test mode (0).
ALTER TABLE `api_keys` ADD `livemode` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `companies` ADD `livemode` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `webhook_endpoints` ADD `livemode` integer DEFAULT false NOT NULL;--> statement-breakpoint
DROP INDEX `companies_active_tax_id_uq`;--> statement-breakpoint
CREATE UNIQUE INDEX `companies_active_tax_id_uq` ON `companies` (`client_id`,`livemode`,`country`,`tax_id`) WHERE status = 'ACTIVE';--> statement-breakpoint
DROP INDEX `companies_client_idx`;--> statement-breakpoint
CREATE INDEX `companies_client_idx` ON `companies` (`client_id`,`livemode`,`status`,`created_at`,`id`);
