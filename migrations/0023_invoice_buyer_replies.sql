-- The buyer's own replies to an issued document, mailed or uploaded to the company (RespuestaDTE,
-- EnvioRecibos), read onto it as a JSON list. Store schema 12 has the same column.
ALTER TABLE `invoices` ADD `buyer_replies` text;