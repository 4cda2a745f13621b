-- Issue 16 (ops). 1: each company's rate tier (STANDARD or HIGH_VOLUME), set by an operator
-- (`npm run companies:tier`): which rate limiting bindings count its requests.
ALTER TABLE `companies` ADD `rate_tier` text DEFAULT 'STANDARD' NOT NULL;--> statement-breakpoint
-- 2: progress of one-time cron walks, e.g. arming every document store's alarm once
-- (the stores re-drive their own overdue webhook deliveries). One row per walk; the cursor is where
-- the last run stopped.
CREATE TABLE `cron_cursors` (
	`job` text PRIMARY KEY NOT NULL,
	`cursor` text DEFAULT '' NOT NULL,
	`done` integer DEFAULT 0 NOT NULL,
	`finished_at` text
);
