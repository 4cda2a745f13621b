CREATE TABLE `sim_documents` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`track_id` integer NOT NULL,
	`issuer_rut` text NOT NULL,
	`document_type` integer NOT NULL,
	`folio` integer NOT NULL,
	`receiver_rut` text NOT NULL,
	`issue_date` text NOT NULL,
	`total` text NOT NULL,
	`status` text NOT NULL,
	`errors` text DEFAULT '[]' NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `sim_documents_folio_idx` ON `sim_documents` (`issuer_rut`,`document_type`,`folio`);--> statement-breakpoint
CREATE INDEX `sim_documents_track_idx` ON `sim_documents` (`track_id`);--> statement-breakpoint
CREATE TABLE `sim_envios` (
	`track_id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`channel` text NOT NULL,
	`company_rut` text NOT NULL,
	`sender_rut` text NOT NULL,
	`kind` text NOT NULL,
	`file_name` text NOT NULL,
	`file_sha256` text NOT NULL,
	`file_size` integer NOT NULL,
	`received_at` text NOT NULL,
	`final_status` text NOT NULL,
	`final_glosa` text NOT NULL,
	`errors` text DEFAULT '[]' NOT NULL,
	`stats` text DEFAULT '[]' NOT NULL,
	`polls` integer DEFAULT 0 NOT NULL,
	`hold_polls` integer DEFAULT 0 NOT NULL,
	`hold_until` text,
	`scenario` text
);
--> statement-breakpoint
CREATE INDEX `sim_envios_file_idx` ON `sim_envios` (`company_rut`,`file_sha256`);--> statement-breakpoint
CREATE TABLE `sim_scenarios` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`mode` text NOT NULL,
	`remaining` integer,
	`rut` text,
	`client_id` text,
	`delay_polls` integer,
	`delay_seconds` integer,
	`failure` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `sim_seeds` (
	`seed` text PRIMARY KEY NOT NULL,
	`channel` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`used_at` text
);
--> statement-breakpoint
CREATE TABLE `sim_tokens` (
	`token` text PRIMARY KEY NOT NULL,
	`channel` text NOT NULL,
	`rut` text NOT NULL,
	`cert_fingerprint` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`expires_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `sim_tokens_rut_idx` ON `sim_tokens` (`rut`);