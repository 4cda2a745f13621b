-- Reception (issue 12): documents received from suppliers, keyed by company; the inbound messages
-- (upload, e-mail) that brought them, with their outcome.
CREATE TABLE `received_documents` (
  `id` text PRIMARY KEY NOT NULL,
  `company_id` text NOT NULL,
  `issuer_rut` text NOT NULL,
  `document_type` integer NOT NULL,
  `folio` integer NOT NULL,
  `issue_date` text,
  `total` text,
  `recipient_rut` text,
  `channel` text NOT NULL,
  `message_id` text,
  `xml_key` text,
  `xml_sha256` text,
  `reception_status` integer,
  `checks` text,
  `summary` text,
  `duplicate` integer DEFAULT 0 NOT NULL,
  `sii_received_at` text,
  `response_deadline` text,
  `response_state` text DEFAULT 'PENDING' NOT NULL,
  `responses` text DEFAULT '[]' NOT NULL,
  `created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
  `updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
CREATE UNIQUE INDEX `received_documents_key_uq` ON `received_documents` (`company_id`,`issuer_rut`,`document_type`,`folio`,`xml_sha256`);
CREATE INDEX `received_documents_company_idx` ON `received_documents` (`company_id`,`created_at`);
CREATE INDEX `received_documents_deadline_idx` ON `received_documents` (`response_state`,`response_deadline`);

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
);
CREATE INDEX `inbound_messages_company_idx` ON `inbound_messages` (`company_id`,`created_at`);

CREATE TABLE `reception_addresses` (
  `company_id` text PRIMARY KEY NOT NULL,
  `token` text NOT NULL,
  `polled_at` text
);
CREATE UNIQUE INDEX `reception_addresses_token_uq` ON `reception_addresses` (`token`);
