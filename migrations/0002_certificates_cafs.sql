CREATE TABLE `cafs` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`document_type` integer NOT NULL,
	`folio_from` integer NOT NULL,
	`folio_to` integer NOT NULL,
	`authorized_on` text NOT NULL,
	`expires_on` text,
	`idk` integer NOT NULL,
	`environment` text NOT NULL,
	`source` text NOT NULL,
	`file_key` text NOT NULL,
	`active` integer DEFAULT true NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `cafs_company_type_idx` ON `cafs` (`company_id`,`document_type`,`folio_from`);--> statement-breakpoint
CREATE UNIQUE INDEX `cafs_range_uq` ON `cafs` (`company_id`,`document_type`,`folio_from`,`folio_to`);--> statement-breakpoint
CREATE TABLE `certificates` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`subject_name` text,
	`holder_rut` text,
	`issuer_name` text,
	`serial_number` text NOT NULL,
	`fingerprint_sha1` text NOT NULL,
	`valid_from` text NOT NULL,
	`valid_to` text NOT NULL,
	`pfx_key` text NOT NULL,
	`password_enc` text NOT NULL,
	`active` integer DEFAULT false NOT NULL,
	`status` text DEFAULT 'STORED' NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`deleted_at` text,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `certificates_company_idx` ON `certificates` (`company_id`,`status`,`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `certificates_fingerprint_uq` ON `certificates` (`company_id`,`fingerprint_sha1`) WHERE status = 'STORED';--> statement-breakpoint
CREATE TABLE `sim_caf_grants` (
	`id` text PRIMARY KEY NOT NULL,
	`rut` text NOT NULL,
	`document_type` integer NOT NULL,
	`folio_from` integer NOT NULL,
	`folio_to` integer NOT NULL,
	`authorized_on` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `sim_caf_grants_idx` ON `sim_caf_grants` (`rut`,`document_type`,`folio_from`);