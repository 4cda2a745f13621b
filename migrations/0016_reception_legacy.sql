-- Issue 16: received documents of the legacy partition (ids without `_p<n>_`) switch from D1 to the
-- company's document store 0 without losing a write, as the issued documents do (0015): every D1
-- write to `received_documents` marks its row dirty, so the data migration copies it again; once the
-- migration has finished the table (group "reception", src/db/document-store/legacy.ts) D1 refuses
-- writes to it with `LEGACY_MOVED` and the writer writes to the store. Inbound messages need no
-- triggers: those of a company are never written in D1 after the move (only read), and those that
-- matched no company stay in D1 for good.
-- Copied before this migration (without the marks): copied again in full.
UPDATE `store_migration` SET `cursor` = '', `finished_at` = NULL, `copied_at` = NULL WHERE `table_name` = 'received_documents';
--> statement-breakpoint
CREATE TRIGGER `received_documents_legacy_moved_insert` BEFORE INSERT ON `received_documents` WHEN EXISTS (SELECT 1 FROM store_migration WHERE table_name = 'received_documents' AND finished_at IS NOT NULL)
BEGIN SELECT RAISE(ABORT, 'LEGACY_MOVED: received_documents is in the document stores'); END;
--> statement-breakpoint
CREATE TRIGGER `received_documents_legacy_moved_update` BEFORE UPDATE ON `received_documents` WHEN EXISTS (SELECT 1 FROM store_migration WHERE table_name = 'received_documents' AND finished_at IS NOT NULL)
BEGIN SELECT RAISE(ABORT, 'LEGACY_MOVED: received_documents is in the document stores'); END;
--> statement-breakpoint
CREATE TRIGGER `received_documents_legacy_moved_delete` BEFORE DELETE ON `received_documents` WHEN EXISTS (SELECT 1 FROM store_migration WHERE table_name = 'received_documents' AND finished_at IS NOT NULL)
BEGIN SELECT RAISE(ABORT, 'LEGACY_MOVED: received_documents is in the document stores'); END;
--> statement-breakpoint
CREATE TRIGGER `received_documents_legacy_dirty_insert` AFTER INSERT ON `received_documents`
BEGIN INSERT OR REPLACE INTO store_migration_dirty (table_name, row_key, company_id) VALUES ('received_documents', NEW.id, NEW.company_id); END;
--> statement-breakpoint
CREATE TRIGGER `received_documents_legacy_dirty_update` AFTER UPDATE ON `received_documents`
BEGIN INSERT OR REPLACE INTO store_migration_dirty (table_name, row_key, company_id) VALUES ('received_documents', NEW.id, NEW.company_id); END;
--> statement-breakpoint
CREATE TRIGGER `received_documents_legacy_dirty_delete` AFTER DELETE ON `received_documents`
BEGIN INSERT OR REPLACE INTO store_migration_dirty (table_name, row_key, company_id) VALUES ('received_documents', OLD.id, OLD.company_id); END;
