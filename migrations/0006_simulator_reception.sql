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
