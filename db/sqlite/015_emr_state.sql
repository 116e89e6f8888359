-- What an EMR module keeps of its own between restarts (src/storage/emr-state.ts), by module and key: the HL7 v2
-- module's acknowledged claims, the EMR's ids it has been told, the (MSH-3, MSH-4, MSH-10) of messages it took.
-- Identifiers only, never a name, phone or message body.
CREATE TABLE emr_state (
  module      TEXT NOT NULL,
  key         TEXT NOT NULL,
  value       TEXT NOT NULL,
  updated_at  INTEGER NOT NULL,
  PRIMARY KEY (module, key)
) WITHOUT ROWID;
