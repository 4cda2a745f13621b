-- Directory of taxpayers authorised to issue DTE (SII list: RUT;RAZON SOCIAL;NUMERO RESOLUCION;
-- FECHA RESOLUCION;MAIL INTERCAMBIO;URL). Loads are versioned: an import writes every row under a
-- new load_id and, only when all rows are in, points taxpayer_directory at it in one statement;
-- rows of older or unfinished loads are then deleted. A lookup never sees a half-loaded list.
CREATE TABLE IF NOT EXISTS taxpayer_loads (
  id TEXT PRIMARY KEY NOT NULL,
  source TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'LOADING', -- LOADING | CURRENT | REPLACED
  rows_loaded INTEGER NOT NULL DEFAULT 0,
  rows_rejected INTEGER NOT NULL DEFAULT 0,
  started_at TEXT NOT NULL,
  finished_at TEXT
);

CREATE TABLE IF NOT EXISTS taxpayer_directory (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  load_id TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS taxpayers (
  load_id TEXT NOT NULL,
  rut TEXT NOT NULL, -- canonical 76086428-5
  legal_name TEXT NOT NULL,
  resolution_number INTEGER NOT NULL,
  resolution_date TEXT NOT NULL, -- YYYY-MM-DD
  exchange_email TEXT,
  url TEXT,
  PRIMARY KEY (load_id, rut)
) WITHOUT ROWID;
