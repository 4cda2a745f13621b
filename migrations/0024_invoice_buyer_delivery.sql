-- The EnvioDTE addressed to the buyer, mailed to its exchange address: its state as JSON and when
-- the next attempt is due. Store schema 13 has the same columns and index.
ALTER TABLE `invoices` ADD `buyer_delivery` text;--> statement-breakpoint
ALTER TABLE `invoices` ADD `buyer_delivery_at` text;--> statement-breakpoint
CREATE INDEX `invoices_buyer_delivery_idx` ON `invoices` (`buyer_delivery_at`) WHERE buyer_delivery_at IS NOT NULL;