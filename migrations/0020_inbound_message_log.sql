-- The company's log of inbound messages (GET /api/reception/messages): each e-mail's Subject, the log's
-- order (newest first, id as tie-breaker) alone and under its outcome filter, and the received
-- documents each message brought. Store schema 9 has the same column and indexes.
ALTER TABLE `inbound_messages` ADD `subject` text;--> statement-breakpoint
CREATE INDEX `inbound_messages_company_order_idx` ON `inbound_messages` (`company_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `inbound_messages_company_outcome_idx` ON `inbound_messages` (`company_id`,`outcome`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `received_documents_company_message_idx` ON `received_documents` (`company_id`,`message_id`);