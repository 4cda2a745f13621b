-- Each inbound message's attachments, or the uploaded file: name, type, size and how it was read
-- (JSON; GET /api/reception/messages). Store schema 10 has the same column.
ALTER TABLE `inbound_messages` ADD `attachments` text;