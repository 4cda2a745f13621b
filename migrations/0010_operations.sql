-- Issue 15 (items 5 and 7).
-- Master key rotation: one row per key version the stored secrets are being re-sealed to. The
-- re-sealing walks certificates, webhook endpoints and CAFs in id order; `phase` and `cursor` say
-- where it stopped, so a run that dies resumes there, and a finished version is never walked again.
CREATE TABLE IF NOT EXISTS key_rotations (
  version INTEGER PRIMARY KEY NOT NULL,
  phase TEXT NOT NULL DEFAULT 'certificates', -- certificates | webhooks | cafs | done
  cursor TEXT NOT NULL DEFAULT '',
  resealed INTEGER NOT NULL DEFAULT 0,
  started_at TEXT NOT NULL,
  finished_at TEXT
);

-- Queue messages that exhausted their retries (the dead-letter queues' consumers record them here):
-- listed per company and re-driven to their queue on request. Bodies carry ids only.
CREATE TABLE IF NOT EXISTS dead_letters (
  id TEXT PRIMARY KEY NOT NULL,
  queue TEXT NOT NULL, -- issuance | webhooks
  message_id TEXT NOT NULL,
  company_id TEXT NOT NULL,
  body TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  status TEXT NOT NULL DEFAULT 'DEAD', -- DEAD | REDRIVEN
  created_at TEXT NOT NULL,
  redriven_at TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS dead_letters_message_uq ON dead_letters (queue, message_id);
CREATE INDEX IF NOT EXISTS dead_letters_company_idx ON dead_letters (company_id, status, created_at);
