-- The file that brought a received document (its name, the envelope's SetDTE ID and digest, the
-- Caratula's RUTs; JSON), for the RecepcionEnvio that answers it. Store schema 14 has the same column.
ALTER TABLE `received_documents` ADD `received_file` text;