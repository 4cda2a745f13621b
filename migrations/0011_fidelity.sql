-- Issue 18: the company's SII resolution (FchResol/NroResol of every envelope and the PDF legend),
-- and a FAILED document no longer holds its external_reference (it can be issued again under it).
ALTER TABLE `company_settings` ADD `sii_resolution_number` integer;--> statement-breakpoint
ALTER TABLE `company_settings` ADD `sii_resolution_date` text;--> statement-breakpoint
DROP INDEX `invoices_external_reference_uq`;--> statement-breakpoint
CREATE UNIQUE INDEX `invoices_external_reference_uq` ON `invoices` (`company_id`,`external_reference`) WHERE external_reference IS NOT NULL AND status <> 'FAILED';
