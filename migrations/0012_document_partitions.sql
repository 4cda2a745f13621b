-- Issue 16: the directory of per-company document-store partitions (Durable Objects, one per company
-- and partition). One row per company and partition; at most one open partition per company.
CREATE TABLE `document_partitions` (
	`company_id` text NOT NULL,
	`ordinal` integer NOT NULL,
	`store_name` text NOT NULL,
	`period` text NOT NULL,
	`opened_at` text NOT NULL,
	`closed_at` text,
	`closed_reason` text,
	`size_bytes` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`company_id`, `ordinal`)
);--> statement-breakpoint
CREATE UNIQUE INDEX `document_partitions_open_uq` ON `document_partitions` (`company_id`) WHERE closed_at IS NULL;--> statement-breakpoint
CREATE INDEX `document_partitions_open_idx` ON `document_partitions` (`closed_at`);
