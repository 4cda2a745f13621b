CREATE TABLE `cancellations` (
	`cancelled_invoice_id` text PRIMARY KEY NOT NULL,
	`credit_note_id` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `envelopes` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`kind` text NOT NULL,
	`xml_key` text NOT NULL,
	`document_count` integer NOT NULL,
	`status` text NOT NULL,
	`track_id` text,
	`sii_status` text,
	`polls` integer DEFAULT 0 NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `envelopes_status_idx` ON `envelopes` (`status`,`updated_at`);--> statement-breakpoint
CREATE TABLE `invoice_events` (
	`id` text PRIMARY KEY NOT NULL,
	`invoice_id` text NOT NULL,
	`status` text NOT NULL,
	`fiscal_status` text,
	`message` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `invoice_events_invoice_idx` ON `invoice_events` (`invoice_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `invoices` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`document_type` integer NOT NULL,
	`status` text NOT NULL,
	`fiscal_status` text,
	`fiscal_message` text,
	`folio` integer,
	`caf_id` text,
	`external_reference` text,
	`issue_date` text NOT NULL,
	`recipient_rut` text NOT NULL,
	`recipient_name` text NOT NULL,
	`currency` text NOT NULL,
	`total` text NOT NULL,
	`body` text NOT NULL,
	`stamped_at` text,
	`xml_key` text,
	`envelope_id` text,
	`track_id` text,
	`cancels_invoice_id` text,
	`last_error` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`last_event_id` text,
	`request_id` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `invoices_company_idx` ON `invoices` (`company_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `invoices_status_idx` ON `invoices` (`status`,`updated_at`);--> statement-breakpoint
CREATE INDEX `invoices_folio_idx` ON `invoices` (`company_id`,`document_type`,`folio`);--> statement-breakpoint
CREATE INDEX `invoices_envelope_idx` ON `invoices` (`envelope_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `invoices_external_reference_uq` ON `invoices` (`company_id`,`external_reference`) WHERE external_reference IS NOT NULL;