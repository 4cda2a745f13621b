-- The D1 schema (the control plane): one baseline. Until the first release a schema change edits
-- this file (and the Drizzle tables of drizzle.config.ts), it does not add a migration.
CREATE TABLE `api_key_companies` (
	`api_key_id` text NOT NULL,
	`company_id` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	PRIMARY KEY(`api_key_id`, `company_id`),
	FOREIGN KEY (`api_key_id`) REFERENCES `api_keys`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`client_id` text NOT NULL,
	`user_id` text,
	`name` text NOT NULL,
	`role` text NOT NULL,
	`prefix` text NOT NULL,
	`key_hash` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`last_used_at` text,
	`revoked_at` text, `livemode` integer DEFAULT false NOT NULL,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash_uq` ON `api_keys` (`key_hash`);
--> statement-breakpoint
CREATE INDEX `api_keys_client_idx` ON `api_keys` (`client_id`,`id`);
--> statement-breakpoint
CREATE TABLE `clients` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `companies` (
	`id` text PRIMARY KEY NOT NULL,
	`client_id` text NOT NULL,
	`legal_name` text NOT NULL,
	`tax_id_code` text NOT NULL,
	`tax_id` text NOT NULL,
	`country` text NOT NULL,
	`start_activities_date` text,
	`status` text DEFAULT 'ACTIVE' NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`deleted_at` text, `legal_name_search` text DEFAULT '' NOT NULL, `livemode` integer DEFAULT false NOT NULL, `rate_tier` text DEFAULT 'STANDARD' NOT NULL, `issuer_profile` text,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `company_settings` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`decimal_places` integer DEFAULT 0 NOT NULL,
	`thousand_separator` text DEFAULT '.' NOT NULL,
	`decimal_separator` text DEFAULT ',' NOT NULL,
	`language` text DEFAULT 'es-CL' NOT NULL,
	`time_zone` text DEFAULT 'America/Santiago' NOT NULL,
	`logo_key` text,
	`logo_url` text,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL, `sii_resolution_number` integer, `sii_resolution_date` text,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `company_settings_company_id_unique` ON `company_settings` (`company_id`);
--> statement-breakpoint
CREATE TABLE `event_outbox` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`type` text NOT NULL,
	`dedupe_key` text,
	`payload` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`dispatched_at` text
);
--> statement-breakpoint
CREATE INDEX `event_outbox_pending_idx` ON `event_outbox` (`dispatched_at`,`created_at`);
--> statement-breakpoint
CREATE UNIQUE INDEX `event_outbox_dedupe_uq` ON `event_outbox` (`company_id`,`dedupe_key`);
--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`client_id` text NOT NULL,
	`email` text NOT NULL,
	`name` text NOT NULL,
	`status` text DEFAULT 'ACTIVE' NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`revoked_at` text,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_client_email_uq` ON `users` (`client_id`,`email`);
--> statement-breakpoint
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
CREATE INDEX `cafs_company_type_idx` ON `cafs` (`company_id`,`document_type`,`folio_from`);
--> statement-breakpoint
CREATE UNIQUE INDEX `cafs_range_uq` ON `cafs` (`company_id`,`document_type`,`folio_from`,`folio_to`);
--> statement-breakpoint
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
CREATE INDEX `certificates_company_idx` ON `certificates` (`company_id`,`status`,`created_at`);
--> statement-breakpoint
CREATE UNIQUE INDEX `certificates_fingerprint_uq` ON `certificates` (`company_id`,`fingerprint_sha1`) WHERE status = 'STORED';
--> statement-breakpoint
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
--> statement-breakpoint
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
CREATE INDEX `sim_documents_folio_idx` ON `sim_documents` (`issuer_rut`,`document_type`,`folio`);
--> statement-breakpoint
CREATE INDEX `sim_documents_track_idx` ON `sim_documents` (`track_id`);
--> statement-breakpoint
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
CREATE INDEX `sim_envios_file_idx` ON `sim_envios` (`company_rut`,`file_sha256`);
--> statement-breakpoint
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
--> statement-breakpoint
CREATE TABLE `webhook_endpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`url` text NOT NULL,
	`description` text,
	`events` text NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`disabled_reason` text,
	`secret_enc` text NOT NULL,
	`previous_secret_enc` text,
	`previous_until` text,
	`failing_since` text,
	`status` text DEFAULT 'ACTIVE' NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
, `livemode` integer DEFAULT false NOT NULL);
--> statement-breakpoint
CREATE INDEX `webhook_endpoints_company_idx` ON `webhook_endpoints` (`company_id`,`status`,`created_at`);
--> statement-breakpoint
CREATE INDEX `event_outbox_company_pending_idx` ON `event_outbox` (`company_id`,`dispatched_at`,`created_at`);
--> statement-breakpoint
CREATE TABLE `sim_reception_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`issuer_rut` text NOT NULL,
	`document_type` integer NOT NULL,
	`folio` integer NOT NULL,
	`action` text NOT NULL,
	`responsible_rut` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `sim_reception_events_doc_idx` ON `sim_reception_events` (`issuer_rut`,`document_type`,`folio`);
--> statement-breakpoint
CREATE TABLE `sim_aec_envios` (
	`track_id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`company_rut` text NOT NULL,
	`sender_rut` text NOT NULL,
	`file_sha256` text NOT NULL,
	`file_size` integer NOT NULL,
	`received_at` text NOT NULL,
	`final_status` text NOT NULL,
	`errors` text DEFAULT '[]' NOT NULL,
	`polls` integer DEFAULT 0 NOT NULL,
	`hold_polls` integer DEFAULT 0 NOT NULL,
	`hold_until` text,
	`scenario` text
);
--> statement-breakpoint
CREATE INDEX `sim_aec_envios_company_idx` ON `sim_aec_envios` (`company_rut`,`file_sha256`);
--> statement-breakpoint
CREATE TABLE `sim_cessions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`track_id` integer NOT NULL,
	`issuer_rut` text NOT NULL,
	`document_type` integer NOT NULL,
	`folio` integer NOT NULL,
	`seq` integer NOT NULL,
	`cedent_rut` text NOT NULL,
	`assignee_rut` text NOT NULL,
	`amount` text NOT NULL,
	`last_due_date` text NOT NULL,
	`declaration` integer NOT NULL,
	`area_sha256` text NOT NULL,
	`annotated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sim_cessions_doc_seq_uq` ON `sim_cessions` (`issuer_rut`,`document_type`,`folio`,`seq`);
--> statement-breakpoint
CREATE TABLE `inbound_messages` (
  `id` text PRIMARY KEY NOT NULL,
  `company_id` text,
  `channel` text NOT NULL,
  `sender` text,
  `recipient` text,
  `size` integer NOT NULL,
  `sha256` text,
  `outcome` text NOT NULL,
  `detail` text,
  `documents` integer DEFAULT 0 NOT NULL,
  `created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
, `subject` text, `attachments` text);
--> statement-breakpoint
CREATE INDEX `inbound_messages_company_idx` ON `inbound_messages` (`company_id`,`created_at`);
--> statement-breakpoint
CREATE TABLE `reception_addresses` (
  `company_id` text PRIMARY KEY NOT NULL,
  `token` text NOT NULL,
  `polled_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `reception_addresses_token_uq` ON `reception_addresses` (`token`);
--> statement-breakpoint
CREATE TABLE taxpayer_loads (
  id TEXT PRIMARY KEY NOT NULL,
  source TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'LOADING', -- LOADING | CURRENT | REPLACED
  rows_loaded INTEGER NOT NULL DEFAULT 0,
  rows_rejected INTEGER NOT NULL DEFAULT 0,
  started_at TEXT NOT NULL,
  finished_at TEXT
);
--> statement-breakpoint
CREATE TABLE taxpayer_directory (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  load_id TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
--> statement-breakpoint
CREATE TABLE taxpayers (
  load_id TEXT NOT NULL,
  rut TEXT NOT NULL, -- canonical 76086428-5
  legal_name TEXT NOT NULL,
  resolution_number INTEGER NOT NULL,
  resolution_date TEXT NOT NULL, -- YYYY-MM-DD
  exchange_email TEXT,
  url TEXT,
  PRIMARY KEY (load_id, rut)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE UNIQUE INDEX `companies_active_tax_id_uq` ON `companies` (`client_id`,`livemode`,`country`,`tax_id`) WHERE status = 'ACTIVE';
--> statement-breakpoint
CREATE INDEX `companies_client_idx` ON `companies` (`client_id`,`livemode`,`status`,`created_at`,`id`);
--> statement-breakpoint
CREATE TABLE key_rotations (
  version INTEGER PRIMARY KEY NOT NULL,
  phase TEXT NOT NULL DEFAULT 'certificates', -- certificates | webhooks | cafs | done
  cursor TEXT NOT NULL DEFAULT '',
  resealed INTEGER NOT NULL DEFAULT 0,
  started_at TEXT NOT NULL,
  finished_at TEXT
);
--> statement-breakpoint
CREATE TABLE dead_letters (
  id TEXT PRIMARY KEY NOT NULL,
  queue TEXT NOT NULL, -- issuance | webhooks
  message_id TEXT NOT NULL,
  company_id TEXT NOT NULL,
  body TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  status TEXT NOT NULL DEFAULT 'DEAD', -- DEAD | REDRIVEN
  created_at TEXT NOT NULL,
  redriven_at TEXT
);
--> statement-breakpoint
CREATE UNIQUE INDEX dead_letters_message_uq ON dead_letters (queue, message_id);
--> statement-breakpoint
CREATE INDEX dead_letters_company_idx ON dead_letters (company_id, status, created_at);
--> statement-breakpoint
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
);
--> statement-breakpoint
CREATE UNIQUE INDEX `document_partitions_open_uq` ON `document_partitions` (`company_id`) WHERE closed_at IS NULL;
--> statement-breakpoint
CREATE INDEX `document_partitions_open_idx` ON `document_partitions` (`closed_at`);
--> statement-breakpoint
CREATE INDEX `event_outbox_created_idx` ON `event_outbox` (`created_at`);
--> statement-breakpoint
CREATE INDEX `inbound_messages_company_order_idx` ON `inbound_messages` (`company_id`,`created_at`,`id`);
--> statement-breakpoint
CREATE INDEX `inbound_messages_company_outcome_idx` ON `inbound_messages` (`company_id`,`outcome`,`created_at`,`id`);
