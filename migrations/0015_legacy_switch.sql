-- Issue 16: the switch of the legacy partition (ids without `_p<n>_`) from D1 to the company's
-- document store loses no write (src/db/document-store/legacy.ts). For each table of the issued
-- documents group:
--   * every write to D1 marks its row in `store_migration_dirty` (a new `seq` each time), so the data
--     migration copies it again after its first copy;
--   * once the migration has recorded the table finished (the group's tables together, in one
--     statement that also checks no row is left dirty), D1 refuses every write to it with
--     `LEGACY_MOVED`: the writer resolves the partition again and writes to the store.
-- D1 serialises writes, so a write either lands before the finish (and is dirty, which holds the
-- finish back until it is copied) or after it (and is refused): none is lost.
ALTER TABLE `store_migration` ADD `copied_at` text;
--> statement-breakpoint
CREATE TABLE `store_migration_dirty` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`table_name` text NOT NULL,
	`row_key` text NOT NULL,
	`company_id` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `store_migration_dirty_row_uq` ON `store_migration_dirty` (`table_name`, `row_key`);
--> statement-breakpoint
-- Tables of the group copied before this migration (without the marks) are copied again in full.
UPDATE `store_migration` SET `cursor` = '', `finished_at` = NULL WHERE `table_name` IN ('invoices', 'invoice_events', 'cancellations', 'envelopes');
--> statement-breakpoint
CREATE TRIGGER `invoices_legacy_moved_insert` BEFORE INSERT ON `invoices` WHEN EXISTS (SELECT 1 FROM store_migration WHERE table_name = 'invoices' AND finished_at IS NOT NULL)
BEGIN SELECT RAISE(ABORT, 'LEGACY_MOVED: invoices is in the document stores'); END;
--> statement-breakpoint
CREATE TRIGGER `invoices_legacy_moved_update` BEFORE UPDATE ON `invoices` WHEN EXISTS (SELECT 1 FROM store_migration WHERE table_name = 'invoices' AND finished_at IS NOT NULL)
BEGIN SELECT RAISE(ABORT, 'LEGACY_MOVED: invoices is in the document stores'); END;
--> statement-breakpoint
CREATE TRIGGER `invoices_legacy_moved_delete` BEFORE DELETE ON `invoices` WHEN EXISTS (SELECT 1 FROM store_migration WHERE table_name = 'invoices' AND finished_at IS NOT NULL)
BEGIN SELECT RAISE(ABORT, 'LEGACY_MOVED: invoices is in the document stores'); END;
--> statement-breakpoint
CREATE TRIGGER `invoices_legacy_dirty_insert` AFTER INSERT ON `invoices`
BEGIN INSERT OR REPLACE INTO store_migration_dirty (table_name, row_key, company_id) VALUES ('invoices', NEW.id, NEW.company_id); END;
--> statement-breakpoint
CREATE TRIGGER `invoices_legacy_dirty_update` AFTER UPDATE ON `invoices`
BEGIN INSERT OR REPLACE INTO store_migration_dirty (table_name, row_key, company_id) VALUES ('invoices', NEW.id, NEW.company_id); END;
--> statement-breakpoint
CREATE TRIGGER `invoices_legacy_dirty_delete` AFTER DELETE ON `invoices`
BEGIN INSERT OR REPLACE INTO store_migration_dirty (table_name, row_key, company_id) VALUES ('invoices', OLD.id, OLD.company_id); END;
--> statement-breakpoint
CREATE TRIGGER `invoice_events_legacy_moved_insert` BEFORE INSERT ON `invoice_events` WHEN EXISTS (SELECT 1 FROM store_migration WHERE table_name = 'invoice_events' AND finished_at IS NOT NULL)
BEGIN SELECT RAISE(ABORT, 'LEGACY_MOVED: invoice_events is in the document stores'); END;
--> statement-breakpoint
CREATE TRIGGER `invoice_events_legacy_moved_update` BEFORE UPDATE ON `invoice_events` WHEN EXISTS (SELECT 1 FROM store_migration WHERE table_name = 'invoice_events' AND finished_at IS NOT NULL)
BEGIN SELECT RAISE(ABORT, 'LEGACY_MOVED: invoice_events is in the document stores'); END;
--> statement-breakpoint
CREATE TRIGGER `invoice_events_legacy_moved_delete` BEFORE DELETE ON `invoice_events` WHEN EXISTS (SELECT 1 FROM store_migration WHERE table_name = 'invoice_events' AND finished_at IS NOT NULL)
BEGIN SELECT RAISE(ABORT, 'LEGACY_MOVED: invoice_events is in the document stores'); END;
--> statement-breakpoint
CREATE TRIGGER `invoice_events_legacy_dirty_insert` AFTER INSERT ON `invoice_events`
BEGIN INSERT OR REPLACE INTO store_migration_dirty (table_name, row_key, company_id) VALUES ('invoice_events', NEW.id, (SELECT company_id FROM invoices WHERE id = NEW.invoice_id)); END;
--> statement-breakpoint
CREATE TRIGGER `invoice_events_legacy_dirty_update` AFTER UPDATE ON `invoice_events`
BEGIN INSERT OR REPLACE INTO store_migration_dirty (table_name, row_key, company_id) VALUES ('invoice_events', NEW.id, (SELECT company_id FROM invoices WHERE id = NEW.invoice_id)); END;
--> statement-breakpoint
CREATE TRIGGER `invoice_events_legacy_dirty_delete` AFTER DELETE ON `invoice_events`
BEGIN INSERT OR REPLACE INTO store_migration_dirty (table_name, row_key, company_id) VALUES ('invoice_events', OLD.id, (SELECT company_id FROM invoices WHERE id = OLD.invoice_id)); END;
--> statement-breakpoint
CREATE TRIGGER `cancellations_legacy_moved_insert` BEFORE INSERT ON `cancellations` WHEN EXISTS (SELECT 1 FROM store_migration WHERE table_name = 'cancellations' AND finished_at IS NOT NULL)
BEGIN SELECT RAISE(ABORT, 'LEGACY_MOVED: cancellations is in the document stores'); END;
--> statement-breakpoint
CREATE TRIGGER `cancellations_legacy_moved_update` BEFORE UPDATE ON `cancellations` WHEN EXISTS (SELECT 1 FROM store_migration WHERE table_name = 'cancellations' AND finished_at IS NOT NULL)
BEGIN SELECT RAISE(ABORT, 'LEGACY_MOVED: cancellations is in the document stores'); END;
--> statement-breakpoint
CREATE TRIGGER `cancellations_legacy_moved_delete` BEFORE DELETE ON `cancellations` WHEN EXISTS (SELECT 1 FROM store_migration WHERE table_name = 'cancellations' AND finished_at IS NOT NULL)
BEGIN SELECT RAISE(ABORT, 'LEGACY_MOVED: cancellations is in the document stores'); END;
--> statement-breakpoint
CREATE TRIGGER `cancellations_legacy_dirty_insert` AFTER INSERT ON `cancellations`
BEGIN INSERT OR REPLACE INTO store_migration_dirty (table_name, row_key, company_id) VALUES ('cancellations', NEW.cancelled_invoice_id, (SELECT company_id FROM invoices WHERE id = NEW.cancelled_invoice_id)); END;
--> statement-breakpoint
CREATE TRIGGER `cancellations_legacy_dirty_update` AFTER UPDATE ON `cancellations`
BEGIN INSERT OR REPLACE INTO store_migration_dirty (table_name, row_key, company_id) VALUES ('cancellations', NEW.cancelled_invoice_id, (SELECT company_id FROM invoices WHERE id = NEW.cancelled_invoice_id)); END;
--> statement-breakpoint
CREATE TRIGGER `cancellations_legacy_dirty_delete` AFTER DELETE ON `cancellations`
BEGIN INSERT OR REPLACE INTO store_migration_dirty (table_name, row_key, company_id) VALUES ('cancellations', OLD.cancelled_invoice_id, (SELECT company_id FROM invoices WHERE id = OLD.cancelled_invoice_id)); END;
--> statement-breakpoint
CREATE TRIGGER `envelopes_legacy_moved_insert` BEFORE INSERT ON `envelopes` WHEN EXISTS (SELECT 1 FROM store_migration WHERE table_name = 'envelopes' AND finished_at IS NOT NULL)
BEGIN SELECT RAISE(ABORT, 'LEGACY_MOVED: envelopes is in the document stores'); END;
--> statement-breakpoint
CREATE TRIGGER `envelopes_legacy_moved_update` BEFORE UPDATE ON `envelopes` WHEN EXISTS (SELECT 1 FROM store_migration WHERE table_name = 'envelopes' AND finished_at IS NOT NULL)
BEGIN SELECT RAISE(ABORT, 'LEGACY_MOVED: envelopes is in the document stores'); END;
--> statement-breakpoint
CREATE TRIGGER `envelopes_legacy_moved_delete` BEFORE DELETE ON `envelopes` WHEN EXISTS (SELECT 1 FROM store_migration WHERE table_name = 'envelopes' AND finished_at IS NOT NULL)
BEGIN SELECT RAISE(ABORT, 'LEGACY_MOVED: envelopes is in the document stores'); END;
--> statement-breakpoint
CREATE TRIGGER `envelopes_legacy_dirty_insert` AFTER INSERT ON `envelopes`
BEGIN INSERT OR REPLACE INTO store_migration_dirty (table_name, row_key, company_id) VALUES ('envelopes', NEW.id, NEW.company_id); END;
--> statement-breakpoint
CREATE TRIGGER `envelopes_legacy_dirty_update` AFTER UPDATE ON `envelopes`
BEGIN INSERT OR REPLACE INTO store_migration_dirty (table_name, row_key, company_id) VALUES ('envelopes', NEW.id, NEW.company_id); END;
--> statement-breakpoint
CREATE TRIGGER `envelopes_legacy_dirty_delete` AFTER DELETE ON `envelopes`
BEGIN INSERT OR REPLACE INTO store_migration_dirty (table_name, row_key, company_id) VALUES ('envelopes', OLD.id, OLD.company_id); END;
