-- When the sweep of reply mails next looks at a received document (src/reception/overdue-mails.ts):
-- the next attempt of a mail of it still PENDING, null when none is. Store schema 15 has the same column and index.
ALTER TABLE `received_documents` ADD `mail_due_at` text;--> statement-breakpoint
CREATE INDEX `received_documents_mail_due_idx` ON `received_documents` (`mail_due_at`) WHERE "received_documents"."mail_due_at" IS NOT NULL;