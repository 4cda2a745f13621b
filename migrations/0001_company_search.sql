ALTER TABLE `companies` ADD `legal_name_search` text DEFAULT '' NOT NULL;--> statement-breakpoint
-- Backfill: ASCII lower-case is the best SQLite can do; new and updated rows get the full form.
UPDATE `companies` SET `legal_name_search` = lower(`legal_name`);
