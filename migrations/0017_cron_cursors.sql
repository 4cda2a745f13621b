-- Issue 16 (ops): progress of one-time cron walks, e.g. arming every document store's alarm once
-- (the stores re-drive their own overdue webhook deliveries). One row per walk; the cursor is where
-- the last run stopped.
CREATE TABLE `cron_cursors` (
	`job` text PRIMARY KEY NOT NULL,
	`cursor` text DEFAULT '' NOT NULL,
	`done` integer DEFAULT 0 NOT NULL,
	`finished_at` text
);
