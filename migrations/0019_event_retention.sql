-- Issue 16: retention of events and deliveries (30 days, src/webhooks/retention.ts). The cron deletes
-- fanned-out events oldest first and the document stores their relayed events and settled deliveries
-- (store schema 8 has the same indexes); both walk created_at.
CREATE INDEX `event_outbox_created_idx` ON `event_outbox` (`created_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_created_idx` ON `webhook_deliveries` (`created_at`);
