-- Issue 16: progress of copying the moved D1 tables into the document stores (one row per table;
-- the cursor is the last primary key copied).
CREATE TABLE `store_migration` (
	`table_name` text PRIMARY KEY NOT NULL,
	`cursor` text DEFAULT '' NOT NULL,
	`copied` integer DEFAULT 0 NOT NULL,
	`skipped` integer DEFAULT 0 NOT NULL,
	`finished_at` text
);
